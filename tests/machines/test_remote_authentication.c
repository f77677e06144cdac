/* The agent's authentication seen from another machine: rigd --listen in
 * side a of two hosts with a key ring of one key ("tester"), clients in
 * side b through rig_machine_connect.
 *
 * Asserts issue #23's authentication (no rule ID in RULES.md: the spec
 * leaves the link's authentication to the implementation; rigd(8),
 * machine_keys; rig_machine_connect(3)): a client proving the ring's key
 * id with another secret, and one proving an id the ring lacks, are
 * refused, rig_machine_connect answering RIG_EOPEN with "authentication
 * failed"; a client connected before the refusals works on after them,
 * and a good client connects after them (the agent serves on); rigd logs
 * each refusal with the peer and the cause (naming the key id), and
 * neither secret (rigd(8), MACHINES). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <rig/rig.h>
#include <rig/service.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "machine_client.h"
#include "machine_fixture.h"

TestSuite(remote_authentication, .fini = machine_fixture_down, .timeout = MACHINE_SUITE_TIMEOUT(60));

/* rig_machine_connect with key_file and key_id is refused as it must be. */
static int refused(const char *name, const char *key_file, const char *key_id, const char *what) {
  rig_machine_options_t options = {
      .size = sizeof options, .name = name, .key_file = key_file, .key_id = key_id, .transports = "tcp"};
  rig_machine_t *m = NULL;
  rig_status_t s = rig_machine_connect(agent.address, &options, &m);
  EXPECT(s == RIG_EOPEN, "%s: rig_machine_connect answered %s, not RIG_EOPEN: %s", what, rig_status_name(s),
         rig_last_error());
  EXPECT(strstr(rig_last_error(), "authentication failed"), "%s: the refusal says \"%s\"", what, rig_last_error());
  EXPECT(m == NULL, "%s: a refused connect gave a machine", what);
  return 0;
}

static int refusals_between_good_clients(void *arg) {
  (void)arg;
  rig_device_t *d = machine_device(&agent, "before", "MEM:0");
  EXPECT(d, "MEM:0@before (above)");
  if (machine_runs_work(d, 0x11, "the first good client") != 0) return 1;

  if (refused("wrong", agent.wrong_key_file, NULL, "the key id tester with another secret") != 0) return 1;
  if (refused("stranger", agent.good_key_file, "stranger", "a key id the ring lacks") != 0) return 1;

  EXPECT(rig_lost(d) == NULL, "the first client's MEM:0@before is lost after the refusals: %s", rig_lost(d));
  if (machine_runs_work(d, 0x22, "the first good client after the refusals") != 0) return 1;
  return machine_serves_a_client(&agent, "after", 0x33, "a good client after the refusals");
}

/* The secret of the key file at path, its final newline dropped. */
static void secret_of(const char *path, char *secret, size_t size) {
  FILE *f = fopen(path, "re");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  cr_assert_not_null(fgets(secret, (int)size, f), "%s is empty", path);
  fclose(f);
  secret[strcspn(secret, "\n")] = '\0';
}

/* The number of times needle occurs in text. */
static int occurrences(const char *text, const char *needle) {
  int n = 0;
  for (const char *at = text; (at = strstr(at, needle)); at += strlen(needle)) n++;
  return n;
}

Test(remote_authentication, wrong_keys_refused_while_good_clients_are_served) {
  machine_fixture_up("MEM:0,SIM:0");
  machine_run(refusals_between_good_clients, NULL, "refusals between good clients");
  char good[128], wrong[128], log[16384];
  secret_of(agent.good_key_file, good, sizeof good);
  secret_of(agent.wrong_key_file, wrong, sizeof wrong);
  const char *refusal = "refused a machine connection from ";
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (machine_agent_log(&agent, log, sizeof log); occurrences(log, refusal) < 2 && two_hosts_ms_since(&start) < 5000;
       machine_agent_log(&agent, log, sizeof log))
    nanosleep(&(struct timespec){.tv_nsec = 20 * 1000000}, NULL);
  cr_assert_eq(occurrences(log, refusal), 2, "rigd logged %d refusals, not the 2 it made; its log: %s",
               occurrences(log, refusal), log);
  cr_assert(strstr(log, two_hosts_address(hosts, TWO_HOSTS_B)), "the refusals name no peer of side b: %s", log);
  cr_assert(strstr(log, "key id tester") && strstr(log, "key id stranger"), "the refusals' causes name no key id: %s",
            log);
  cr_assert(!strstr(log, good) && !strstr(log, wrong), "rigd's log shows a secret: %s", log);
  cr_log_info("rigd's log: %s", log);
}
