/* How a job over another machine's devices fails: MEM:0@peer and
 * SIM:0@peer, served by rigd --listen in side a of two hosts, driven from
 * side b through the C API, while the test cuts the link between the
 * sides, kills the agent, or the sim faults.
 *
 * Each client holds work that is not done when the failure comes: a fill
 * of SIM:0@peer opened with latency_us (each value takes 20 s) or
 * fault_at (its first value faults), and, but for the cut, a copy between
 * two buffers of MEM:0@peer that waits for that fill (the wait carried to
 * the agent in the hand-over, PROXY-33; a copy into this process's memory
 * would hold its submit until done, as rig stages it).
 *
 * Asserts PROXY-07 (when the job fails every proxy of the link reports
 * it: both proxies lost, every pending wait RIG_ELOST), PROXY-88 (a wait
 * under way when the job fails answers RIG_ELOST), PROXY-89 (with the
 * job's root cause: the link's reason, or the sim's own), PROXY-53 (a
 * submit under way or after the failure fails with that cause) and
 * PROXY-91 (once failed, what asks the agent fails too: an alloc), and
 * the link's failure bound B (ucx_link.hpp): a silent link is reported
 * between B and B + B/4 after the last thing heard, a dead agent at
 * once. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <rig/rig.h>
#include <rig/service.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "machine_client.h"
#include "machine_fixture.h"

#define MIB (INT64_C(1) << 20)

TestSuite(remote_failures, .fini = machine_fixture_down, .timeout = MACHINE_SUITE_TIMEOUT(90));

/* The bound the cut link is given, and what the test allows beyond
 * B + B/4 for the cut itself (an ip command) and the wake-ups; "at once"
 * for a dead agent (the kernel's reset, not the bound B of 10 s).  The
 * sanitizers' builds have more of both (MACHINE_SANITIZED). */
enum {
  cut_bound_ms = 2000,
  slack_ms = MACHINE_SANITIZED ? 4000 : 1000,
  dead_agent_ms = MACHINE_SANITIZED ? 5000 : 1500
};
/* A sim whose every value takes 20 s, within its hang bound on the agent:
 * work still held at any failure. */
static const char slow_sim[] = "latency_us=20000000,hang_ms=60000";

/* What a client holds when the failure comes. */
struct pending {
  rig_machine_t *machine;
  rig_device_t *mem, *sim;
  rig_buffer_t *host, *remote, *copy, *spare, *word;
  rig_point_t held[2]; /* not reached when the job fails */
  const char *held_names[2];
  int nheld;
};

/* Connects, opens both proxies (the sim with config), and checks the link
 * carries work: a copy of 64 MiB into MEM:0@peer, waited for. */
static int open_both(struct pending *p, uint32_t bound_ms, const char *sim_config) {
  p->machine = machine_connect(&agent, "peer", agent.good_key_file, bound_ms);
  EXPECT(p->machine, "no machine (above)");
  p->mem = machine_open(p->machine, "MEM:0", NULL);
  p->sim = machine_open(p->machine, "SIM:0", sim_config);
  EXPECT(p->mem && p->sim, "no proxies (above)");
  uint8_t *bytes = malloc((size_t)(64 * MIB));
  EXPECT(bytes, "no 64 MiB of host memory");
  memset(bytes, 0x5a, (size_t)(64 * MIB));
  EXPECT(rig_buffer_of_memory(bytes, 64 * MIB, free, bytes, &p->host) == RIG_OK, "%s", rig_last_error());
  EXPECT(rig_buffer_create(p->mem, 64 * MIB, RIG_MEMORY_DEVICE, &p->remote) == RIG_OK, "%s", rig_last_error());
  EXPECT(rig_buffer_create(p->mem, 64 * MIB, RIG_MEMORY_DEVICE, &p->copy) == RIG_OK, "%s", rig_last_error());
  EXPECT(rig_buffer_create(p->mem, 4096, RIG_MEMORY_DEVICE, &p->spare) == RIG_OK, "%s", rig_last_error());
  EXPECT(rig_buffer_create(p->sim, 4096, RIG_MEMORY_DEVICE, &p->word) == RIG_OK, "%s", rig_last_error());
  rig_status_t copied = rig_buffer_copy(p->host, p->remote);
  EXPECT(copied == RIG_OK, "64 MiB into MEM:0@peer: %s: %s", rig_status_name(copied), rig_last_error());
  return 0;
}

