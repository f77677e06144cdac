#define _POSIX_C_SOURCE 200809L /* popen */

#include "absent_driver.h"

#include <rig/rig.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "helpers.h"

#ifndef RIG_TOOL
#error "RIG_TOOL, the path of the built rig tool, comes from tests/gpu/CMakeLists.txt"
#endif

const char *absent_reason(const char *name) {
  static char reason[1024];
  rig_device_t *d = NULL;
  rig_status_t s = rig_open(name, NULL, &d);
  if (s == RIG_OK) {
    CHECK_OK(rig_close(d));
    return NULL;
  }
  if (s == RIG_EINVAL && strstr(rig_last_error(), "no driver")) return NULL;
  cr_assert_eq(s, RIG_EOPEN, "open of %s: %s: %s", name, rig_status_name(s), rig_last_error());
  cr_assert_null(d, "a failed open of %s wrote a device", name);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "%s: ", name);
  const char *message = rig_last_error();
  cr_assert(strncmp(message, prefix, strlen(prefix)) == 0, "the reason %s does not name %s", message, name);
  snprintf(reason, sizeof reason, "%s", message + strlen(prefix));
  cr_assert_null(rig_failure(), "a failed open failed the process: %s", rig_failure());
  return reason;
}

void assert_open_fails_again(const char *name, const char *reason) {
  rig_device_t *d = NULL;
  CHECK_FAILS(RIG_EOPEN, rig_open(name, NULL, &d), "%s", name);
  cr_assert_null(d);
  cr_assert(strstr(rig_last_error(), reason), "%s: the reason is %s, not %s", name, rig_last_error(), reason);
  cr_assert_null(rig_failure(), "a failed open failed the process: %s", rig_failure());
}

/* What the probe reported of the names a check looks for. */
typedef struct probed {
  const char *name, *prefix;
  bool cpu, found;
  int with_prefix;
  char why[1024];
} probed_t;

static void note(const char *name, const char *why, void *context) {
  probed_t *p = context;
  if (strcmp(name, "CPU") == 0) p->cpu = why == NULL;
  if (strncmp(name, p->prefix, strlen(p->prefix)) == 0) p->with_prefix++;
  if (strcmp(name, p->name) == 0) {
    p->found = true;
    snprintf(p->why, sizeof p->why, "%s", why ? why : "(openable)");
  }
}

void assert_probe_lists_unavailable(const char *name, const char *prefix, const char *reason) {
  probed_t p = {.name = name, .prefix = prefix};
  CHECK_OK(rig_probe(note, &p));
  cr_assert(p.cpu, "the probe lost the host");
  cr_assert(p.found, "the probe does not list %s", name);
  cr_assert_eq(p.with_prefix, 1, "the probe lists %d %s devices where none opens", p.with_prefix, prefix);
  cr_assert_str_eq(p.why, reason);
}

/* True iff the output of `rig ARGS` has a line equal to expected. */
static bool tool_prints_line(const char *args, const char *expected) {
  char command[512];
  snprintf(command, sizeof command, "%s %s", RIG_TOOL, args);
  FILE *out = popen(command, "r");
  cr_assert_not_null(out, "cannot run %s", command);
  char line[4096];
  bool found = false;
  while (fgets(line, sizeof line, out)) found = found || strcmp(line, expected) == 0;
  cr_assert_eq(pclose(out), 0, "%s failed", command);
  return found;
}

void assert_tool_lists_unavailable(const char *name, const char *reason) {
  char expected[1200];
  snprintf(expected, sizeof expected, "%s: unavailable: %s\n", name, reason);
  cr_assert(tool_prints_line("devices", expected), "rig devices does not print %s", expected);
  cr_assert(tool_prints_line("devices", "CPU\n"), "rig devices does not list the host as available");
  /* The listing puts each entry on a line; the last one has no comma. */
  snprintf(expected, sizeof expected, "  {\"name\": \"%s\", \"available\": false, \"reason\": \"%s\"}", name, reason);
  size_t n = strlen(expected);
  snprintf(expected + n, sizeof expected - n, ",\n");
  bool listed = tool_prints_line("devices --json", expected);
  snprintf(expected + n, sizeof expected - n, "\n");
  cr_assert(listed || tool_prints_line("devices --json", expected), "rig devices --json does not list %s: %s", name,
            reason);
}

void assert_other_devices_work(void) {
  enum { N = 1 << 16 };
  uint8_t *in = allocate_bytes(N), *out = allocate_bytes(N);
  for (int i = 0; i < N; i++) in[i] = (uint8_t)(i * 7 + 3);
  /* Through a simulated GPU's copy engine, then a memory device. */
  rig_device_t *sim = open_named("SIM:0"), *mem = open_named("MEM:0");
  rig_buffer_t *on_sim = create(sim, N), *on_mem = create(mem, N);
  CHECK_OK(rig_buffer_blit_from_bytes(in, N, 0, on_sim, 0, N));
  CHECK_OK(rig_buffer_copy(on_sim, on_mem));
  CHECK_OK(rig_buffer_blit_to_bytes(on_mem, 0, out, N, 0, N));
  cr_assert(memcmp(in, out, N) == 0, "the bytes changed on their way through SIM:0 and MEM:0");
  uint8_t c = 0x5a;
  CHECK_OK(rig_buffer_fill(on_sim, c));
  CHECK_OK(rig_buffer_blit_to_bytes(on_sim, 0, out, N, 0, N));
  cr_assert_eq(all_bytes_are(out, N, &c), 0, "the fill on SIM:0 did not set its bytes");
  rig_buffer_unref(on_sim);
  rig_buffer_unref(on_mem);
  CHECK_OK(rig_close(sim));
  CHECK_OK(rig_close(mem));
  free(in);
  free(out);
  cr_assert_null(rig_failure());
}
