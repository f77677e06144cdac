/* Machines of rig/service.h: each connection to a rigd is a machine with a
 * name of its own for the life of the process ("rigd", then "rigd2", ...),
 * whose devices are proxies named NAME@MACHINE (spec rig.txt, Machines: a
 * library gives each machine it connects to a name of its own for the life
 * of the process, and treats a second connection to one address as another
 * machine; name d is the opener's name with "@MACHINE" appended).  Written
 * in C against the public API, on the rigd of the CTest fixture
 * ($RIG_SERVICE).  Each test runs in a process of its own (Criterion's),
 * which starts with no machine. */
#include <criterion/criterion.h>

#include <rig/rig.h>
#include <rig/service.h>

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static rig_machine_t *connect_machine(void) {
  rig_machine_t *m = NULL;
  rig_status_t status = rig_service_connect(NULL, &m);
  cr_assert(status == RIG_OK && m, "rig_service_connect: %s: %s", rig_status_name(status), rig_last_error());
  return m;
}

static rig_device_t *open_on(rig_machine_t *m, const char *name) {
  rig_device_t *d = NULL;
  rig_status_t status = rig_machine_open(m, name, NULL, &d);
  cr_assert(status == RIG_OK && d, "rig_machine_open(%s): %s: %s", name, rig_status_name(status), rig_last_error());
  return d;
}

/* Fills a buffer of d with byte and reads it back. */
static void runs_work(rig_device_t *d, uint8_t byte) {
  rig_buffer_t *b = NULL;
  cr_assert_eq(rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b), RIG_OK);
  cr_assert_eq(rig_buffer_fill(b, byte), RIG_OK);
  uint8_t seen[4096];
  cr_assert_eq(rig_buffer_blit_to_bytes(b, 0, seen, sizeof seen, 0, sizeof seen), RIG_OK);
  for (size_t i = 0; i < sizeof seen; i++) cr_assert_eq(seen[i], byte);
  rig_buffer_unref(b);
}

static void count_probed(const char *name, const char *why, void *context) {
  if (!why && (strcmp(name, "MEM:0@rigd") == 0 || strcmp(name, "MEM:0@rigd2") == 0)) (*(int *)context)++;
}

Test(machines, each_connection_is_a_machine_of_its_own) {
  rig_machine_t *first = connect_machine();
  cr_assert_str_eq(rig_machine_name(first), "rigd");
  cr_assert_null(rig_machine_lost(first));
  rig_device_t *d = open_on(first, "MEM:0");
  cr_assert_str_eq(rig_device_name(d), "MEM:0@rigd", "name d is the opener's name with @MACHINE");
  rig_device_t *again = NULL;
  cr_assert_eq(rig_open("MEM:0@rigd", NULL, &again), RIG_OK);
  cr_assert(again == d, "NAME@rigd is the device of the machine named rigd");

  rig_machine_t *second = connect_machine();
  cr_assert(second != first, "a second connection to one address is another machine");
  cr_assert_str_eq(rig_machine_name(second), "rigd2");
  rig_device_t *other = open_on(second, "MEM:0");
  cr_assert_str_eq(rig_device_name(other), "MEM:0@rigd2");
  cr_assert(!rig_device_equal(other, d));
  runs_work(d, 3);
  runs_work(other, 4);

  int probed = 0;
  cr_assert_eq(rig_probe(count_probed, &probed), RIG_OK);
  cr_assert_eq(probed, 2, "rig_probe lists each machine's devices");
}

Test(machines, an_open_of_name_at_rigd_connects_as_machine_rigd) {
  rig_device_t *d = NULL;
  cr_assert_eq(rig_open("MEM:0@rigd", NULL, &d), RIG_OK, "%s", rig_last_error());
  runs_work(d, 5);
  rig_machine_t *next = connect_machine();
  cr_assert_str_eq(rig_machine_name(next), "rigd2", "the open's connection took the name rigd");
}

