/* Proxies of another machine's devices (rig-remote-proxy.txt), through
 * rig_machine_connect, against a rigd --listen on loopback serving MEM:0
 * and SIM:0 (remote_agent.h).  Written in C against the public API; each
 * test runs in a process of its own (Criterion's), with an agent of its
 * own.  Each test names the PROXY rules it asserts.
 *
 * The rules the C API cannot see or stall, test_remote_link.cpp asserts
 * against a scripted agent: the facts (PROXY-20..27, PROXY-30, PROXY-62),
 * making and committing (PROXY-09, PROXY-56), a refused make (PROXY-13,
 * PROXY-16: an interrupted make is an asynchronous exception of OCaml's,
 * which C++ has none of), the word the facts hold (PROXY-84), the order of
 * messages (PROXY-46, PROXY-47), regions (PROXY-57, PROXY-63), the parts
 * room refuses (PROXY-40, as rigd's proxies extend it), sleep (PROXY-86,
 * PROXY-87), the job's close (PROXY-54, PROXY-90, PROXY-94), nothing sent
 * after the failure (PROXY-92) and stop (PROXY-95..100).
 * test_remote_code.c runs code on the machine's host (PROXY-73,
 * PROXY-76), and test_remote_work.c reads a proxy's capability record
 * (PROXY-17, PROXY-29).
 *
 * Rules no suite asserts, and why:
 * - PROXY-11, PROXY-12: the driver's make (RemoteDevice's constructor)
 *   takes one record, the agent's account from DEVICES, which is both the
 *   description and the agent device's id: there is no second id to
 *   mismatch, and a host record is the account of id 0 (wire_check
 *   refuses a DEVICES without one), so neither refusal has a case.
 * - PROXY-55: memory cannot be made to run out for one hand-over alone
 *   without a fault injected into the allocator, which the driver has no
 *   hook for (submit maps std::bad_alloc to that Fault).
 * - PROXY-64, PROXY-68: no proxy of this driver has a word region that
 *   rig locates or maps: rig reads the word through signaled().
 * - PROXY-65: "as the account with the larger id describes" reads a
 *   Wire.account this wire does not have: here each account lists the ids
 *   whose own memory its device reaches (wire::Account's reach), and peer
 *   reads d's own; test_rigd_machines.cpp asserts that reach is
 *   rig_reaches', but no test asserts the rule as worded.
 * - PROXY-75: extended as rigd's proxies are (rig/service.h): every proxy
 *   asks the agent to load code, and test_remote_code.c runs it on SIM:0;
 *   a_proxy_answers_the_agents_refusal_of_code asserts the refusals.
 * - PROXY-85: a read's order is the atomic's: nothing a test observes.
 */
#include "remote_agent.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(remote_proxy, .init = remote_suite_start, .fini = remote_suite_stop, .timeout = 60);

static bool names_device(const char *name, const char *want) { return strcmp(name, want) == 0; }

static void count_machine_devices(const char *name, const char *why, void *context) {
  if (!why && (names_device(name, "CPU@machine") || names_device(name, "MEM:0@machine") ||
               names_device(name, "SIM:0@machine")))
    (*(int *)context)++;
}

Test(remote_proxy, a_proxy_for_each_device_the_agent_opened) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  cr_assert_str_eq(rig_machine_name(m), "machine");
  int found = 0;
  cr_assert_eq(rig_probe(count_machine_devices, &found), RIG_OK);
  cr_expect_eq(found, 3, "PROXY-01, PROXY-04: CPU, MEM:0 and SIM:0 of the machine, each openable");
  rig_device_t *host = remote_open(m, "CPU");
  cr_expect_str_eq(rig_device_name(host), "CPU@machine", "PROXY-01: the machine's host has a proxy");
  rig_device_t *mem = remote_open(m, "MEM:0");
  cr_expect_str_eq(rig_device_name(mem), "MEM:0@machine", "PROXY-08: the proxy's name is the account's");
}

