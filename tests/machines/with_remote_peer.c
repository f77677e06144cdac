/* Runs a suite in side b of two hosts against the devices of side a's
 * machine: an agent (machine_agent.h) serving MEM:0 and SIM:0, which the
 * suite opens as NAME@peer through $RIG_MACHINES ("peer=HOST:PORT") and
 * $RIG_MACHINE_KEY, as any program of that machine would, with no change
 * to the suite (the conformance suite on "MEM:0@peer,SIM:0@peer").
 * Answers the suite's exit status; 77 (the suite's SKIP_RETURN_CODE),
 * with the reason, where the two hosts cannot be made here; 1 where the
 * agent does not start.
 * Usage: with_remote_peer SUITE [ARGUMENTS...] */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine_agent.h"
#include "suite_runner.h"
#include "two_hosts.h"

struct suite {
  char **argv;
  const struct machine_agent *agent;
};

/* In side b: the suite, with the environment that names the machine. */
static int exec_suite(void *arg) {
  const struct suite *s = arg;
  char machines[96];
  snprintf(machines, sizeof machines, "peer=%s", s->agent->address);
  setenv("RIG_MACHINES", machines, 1);
  setenv("RIG_MACHINE_KEY", s->agent->good_key_file, 1);
  machine_agent_environment(s->agent->hosts, TWO_HOSTS_B);
  execv(s->argv[0], s->argv);
  fprintf(stderr, "with_remote_peer: execv %s: %s\n", s->argv[0], strerror(errno));
  return 127;
}

int main(int argc, char *argv[]) {
  struct two_hosts *h = suite_runner_hosts(argc, argv);
  struct machine_agent agent;
  if (machine_agent_start(&agent, h, RIGD_PATH, "MEM:0,SIM:0") != 0) {
    fprintf(stderr, "%s: the agent in side a: %s\n", argv[0], machine_agent_error());
    two_hosts_down(h);
    return 1;
  }
  fflush(NULL);
  struct suite suite = {argv + 1, &agent};
  int answer = two_hosts_run(h, TWO_HOSTS_B, exec_suite, &suite);
  if (answer < 0) {
    fprintf(stderr, "%s: the suite in side b: %s\n", argv[0], two_hosts_error());
    answer = 1;
  }
  if (answer != 0) machine_agent_ended(&agent);
  machine_agent_stop(&agent);
  if (two_hosts_down(h) != 0) {
    fprintf(stderr, "%s: the two hosts would not go: %s\n", argv[0], two_hosts_error());
    if (answer == 0) answer = 1;
  }
  return answer;
}
