/* The clients of the machines tests, in side b of two hosts: each runs as
 * a two_hosts_run child (a process that has made no rig call before) and
 * answers through its exit status, 0 where every check held, else 1 with
 * the check's reason on stderr (Criterion's assertions do not work in
 * such a child). */
#ifndef RIG_TESTS_MACHINE_CLIENT_H
#define RIG_TESTS_MACHINE_CLIENT_H

#include <rig/rig.h>
#include <rig/service.h>
#include <stdint.h>
#include <stdio.h>

#include "machine_agent.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ends the client's function with 1 where cond is false, saying why. */
#define EXPECT(cond, ...)                                     \
  do {                                                        \
    if (!(cond)) {                                            \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);         \
      fprintf(stderr, __VA_ARGS__);                           \
      fputc('\n', stderr);                                    \
      return 1;                                               \
    }                                                         \
  } while (0)

/* The machine that rig_machine_connect makes of a's rigd, named name,
 * over UCX's tcp transport with key_file (its base name the key's id),
 * the given failure bound (0: rig's default); NULL, with the status and
 * rig's reason on stderr, where it does not connect.  It first sets the
 * UCX environment of side b (machine_agent_environment). */
rig_machine_t *machine_connect(const struct machine_agent *a, const char *name, const char *key_file,
                               uint32_t bound_ms);

/* rig_machine_open of name on m with config (NULL for none); NULL, with
 * the reason on stderr, where it fails. */
rig_device_t *machine_open(rig_machine_t *m, const char *name, const char *config);

/* device (no config) of the machine named machine that machine_connect
 * makes with a's good key and rig's default bound; NULL where either
 * step fails, the reason on stderr. */
rig_device_t *machine_device(const struct machine_agent *a, const char *machine, const char *device);

/* Fills a 4 KiB buffer of d with byte and reads it back: 0 where every
 * byte came back, else 1 with the reason on stderr (what: whose work). */
int machine_runs_work(rig_device_t *d, uint8_t byte, const char *what);
/* machine_runs_work on MEM:0 of a new machine named machine
 * (machine_device): 0 where a's agent serves a new client. */
int machine_serves_a_client(const struct machine_agent *a, const char *machine, uint8_t byte, const char *what);

#ifdef __cplusplus
}
#endif

#endif