Test(remote_proxy, facts_are_the_accounts) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  cr_expect_str_eq(rig_device_arch(mem), "memory", "PROXY-18: the arch of the agent's memory device");
  cr_expect_null(rig_device_bus(mem), "PROXY-31: no bus");
  cr_expect(!rig_device_runs_on_host(mem), "it runs on the other machine, not this host");
  cr_expect_gt(rig_budget(mem), 0, "PROXY-19: the agent's device's budget");
  cr_expect_eq(rig_device_cache_bytes(rig_host()), rig_device_cache_bytes(remote_open(m, "CPU")),
               "PROXY-28: the host's cache_bytes, the same host on loopback");
}

/* 64 MiB each way, each byte checked (PROXY-37, PROXY-38, PROXY-44: one
 * submission larger than 64 MiB fits a proxy with nothing in flight;
 * PROXY-81: the word moves only once the bytes landed, so that the blit's
 * wait sees them). */
Test(remote_proxy, a_copy_of_64_mib_each_way) {
  enum { n = 64 << 20 };
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  uint8_t *out = malloc(n), *back = malloc(n);
  cr_assert(out && back);
  for (size_t i = 0; i < n; i++) out[i] = (uint8_t)(i * 131 + (i >> 16));
  memset(back, 0, n);
  rig_buffer_t *b = remote_buffer(mem, n);
  cr_assert_eq(rig_buffer_blit_from_bytes(out, n, 0, b, 0, n), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_buffer_blit_to_bytes(b, 0, back, n, 0, n), RIG_OK, "%s", rig_last_error());
  cr_expect(memcmp(out, back, n) == 0, "PROXY-37, PROXY-81: the bytes came back as they went");
  rig_buffer_unref(b);
  free(out);
  free(back);
}

/* A host write after the copy's submit returned changes nothing of what
 * crossed (PROXY-50). */
Test(remote_proxy, a_put_sends_the_bytes_of_its_submit) {
  enum { n = 1 << 20 };
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *host = NULL;
  host = remote_buffer(rig_host(), n);
  uint8_t *h = rig_buffer_host(host);
  memset(h, 0x5a, n);
  rig_buffer_t *b = remote_buffer(mem, n);
  rig_box_t row = rig_row(0, 0, n);
  rig_point_t p;
  cr_assert_eq(rig_buffer_submit_copy(host, b, &row, 1, NULL, 0, &p), RIG_OK, "%s", rig_last_error());
  memset(h, 0x11, n);
  cr_assert_eq(rig_point_wait(p), RIG_OK);
  uint8_t seen[64];
  cr_assert_eq(rig_buffer_blit_to_bytes(b, n - 64, seen, 64, 0, 64), RIG_OK);
  for (int i = 0; i < 64; i++) cr_expect_eq(seen[i], 0x5a, "PROXY-50: the bytes of the submit crossed");
  rig_buffer_unref(b);
  rig_buffer_unref(host);
}

/* More than 64 MiB in flight: the next submit waits for one more value
 * (PROXY-43), so that once it returns the first is reached. */
Test(remote_proxy, later_past_64_mib_in_flight) {
  enum { n = 65 << 20 };
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "300000");
  rig_buffer_t *a = remote_buffer(sim, n), *b = remote_buffer(sim, n), *c = remote_buffer(sim, 4096), *d = remote_buffer(sim, 4096);
  rig_box_t big = rig_row(0, 0, n), small = rig_row(0, 0, 4096);
  rig_point_t first, second;
  cr_assert_eq(rig_buffer_submit_copy(a, b, &big, 1, NULL, 0, &first), RIG_OK, "%s", rig_last_error());
  bool reached = true;
  cr_assert_eq(rig_point_reached(first, &reached), RIG_OK);
  cr_assert(!reached, "the slow device has not run the first copy yet");
  cr_assert_eq(rig_buffer_submit_copy(c, d, &small, 1, NULL, 0, &second), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_point_reached(first, &reached), RIG_OK);
  cr_expect(reached, "PROXY-43: RIG_LATER held the submit until the 65 MiB were done");
  cr_assert_eq(rig_point_wait(second), RIG_OK);
  rig_buffer_unref(a);
  rig_buffer_unref(b);
  rig_buffer_unref(c);
  rig_buffer_unref(d);
}

Test(remote_proxy, alloc_refused_past_the_quota) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *b = NULL;
  rig_status_t s = rig_buffer_create(mem, (int64_t)512 << 20, RIG_MEMORY_DEVICE, &b);
  cr_expect_eq(s, RIG_ENOMEM, "PROXY-58, PROXY-59: the agent refuses 512 MiB past a quota of 256 MiB: %s",
               rig_last_error());
  rig_buffer_t *fits = remote_buffer(mem, 4096);
  cr_expect_not_null(fits, "PROXY-58: an alloc within it");
  rig_buffer_unref(fits);
}

