/* Code on another machine's devices (rig-remote-proxy.txt, Code): images
 * the agent loads, their entries and launches through the link, against a
 * rigd --listen on loopback that runs its clients' host code
 * (remote_agent.h), with the run suites' set kernel (tests/run).  The
 * proxies load code as rigd's own do, on any device whose agent loads it:
 * rigd's sim loads host code, its CPU none ("a client runs host code
 * itself", for a client of its host), so the image rules are asserted on
 * SIM:0, and PROXY-73 and PROXY-76 on the machine's host, whose images
 * load on the agent's host for a remote client.  Each test names the
 * PROXY rules it asserts. */
#include "remote_agent.h"
#include "run_support.h"

#include <criterion/criterion.h>

static void start(void) { remote_agent_start(&agent, "host_code = allow\ntest_knobs = allow\n"); }

TestSuite(remote_code, .init = start, .fini = remote_suite_stop, .timeout = 60);

/* A launch of set on d writing value into out's first 64 int64s: its
 * point. */
static rig_point_t launch_set(rig_device_t *d, rig_function_t *set, rig_buffer_t *out, int64_t value) {
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(set, refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(d, &launch, 1);
  rig_point_t p = submit_set(s, out, 64, value);
  rig_submission_unref(s);
  return p;
}

/* The proxy loads the image through the agent, whose entries are the
 * agent's answers, none for a function it lacks (PROXY-77), and a launch
 * of set writes through its ref there; the image's release waits for that
 * work (PROXY-79). */
Test(remote_code, a_proxy_loads_and_launches_through_the_agent) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "0");
  rig_image_t *image = load_kernels(sim, RIG_RUN_KERNELS "/work.c");
  rig_function_t *set = NULL, *none = NULL;
  cr_assert_eq(rig_image_resolve(image, "set", &set), RIG_OK, "%s", rig_last_error());
  cr_assert_not_null(set, "PROXY-77: the agent's entry of set");
  cr_assert_eq(rig_image_resolve(image, "no_such_function", &none), RIG_OK, "%s", rig_last_error());
  cr_expect_null(none, "PROXY-77: no entry for a function the image lacks");

  rig_buffer_t *out = int64s(sim, 64, 0);
  rig_point_t p = launch_set(sim, set, out, 41);
  rig_image_unref(image);
  cr_assert_eq(rig_point_wait(p), RIG_OK, "%s", rig_last_error());
  int64_t seen[64];
  read_int64s(out, seen, 64);
  for (int i = 0; i < 64; i++) cr_assert_eq(seen[i], 41, "PROXY-79: value %d of the launch, its image released", i);
  rig_buffer_unref(out);
}

/* Once the job failed, entry faults (PROXY-78), and so does image, of
 * code the agent loads while the job works, on the machine's host
 * (PROXY-76) as on SIM:0. */
Test(remote_code, image_and_entry_fault_once_the_job_failed) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "0");
  rig_device_t *host = remote_open(m, "CPU");
  rig_image_t *image = load_kernels(sim, RIG_RUN_KERNELS "/work.c");
  remote_agent_kill(&agent);
  rig_function_t *copy = NULL;
  rig_status_t resolved = rig_image_resolve(image, "copy", &copy);
  cr_expect_eq(resolved, RIG_ELOST, "PROXY-78: entry faults: %s", rig_last_error());
  object_t o = host_object(RIG_RUN_KERNELS "/work.c");
  rig_image_t *again = NULL;
  cr_expect_eq(rig_image_load(host, o.bytes, o.n, &again), RIG_ELOST, "PROXY-76: image on the host faults: %s",
               rig_last_error());
  cr_expect_eq(rig_image_load(sim, o.bytes, o.n, &again), RIG_ELOST, "PROXY-76: as on SIM:0: %s", rig_last_error());
  object_free(&o);
  rig_image_unref(image);
}

/* The machine's host proxy loads the image on the agent's host, rigd
 * running host code there as its config allows (host_code = allow), and
 * its launch writes the host proxy's memory there (PROXY-73). */
Test(remote_code, the_machines_host_runs_code_on_the_agents_host) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *host = remote_open(m, "CPU");
  rig_image_t *image = load_kernels(host, RIG_RUN_KERNELS "/work.c");
  cr_expect(rig_image_device(image) == host, "PROXY-73: the image is the host proxy's");
  rig_function_t *set = NULL;
  cr_assert_eq(rig_image_resolve(image, "set", &set), RIG_OK, "%s", rig_last_error());
  cr_assert_not_null(set, "PROXY-73: the agent's host has the image's set");
  rig_buffer_t *out = int64s(host, 64, 0);
  rig_point_t p = launch_set(host, set, out, 73);
  cr_assert_eq(rig_point_wait(p), RIG_OK, "%s", rig_last_error());
  int64_t seen[64];
  read_int64s(out, seen, 64);
  for (int i = 0; i < 64; i++) cr_assert_eq(seen[i], 73, "PROXY-73: value %d of the launch on the agent's host", i);
  rig_buffer_unref(out);
  rig_image_unref(image);
}
