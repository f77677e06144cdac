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
 * and a good client connects after them (the agent serves on). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <rig/rig.h>
#include <rig/service.h>

#include <string.h>

#include "machine_client.h"
#include "machine_fixture.h"

TestSuite(remote_authentication, .fini = machine_fixture_down, .timeout = 60);

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

Test(remote_authentication, wrong_keys_refused_while_good_clients_are_served) {
  machine_fixture_up("MEM:0,SIM:0");
  machine_run(refusals_between_good_clients, NULL, "refusals between good clients");
}