/* The fill on MEM:0 waits for the slow fill on SIM:0 of the same link: the
 * agent waits (PROXY-33), so that the submit returns before the SIM's
 * point is reached, and the MEM point is reached only after it
 * (PROXY-39, PROXY-45's waits). */
Test(remote_proxy, a_wait_on_another_proxy_of_the_link_goes_to_the_agent) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "300000");
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *s = remote_buffer(sim, 4096), *b = remote_buffer(mem, 4096);
  rig_point_t filled, after;
  cr_assert_eq(rig_buffer_submit_fill(s, 7, NULL, 0, &filled), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_buffer_submit_fill(b, 9, &filled, 1, &after), RIG_OK, "%s", rig_last_error());
  bool reached = true;
  cr_assert_eq(rig_point_reached(filled, &reached), RIG_OK);
  cr_expect(!reached, "PROXY-33: the submit did not wait in this process for the SIM's fill");
  cr_assert_eq(rig_point_wait(after), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_point_reached(filled, &reached), RIG_OK);
  cr_expect(reached, "PROXY-39: the agent ran the MEM fill after the SIM fill it waited for");
  rig_buffer_unref(s);
  rig_buffer_unref(b);
}

/* rigd killed: every proxy of the link is lost with the link's reason
 * (PROXY-07, PROXY-88, PROXY-89), a wait answers RIG_ELOST, and a call
 * that asks the agent faults (PROXY-60, PROXY-91). */
Test(remote_proxy, the_agent_killed_loses_every_proxy_of_the_link) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "2000000");
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *s = remote_buffer(sim, 4096);
  rig_point_t pending;
  cr_assert_eq(rig_buffer_submit_fill(s, 3, NULL, 0, &pending), RIG_OK, "%s", rig_last_error());
  remote_agent_kill(&agent);
  cr_expect_eq(rig_point_wait(pending), RIG_ELOST, "PROXY-88: the wait answers RIG_ELOST");
  const char *why = rig_machine_lost(m);
  cr_assert_not_null(why, "the machine is lost");
  cr_expect_not_null(rig_lost(sim), "PROXY-07: the SIM proxy is lost");
  if (rig_lost(sim)) cr_expect(strstr(rig_lost(sim), why) != NULL, "PROXY-89: %s names %s", rig_lost(sim), why);
  rig_buffer_t *b = NULL;
  cr_expect_eq(rig_buffer_create(mem, 4096, RIG_MEMORY_DEVICE, &b), RIG_ELOST,
               "PROXY-60, PROXY-91: an alloc after the failure faults, no refusal: %s", rig_last_error());
  cr_expect(strstr(rig_last_error(), why) != NULL, "PROXY-60, PROXY-89: the fault's message %s names %s",
            rig_last_error(), why);
  cr_expect_not_null(rig_lost(mem), "PROXY-07: every proxy of the link, MEM's too");
  cr_expect_str_eq(rig_device_arch(mem), "memory", "PROXY-93: the facts stay");
  rig_buffer_unref(s);
}

Test(remote_proxy, authentication_refused) {
  rig_machine_options_t o = {.size = sizeof o, .key_file = agent.wrong_key};
  rig_machine_t *m = NULL;
  cr_expect_eq(rig_machine_connect(agent.address, &o, &m), RIG_EOPEN);
  cr_expect(strstr(rig_last_error(), "authentication failed") != NULL, "the reason: %s", rig_last_error());
  cr_expect_null(m);
}

Test(remote_proxy, machine_names) {
  rig_machine_t *first = remote_connect(&agent, NULL), *second = remote_connect(&agent, NULL);
  cr_expect_str_eq(rig_machine_name(first), "machine");
  cr_expect_str_eq(rig_machine_name(second), "machine2", "a second connection to one address is another machine");
  const char *bad[] = {"rigd", "rigd3", "a@b", "a,b", "a:b", "", "machine"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rig_machine_options_t o = {.size = sizeof o, .name = bad[i], .key_file = agent.key_file};
    cr_expect_eq(rig_machine_connect(agent.address, &o, NULL), RIG_EINVAL, "the name \"%s\"", bad[i]);
  }
  rig_machine_t *named = remote_connect(&agent, "peer");
  cr_expect_str_eq(rig_machine_name(named), "peer");
  cr_expect_str_eq(rig_device_name(remote_open(named, "MEM:0")), "MEM:0@peer");
}

