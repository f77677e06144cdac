/* The agent of the machines tests and of the benchmarks of the machine
 * link: a rigd in side a of two hosts (two_hosts.h) serving its devices to
 * side b, `rigd --listen A:0` with its key ring, config and log in a
 * private directory of its own.
 *
 * The directory (made with mkdir, named by the PID and a counter) holds:
 *   keys/tester      the agent's key ring: one key, id "tester";
 *   client/tester    the client's copy of that key (good_key_file);
 *   wrong/tester     a key of the same id and another secret, which the
 *                    agent must refuse (wrong_key_file);
 *   rigd.conf        machine_keys = keys, test_knobs = allow (so that a
 *                    client's open sets a sim's fault_at);
 *   rigd.log         rigd's output; rigd.sock, its local socket.
 * Every key file is the owner's alone (mode 0600), its secret 64 hex
 * digits of getrandom's bytes.  rigd and its clients use UCX's tcp
 * transport on their veth end alone (machine_agent_environment).
 *
 * A failing call answers -1 with the reason in machine_agent_error(). */
#ifndef RIG_TESTS_MACHINE_AGENT_H
#define RIG_TESTS_MACHINE_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "two_hosts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The failure bound rig's machine link takes where the options give none
 * (rig_machine_options_t's failure_bound_ms 0), in milliseconds. */
enum { machine_default_bound_ms = 10000 };

struct machine_agent {
  struct two_hosts *hosts;
  pid_t pid; /* rigd's, a child of two_hosts_spawn; 0 once killed */
  char dir[128];
  char good_key_file[192], wrong_key_file[192];
  char log[192];
  char address[64]; /* "HOST:PORT" that rigd logged it listens on */
};

/* Makes the directory and starts rigd (its path) in side a of h with
 * --devices devices, in an environment of its own (UCX's transport and
 * device, PATH, and the test's UCX_MEM_EVENTS and sanitizers' options,
 * where set), then waits (10 s at most) for its line `listening for
 * machines on HOST:PORT`, whose address it keeps.  -1 where any step fails
 * (rigd's log then in the reason), with what it made removed. */
int machine_agent_start(struct machine_agent *a, struct two_hosts *h, const char *rigd, const char *devices);

/* Whether rigd, started and not killed, has ended on its own (crashed):
 * then it writes to stderr how it ended and its log, so that a client's
 * failure against it says why; false while it runs. */
bool machine_agent_ended(const struct machine_agent *a);

/* Kills rigd (SIGKILL), as a machine that dies: 0, or -1 where it was not
 * running. */
int machine_agent_kill(struct machine_agent *a);

/* Kills rigd where it runs and removes the directory; a zeroed agent does
 * nothing. */
void machine_agent_stop(struct machine_agent *a);

/* rigd's log as it stands, NUL-terminated, into text (of size bytes; the
 * rest dropped). */
void machine_agent_log(const struct machine_agent *a, char *text, size_t size);

/* Sets, in the calling process, what a client of side (and rigd, in
 * side a) needs of UCX: UCX_TLS=tcp and UCX_NET_DEVICES its veth end. */
void machine_agent_environment(const struct two_hosts *h, enum two_hosts_side side);

/* The reason the calling thread's last failing call gave. */
const char *machine_agent_error(void);

#ifdef __cplusplus
}
#endif

#endif
