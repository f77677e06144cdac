/* ucx_perftest across the two hosts (two_hosts.h): its server on side a,
 * its client on side b aimed at a's address, both over UCX's tcp
 * transport on their own veth end alone.  The command line of the machines
 * suite's UCX check, and the baseline the benchmarks of the link run in
 * the same run to compare against. */
#ifndef RIG_TESTS_PERFTEST_COMMAND_H
#define RIG_TESTS_PERFTEST_COMMAND_H

#include <stdbool.h>
#include <stddef.h>

#include "two_hosts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The port of ucx_perftest's own exchange of addresses (its default):
 * each fixture's namespaces have their ports to themselves. */
enum { perftest_port = 13337 };

struct perftest_run {
  const char *program; /* ucx_perftest's path (perftest_find) */
  const char *test;    /* its -t: "ucp_am_bw", "tag_bw", ... */
  long message_bytes;  /* -s */
  long iterations;     /* -n */
  long warmup;         /* -w */
  const char *wait;    /* -E: "sleep" (wait for each completion asleep,
                          as rig's link does), or NULL: ucx_perftest's
                          own, which polls */
};

/* argv and envp for two_hosts_spawn (or execve), which point into the
 * struct itself: not to be copied. */
struct perftest_command {
  char *argv[16];
  char *envp[4];
  char program[256], test[32], server[16], port[8], bytes[24], iterations[24], warmup[24], wait[8];
  char transports[16], devices[48];
};

/* The command of side for run: on side a the server (-p perftest_port),
 * on side b the client of a's address with run's test, message size and
 * iterations; each with UCX_TLS=tcp and UCX_NET_DEVICES its veth end. */
void perftest_command(struct perftest_command *c, const struct two_hosts *h, enum two_hosts_side side,
                      const struct perftest_run *run);

/* Runs run between h's sides: ucx_perftest's server in a (spawned, and
 * killed once the client is done), its client in b once the server
 * listens (within 10 s).  The client's output, NUL-terminated, is left in
 * output; 0 where the client exited 0, else -1 with the reason in output
 * (the client's own words, where it ran). */
int perftest_between(struct two_hosts *h, const struct perftest_run *run, char *output, size_t size);
/* Writes ucx_perftest's path into path; false where it is not installed. */
bool perftest_find(char *path, size_t size);
/* For a benchmark named bench that runs ucx_perftest across two hosts:
 * writes ucx_perftest's path into path and makes the hosts; where either
 * cannot be had, says why on stderr and exits, 1 without ucx_perftest, 2
 * where the hosts cannot be made here. */
struct two_hosts *perftest_hosts_or_exit(const char *bench, char *path, size_t size);

/* The overall bandwidth in MB/s that a client's output reports on its
 * "Final:" line, or -1 where output has no such line. */
double perftest_bandwidth(const char *output);
/* The median latency in microseconds that a latency test's client reports
 * on its "Final:" line (half a round trip, for the ping-pong tests such as
 * ucp_am_lat), or -1 where output has no such line. */
double perftest_latency(const char *output);

#ifdef __cplusplus
}
#endif

#endif
