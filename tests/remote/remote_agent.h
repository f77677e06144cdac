/* The agent the remote suites drive: a rigd --listen 127.0.0.1:0 serving
 * MEM:0 and SIM:0, with a key ring of one key in a private directory, and
 * the client's key file beside it, on loopback. */
#ifndef RIG_TESTS_REMOTE_AGENT_H
#define RIG_TESTS_REMOTE_AGENT_H

#include <rig/rig.h>
#include <rig/service.h>

#include <stdbool.h>
#include <sys/types.h>

typedef struct remote_agent {
  pid_t pid;
  char dir[256];
  char key_file[320];   /* the client's copy of the ring's key "client" */
  char wrong_key[320];  /* a key the ring does not hold, named "client" too */
  char log[320];
  char address[128]; /* "127.0.0.1:PORT", as rigd logged it */
} remote_agent_t;

/* The agent of the test running: each suite's init starts it (with a
 * quota of 256 MiB and the sim's test knobs admitted), its fini stops it.
 * Before any test, a suite exits 77 (its SKIP_RETURN_CODE) saying why
 * where librig has no machines or rigd does not listen for them. */
extern remote_agent_t agent;
void remote_suite_start(void);
void remote_suite_stop(void);
/* Starts the agent, config_lines added to its config file (may be "");
 * fails the test where it does not listen. */
void remote_agent_start(remote_agent_t *a, const char *config_lines);
/* SIGKILL, then waits for it. */
void remote_agent_kill(remote_agent_t *a);
/* SIGTERM, waits, and removes the directory. */
void remote_agent_stop(remote_agent_t *a);
/* Connects with the agent's key, the machine named name (NULL: the
 * default); fails the test where it does not. */
rig_machine_t *remote_connect(remote_agent_t *a, const char *name);
/* Opens NAME on m; fails the test where it does not. */
rig_device_t *remote_open(rig_machine_t *m, const char *name);
/* SIM:0 on m, each of its values taking latency_us. */
rig_device_t *remote_slow_sim(rig_machine_t *m, const char *latency_us);
/* n bytes of d's Device memory, or Pinned; fails the test where it has
 * none. */
rig_buffer_t *remote_buffer(rig_device_t *d, int64_t n);
rig_buffer_t *remote_pinned(rig_device_t *d, int64_t n);

#endif