/* Holds the fill of SIM:0@peer that takes the latency its open set, and,
 * where after_it, a copy of MEM:0@peer's that waits for that fill. */
static int hold_work(struct pending *p, bool after_it) {
  rig_status_t s = rig_buffer_submit_fill(p->word, 7, NULL, 0, &p->held[0]);
  EXPECT(s == RIG_OK, "the fill of SIM:0@peer: %s: %s", rig_status_name(s), rig_last_error());
  p->held_names[0] = "the fill of SIM:0@peer";
  p->nheld = 1;
  if (!after_it) return 0;
  rig_box_t box = rig_row(0, 0, 64 * MIB);
  s = rig_buffer_submit_copy(p->remote, p->copy, &box, 1, &p->held[0], 1, &p->held[1]);
  EXPECT(s == RIG_OK, "the copy after the fill: %s: %s", rig_status_name(s), rig_last_error());
  p->held_names[1] = "the copy of MEM:0@peer after the fill";
  p->nheld = 2;
  return 0;
}

static long ms_since(const struct timespec *start) { return two_hosts_ms_since(start); }

/* Whether a call that answered s said cause (PROXY-89). */
static int says(rig_status_t s, const char *cause, const char *what) {
  EXPECT(s == RIG_ELOST, "%s answered %s, not RIG_ELOST (PROXY-07/53/88): %s", what, rig_status_name(s),
         rig_last_error());
  EXPECT(strstr(rig_last_error(), cause), "%s: the reason \"%s\" does not say \"%s\" (PROXY-89)", what,
         rig_last_error(), cause);
  return 0;
}

/* The job's failure as every proxy reports it, with cause in each reason
 * (PROXY-07/88/89): the held fill's wait answers RIG_ELOST; a fill of
 * MEM:0@peer's spare buffer (submitted after the failure) too (PROXY-53);
 * then the held copy's wait; both proxies are lost with it, the machine's
 * root cause holds it, and an alloc after it fails (PROXY-91).  MEM:0@peer
 * is lost by its own driver's report first, by the fill: a wait on the
 * held copy, which waits on SIM:0@peer, could lose it by rig's spread of
 * the upstream loss instead ("SIM:0@peer lost", rig_point_wait).  The
 * root cause is left in cause_out. */
static int job_failed(struct pending *p, const char *cause, char *cause_out, size_t size) {
  if (says(rig_point_wait(p->held[0]), cause, p->held_names[0]) != 0) return 1;
  if (says(rig_buffer_fill(p->spare, 1), cause, "a fill of MEM:0@peer after the failure") != 0) return 1;
  for (int i = 1; i < p->nheld; i++)
    if (says(rig_point_wait(p->held[i]), cause, p->held_names[i]) != 0) return 1;
  const char *root = rig_machine_lost(p->machine);
  EXPECT(root && strstr(root, cause), "the machine's root cause is \"%s\", not one saying \"%s\"",
         root ? root : "(none: not lost)", cause);
  snprintf(cause_out, size, "%s", root);
  rig_device_t *proxies[] = {p->mem, p->sim};
  for (int i = 0; i < 2; i++) {
    const char *lost = rig_lost(proxies[i]);
    EXPECT(lost && strstr(lost, cause), "%s is lost with \"%s\", not with the job's root cause (PROXY-07/89)",
           rig_device_name(proxies[i]), lost ? lost : "(nothing: not lost)");
  }
  rig_buffer_t *more = NULL;
  rig_status_t s = rig_buffer_create(p->mem, 4096, RIG_MEMORY_DEVICE, &more);
  EXPECT(s != RIG_OK, "an alloc on MEM:0@peer after the job failed answered RIG_OK (PROXY-91)");
  return 0;
}

/* ---- The link cut ------------------------------------------------------------ */

/* In side b: holds the sim's fill, tells the test to cut, then copies
 * 64 MiB into MEM:0@peer again and again until a copy fails (the cut
 * lands while one crosses; none waits for the held fill, which would keep
 * their bytes from crossing: PROXY-48):
 * every wait answers RIG_ELOST with the link's reason within B + B/4 of
 * the cut, plus the slack. */