/* An open of NAME@M connects through $RIG_MACHINES with $RIG_MACHINE_KEY. */
Test(remote_proxy, an_open_connects_through_rig_machines) {
  char list[200];
  snprintf(list, sizeof list, "other=127.0.0.1:1,peer=%s", agent.address);
  setenv("RIG_MACHINES", list, 1);
  setenv("RIG_MACHINE_KEY", agent.key_file, 1);
  rig_device_t *d = NULL;
  cr_assert_eq(rig_open("MEM:0@peer", NULL, &d), RIG_OK, "%s", rig_last_error());
  cr_expect_str_eq(rig_device_name(d), "MEM:0@peer");
  rig_buffer_t *b = remote_buffer(d, 4096);
  cr_expect_eq(rig_buffer_fill(b, 1), RIG_OK, "the proxy runs work: %s", rig_last_error());
  rig_buffer_unref(b);
}

/* A proxy whose agent's device loads no code answers the agent's reason
 * (PROXY-74; PROXY-75 as rigd's proxies extend it: the agent decides,
 * and rigd's MEM:0 loads none, nor its CPU where its config says
 * host_code = deny, as this agent's does). */
Test(remote_proxy, a_proxy_answers_the_agents_refusal_of_code) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  const char *names[] = {"CPU", "MEM:0"};
  for (int i = 0; i < 2; i++) {
    rig_device_t *d = remote_open(m, names[i]);
    static const uint8_t junk[64] = {0x7f, 'E', 'L', 'F'};
    rig_image_t *image = NULL;
    cr_expect_eq(rig_image_load(d, junk, sizeof junk, &image), RIG_EIMAGE, "%s", names[i]);
    cr_expect(strstr(rig_last_error(), agent.address) != NULL, "PROXY-74: the agent's reason: %s", rig_last_error());
    cr_expect_null(rig_lost(d), "a refused image loses nothing");
    if (i == 0)
      cr_expect(strstr(rig_last_error(), "host_code = deny") != NULL, "the reason names host_code: %s",
                rig_last_error());
  }
}

/* rig devices --machine ADDRESS --key FILE lists what the agent serves,
 * and nothing of this process's own. */
Test(remote_proxy, rig_devices_lists_what_the_agent_serves) {
  char command[1024], out[8192];
  snprintf(command, sizeof command, "%s devices --machine %s --key %s 2>&1", RIG_TOOL_PATH, agent.address,
           agent.key_file);
  FILE *p = popen(command, "r");
  cr_assert_not_null(p);
  size_t got = fread(out, 1, sizeof out - 1, p);
  out[got] = '\0';
  cr_assert_eq(pclose(p), 0, "%s: %s", command, out);
  cr_expect(strstr(out, "CPU@machine\n") && strstr(out, "MEM:0@machine\n") && strstr(out, "SIM:0@machine\n"),
            "the agent's devices: %s", out);
  cr_expect(!strstr(out, "\nCPU\n") && strncmp(out, "CPU\n", 4) != 0, "this process's own host too: %s", out);
}

static bool says_closed(const char *why) { return why && strstr(why, "the job is closed") != NULL; }

/* Whether the agent's log tells that a connection left for its CLOSE
 * (remote_session's "left (closed)"), looking while the agent writes it. */
static bool agent_logged_close(void) {
  for (int turn = 0; turn < 200; turn++) {
    FILE *f = fopen(agent.log, "r");
    char line[1024];
    bool seen = false;
    while (f && !seen && fgets(line, sizeof line, f)) seen = strstr(line, "left (closed)") != NULL;
    if (f) fclose(f);
    if (seen) return true;
    usleep(50 * 1000);
  }
  return false;
}

/* rig_machine_close: the link sends CLOSE and ends; each call that asks
 * the agent and each submit fails with "the job is closed" (PROXY-54,
 * PROXY-94), a wait on work handed over before answers RIG_ELOST with it
 * (PROXY-90), and so does rig_machine_lost. */