Test(machines, misuse_answers_einval_and_unknown_machines_eopen) {
  rig_machine_t *m = connect_machine();
  rig_device_t *d = (rig_device_t *)1;
  cr_assert_eq(rig_machine_open(NULL, "MEM:0", NULL, &d), RIG_EINVAL);
  cr_assert_null(d, "*out is NULL after a failure");
  cr_assert_eq(rig_machine_open(m, NULL, NULL, &d), RIG_EINVAL);
  cr_assert_eq(rig_machine_open(m, "MEM:0@rigd", NULL, &d), RIG_EINVAL, "a name that names a machine itself");
  cr_assert_eq(rig_machine_open(m, "MEM:0", NULL, NULL), RIG_EINVAL);
  cr_assert_eq(rig_open("MEM:0@rigd3", NULL, &d), RIG_EOPEN, "no machine rigd3: %s", rig_last_error());
  cr_assert_null(rig_machine_name(NULL));
  cr_assert_null(rig_machine_lost(NULL));
}

/* service.h: a child after fork has none of its parent's machines, and its
 * first connection is "rigd" again. */
Test(machines, a_child_of_fork_names_its_own_machines) {
  rig_machine_t *parent = connect_machine();
  runs_work(open_on(parent, "MEM:0"), 6);
  pid_t child = fork();
  cr_assert(child >= 0);
  if (child == 0) {
    rig_machine_t *m = NULL;
    if (rig_service_connect(NULL, &m) != RIG_OK || strcmp(rig_machine_name(m), "rigd") != 0) _exit(1);
    rig_device_t *d = NULL;
    if (rig_machine_open(m, "MEM:0", NULL, &d) != RIG_OK) _exit(2);
    rig_buffer_t *b = NULL;
    if (rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b) != RIG_OK || rig_buffer_fill(b, 7) != RIG_OK) _exit(3);
    _exit(0);
  }
  int status = 0;
  cr_assert_eq(waitpid(child, &status, 0), child);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's first machine is rigd (status %#x)", status);
}

/* service.h's rig_machine_close on a machine of rigd: the connection ends
 * as a remote job's close does, "the job is closed" its reason; a child
 * after fork cannot close its parent's, which still works. */
Test(machines, a_close_ends_the_connection_to_rigd) {
  rig_machine_t *m = connect_machine();
  rig_device_t *d = open_on(m, "MEM:0");
  runs_work(d, 8);
  rig_buffer_t *b = NULL;
  cr_assert_eq(rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b), RIG_OK);
  pid_t child = fork();
  cr_assert(child >= 0);
  if (child == 0) _exit(rig_machine_close(m) == RIG_EINVAL ? 0 : 1);
  int status = 0;
  cr_assert_eq(waitpid(child, &status, 0), child);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a child closes none of its parent's machines");
  cr_assert_null(rig_machine_lost(m), "the parent's machine works");
  runs_work(d, 9);

  cr_assert_eq(rig_machine_close(m), RIG_OK, "%s", rig_last_error());
  cr_assert_str_eq(rig_machine_lost(m), "the job is closed");
  cr_expect_eq(rig_buffer_fill(b, 1), RIG_ELOST, "work on a closed machine's proxy");
  cr_expect(strstr(rig_last_error(), "the job is closed") != NULL, "the reason: %s", rig_last_error());
  rig_device_t *again = NULL;
  cr_expect_eq(rig_machine_open(m, "SIM:0", NULL, &again), RIG_EOPEN, "opens on a closed machine");
  cr_expect_eq(rig_machine_close(m), RIG_OK, "a second close changes nothing");
  cr_expect_str_eq(rig_machine_lost(m), "the job is closed");
  rig_machine_t *next = connect_machine();
  cr_expect_str_eq(rig_machine_name(next), "rigd2", "the closed machine keeps its name");
  runs_work(open_on(next, "MEM:0"), 10);
  rig_buffer_unref(b);
}
