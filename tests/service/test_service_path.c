/* Where a client looks for rigd (rig_service_connect with no socket, and
 * the first open of NAME@rigd): $XDG_RUNTIME_DIR/rig/rigd.sock, then the
 * packaged rigd's /run/rig/rigd.sock; a connect that finds none names every
 * path it tried and what to do. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <rig/rig.h>
#include <rig/service.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYSTEM_SOCKET "/run/rig/rigd.sock"

static char runtime[64];

/* XDG_RUNTIME_DIR is an empty directory of the test's: no user rigd. */
static void no_user_rigd(void) {
  struct stat st;
  if (stat(SYSTEM_SOCKET, &st) == 0) cr_skip_test("a packaged rigd listens at " SYSTEM_SOCKET " on this machine");
  strcpy(runtime, "/tmp/rig-runtime-XXXXXX");
  cr_assert_not_null(mkdtemp(runtime));
  unsetenv("RIG_SERVICE");
  setenv("XDG_RUNTIME_DIR", runtime, 1);
}

static void remove_runtime(void) { rmdir(runtime); }

static void assert_says(const char *message, const char *part) {
  cr_assert(strstr(message, part), "'%s' not in: %s", part, message);
}

/* No rule of RULES.md places rigd's socket (rigd(8) does): with no socket of the
 * user's, the connect also tries the packaged rigd's, and its RIG_EOPEN
 * names both paths, why each failed, and the three ways out. */
Test(service_path, failed_connect_names_every_path_and_what_to_do, .init = no_user_rigd, .fini = remove_runtime) {
  rig_machine_t *m = NULL;
  cr_assert_eq(rig_service_connect(NULL, &m), RIG_EOPEN);
  cr_assert_null(m);
  const char *message = rig_last_error();
  char user_socket[128];
  snprintf(user_socket, sizeof user_socket, "%s/rig/rigd.sock: No such file or directory", runtime);
  assert_says(message, user_socket);
  assert_says(message, SYSTEM_SOCKET ": No such file or directory");
  assert_says(message, "rigd.socket");
  assert_says(message, "group rig");
  assert_says(message, "RIG_SERVICE");
}

/* The first open of NAME@rigd connects the same way and says the same. */
Test(service_path, open_of_a_proxy_says_where_it_looked, .init = no_user_rigd, .fini = remove_runtime) {
  rig_device_t *d = NULL;
  cr_assert_eq(rig_open("MEM:0@rigd", NULL, &d), RIG_EOPEN);
  assert_says(rig_last_error(), SYSTEM_SOCKET);
  assert_says(rig_last_error(), "RIG_SERVICE");
}