Test(remote_proxy, the_jobs_close) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "2000000");
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_device_t *host = remote_open(m, "CPU");
  rig_buffer_t *s = remote_buffer(sim, 4096), *b = remote_buffer(mem, 4096);
  rig_point_t pending;
  cr_assert_eq(rig_buffer_submit_fill(s, 3, NULL, 0, &pending), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_machine_close(m), RIG_OK, "%s", rig_last_error());
  cr_expect(says_closed(rig_machine_lost(m)), "PROXY-90: the machine is lost: %s", rig_machine_lost(m));
  cr_expect(agent_logged_close(), "the agent heard CLOSE and ended the connection (log %s)", agent.log);

  cr_expect_eq(rig_point_wait(pending), RIG_ELOST, "PROXY-90: the wait answers RIG_ELOST");
  cr_expect(says_closed(rig_last_error()), "PROXY-90: the reason: %s", rig_last_error());
  rig_point_t after;
  cr_expect_eq(rig_buffer_submit_fill(b, 5, NULL, 0, &after), RIG_ELOST, "PROXY-54: a submit after the close");
  cr_expect(says_closed(rig_last_error()), "PROXY-54: the reason: %s", rig_last_error());
  rig_buffer_t *more = NULL;
  cr_expect_eq(rig_buffer_create(mem, 4096, RIG_MEMORY_DEVICE, &more), RIG_ELOST, "PROXY-94: an alloc");
  cr_expect(says_closed(rig_last_error()), "PROXY-94: the reason: %s", rig_last_error());
  static const uint8_t junk[64] = {0x7f, 'E', 'L', 'F'};
  rig_image_t *image = NULL;
  cr_expect_eq(rig_image_load(host, junk, sizeof junk, &image), RIG_ELOST, "PROXY-94: an image on the host");
  cr_expect(says_closed(rig_last_error()), "PROXY-94: the reason: %s", rig_last_error());
  rig_device_t *again = NULL;
  cr_expect_eq(rig_machine_open(m, "MEM:0", NULL, &again), RIG_EOPEN, "opens on a closed machine");

  cr_expect_eq(rig_machine_close(m), RIG_OK, "a second close changes nothing");
  cr_expect(says_closed(rig_machine_lost(m)), "the first reason stays: %s", rig_machine_lost(m));
  cr_expect_eq(rig_machine_close(NULL), RIG_EINVAL);
  rig_buffer_unref(s);
  rig_buffer_unref(b);
}

/* A machine lost before its close keeps its reason. */
Test(remote_proxy, a_close_after_the_failure_keeps_the_root_cause) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  remote_agent_kill(&agent);
  rig_device_t *mem = NULL;
  (void)rig_machine_open(m, "MEM:0", NULL, &mem);
  for (int turn = 0; turn < 400 && !rig_machine_lost(m); turn++) usleep(50 * 1000);
  const char *why = rig_machine_lost(m);
  cr_assert_not_null(why, "the agent's death loses the machine");
  cr_assert_eq(rig_machine_close(m), RIG_OK);
  cr_expect_str_eq(rig_machine_lost(m), why, "the failure's reason stays");
}

/* An open the agent refuses (its OPEN of SIM:0 with an unknown key) makes
 * no proxy and leaves the device unopened on the link: the next open asks
 * the agent again, and its proxy runs work (PROXY-16). */
Test(remote_proxy, a_refused_open_leaves_nothing_made) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_open_options_t bad = {sizeof bad, "no_such_knob=7"};
  rig_device_t *d = NULL;
  cr_expect_eq(rig_machine_open(m, "SIM:0", &bad, &d), RIG_EOPEN, "the agent refuses the configuration");
  cr_expect(strstr(rig_last_error(), "no_such_knob") != NULL, "the agent's reason: %s", rig_last_error());
  cr_expect_null(d);
  rig_device_t *sim = remote_open(m, "SIM:0");
  rig_buffer_t *b = remote_buffer(sim, 4096);
  cr_expect_eq(rig_buffer_fill(b, 3), RIG_OK, "PROXY-16: the proxy made after the failed one works: %s",
               rig_last_error());
  rig_buffer_unref(b);
}