static int through_a_cut(struct machine_client *c) {
  struct pending p = {0};
  if (open_both(&p, cut_bound_ms, slow_sim) != 0 || hold_work(&p, false) != 0) return 1;
  struct timespec cut;
  clock_gettime(CLOCK_MONOTONIC, &cut);
  machine_client_ready(c);
  rig_status_t s = RIG_OK;
  int copies = 0;
  for (; s == RIG_OK && ms_since(&cut) < 3 * cut_bound_ms + slack_ms; copies++) s = rig_buffer_copy(p.host, p.remote);
  const char *link = two_hosts_address(hosts, TWO_HOSTS_A);
  if (says(s, link, "the copy under way at the cut") != 0) return 1;
  char cause[512];
  if (job_failed(&p, link, cause, sizeof cause) != 0) return 1;
  long took = ms_since(&cut);
  EXPECT(took <= cut_bound_ms + cut_bound_ms / 4 + slack_ms,
         "the job failed %ld ms after the cut, past B + B/4 (B %d ms) and %d ms of slack: %s", took, cut_bound_ms,
         slack_ms, cause);
  fprintf(stderr, "the cut link failed the job in %ld ms (B %d ms), after %d copies: %s\n", took, cut_bound_ms, copies,
          cause);
  return 0;
}

static void cut_the_link(void) { cr_assert_eq(two_hosts_cut(hosts), 0, "cut: %s", two_hosts_error()); }

/* Runs client in side b and, once it holds its work, the failure fail. */
static void fails_under(int (*client)(struct machine_client *c), void (*fail)(void), const char *what) {
  machine_fixture_up("MEM:0,SIM:0");
  struct machine_client c;
  machine_client_start(&c, client, NULL);
  machine_client_await_ready(&c, 30000, what);
  fail();
  machine_client_join(&c, what);
}

Test(remote_failures, a_cut_link_loses_every_proxy_with_its_reason_within_the_bound) {
  fails_under(through_a_cut, cut_the_link, "the link cut");
}

/* ---- The agent killed -------------------------------------------------------- */

/* In side b, with rig's default bound: holds work, tells the test to kill
 * the agent; the waits answer RIG_ELOST with the link's reason at once. */
static int through_a_death(struct machine_client *c) {
  struct pending p = {0};
  if (open_both(&p, 0, slow_sim) != 0 || hold_work(&p, true) != 0) return 1;
  struct timespec killed;
  clock_gettime(CLOCK_MONOTONIC, &killed);
  machine_client_ready(c);
  char cause[512];
  if (job_failed(&p, two_hosts_address(hosts, TWO_HOSTS_A), cause, sizeof cause) != 0) return 1;
  long took = ms_since(&killed);
  EXPECT(took <= dead_agent_ms, "the job failed %ld ms after the agent's death, not at once (B is %d ms): %s", took,
         machine_default_bound_ms, cause);
  fprintf(stderr, "the agent's death failed the job in %ld ms (B %d ms): %s\n", took, machine_default_bound_ms, cause);
  return 0;
}

static void kill_the_agent(void) { cr_assert_eq(machine_agent_kill(&agent), 0, "kill: %s", machine_agent_error()); }

Test(remote_failures, a_killed_agent_loses_every_proxy_at_once_with_the_reason) {
  fails_under(through_a_death, kill_the_agent, "the agent killed");
}

/* ---- A device's fault -------------------------------------------------------- */

static const char sim_reason[] = "faulted (the fault_at knob)";

/* In side b: SIM:0@peer opened with fault_at=1, so that its first value
 * faults on the agent: the job fails as a whole with the sim's reason,
 * MEM:0@peer's pending copy and the proxy itself with it. */
static int through_a_fault(void *arg) {
  (void)arg;
  struct pending p = {0};
  if (open_both(&p, 0, "fault_at=1") != 0 || hold_work(&p, true) != 0) return 1;
  char cause[512];
  return job_failed(&p, sim_reason, cause, sizeof cause);
}

/* In side b: a new connection's work runs (the agent serves on). */
static int serves_a_client(void *arg) {
  (void)arg;
  return machine_serves_a_client(&agent, "peer", 0x3c, "the next client");
}

Test(remote_failures, a_sim_fault_fails_the_job_as_a_whole_with_its_reason) {
  machine_fixture_up("MEM:0,SIM:0");
  machine_run(through_a_fault, NULL, "through the sim's fault");
  machine_run(serves_a_client, NULL, "a client after the failed job");
}
