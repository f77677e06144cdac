#include "perftest_command.h"

#include <stdio.h>
#include <string.h>

#include "find_program.h"

void perftest_command(struct perftest_command *c, const struct two_hosts *h, enum two_hosts_side side,
                      const struct perftest_run *run) {
  memset(c, 0, sizeof *c);
  snprintf(c->program, sizeof c->program, "%s", run->program);
  snprintf(c->port, sizeof c->port, "%d", perftest_port);
  size_t n = 0;
  c->argv[n++] = c->program;
  if (side == TWO_HOSTS_B) {
    snprintf(c->server, sizeof c->server, "%s", two_hosts_address(h, TWO_HOSTS_A));
    c->argv[n++] = c->server;
  }
  c->argv[n++] = "-p";
  c->argv[n++] = c->port;
  if (side == TWO_HOSTS_B) {
    snprintf(c->test, sizeof c->test, "%s", run->test);
    snprintf(c->bytes, sizeof c->bytes, "%ld", run->message_bytes);
    snprintf(c->iterations, sizeof c->iterations, "%ld", run->iterations);
    snprintf(c->warmup, sizeof c->warmup, "%ld", run->warmup);
    char *options[] = {"-t", c->test, "-s", c->bytes, "-n", c->iterations, "-w", c->warmup};
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) c->argv[n++] = options[i];
  }
  snprintf(c->transports, sizeof c->transports, "UCX_TLS=tcp");
  snprintf(c->devices, sizeof c->devices, "UCX_NET_DEVICES=%s", two_hosts_device(h, side));
  c->envp[0] = c->transports;
  c->envp[1] = c->devices;
}

bool perftest_find(char *path, size_t size) { return find_program("ucx_perftest", "/usr/bin", path, size); }

double perftest_bandwidth(const char *output) {
  const char *final = strstr(output, "Final:");
  if (!final) return -1;
  /* iterations, overhead (50th percentile, average, overall), bandwidth
   * (average, overall), message rate (average, overall) */
  double iterations, median, average, overall, bandwidth, bandwidth_overall;
  if (sscanf(final, "Final: %lf %lf %lf %lf %lf %lf", &iterations, &median, &average, &overall, &bandwidth,
             &bandwidth_overall) != 6)
    return -1;
  return bandwidth_overall;
}
