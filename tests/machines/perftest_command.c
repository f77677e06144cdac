#define _GNU_SOURCE
#include "perftest_command.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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
    if (run->wait) {
      snprintf(c->wait, sizeof c->wait, "%s", run->wait);
      c->argv[n++] = "-E";
      c->argv[n++] = c->wait;
    }
  }
  snprintf(c->transports, sizeof c->transports, "UCX_TLS=tcp");
  snprintf(c->devices, sizeof c->devices, "UCX_NET_DEVICES=%s", two_hosts_device(h, side));
  c->envp[0] = c->transports;
  c->envp[1] = c->devices;
}

bool perftest_find(char *path, size_t size) { return find_program("ucx_perftest", "/usr/bin", path, size); }

struct two_hosts *perftest_hosts_or_exit(const char *bench, char *path, size_t size) {
  if (!perftest_find(path, size)) {
    fprintf(stderr, "%s: no ucx_perftest (Debian's ucx-utils)\n", bench);
    exit(1);
  }
  struct two_hosts *h = two_hosts_up();
  if (!h) {
    fprintf(stderr, "%s: two hosts cannot be made here: %s\n", bench, two_hosts_error());
    exit(2);
  }
  return h;
}

/* The numbers of output's "Final:" line: iterations, latency or overhead
 * (50th percentile, average, overall), bandwidth (average, overall).
 * False where output has no such line. */
static bool final_line(const char *output, double numbers[6]) {
  const char *final = strstr(output, "Final:");
  return final && sscanf(final, "Final: %lf %lf %lf %lf %lf %lf", &numbers[0], &numbers[1], &numbers[2],
                         &numbers[3], &numbers[4], &numbers[5]) == 6;
}

double perftest_bandwidth(const char *output) {
  double numbers[6];
  return final_line(output, numbers) ? numbers[5] : -1;
}

double perftest_latency(const char *output) {
  double numbers[6];
  return final_line(output, numbers) ? numbers[1] : -1;
}

/* True once process pid's network namespace has a TCP socket listening
 * on port (its /proc/PID/net/tcp), within ms. */
static bool listening_within(pid_t pid, unsigned port, long ms) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/net/tcp", (int)pid);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    FILE *tcp = fopen(path, "re");
    bool found = false;
    unsigned local_port, state;
    while (tcp && fgets(line, sizeof line, tcp))
      if (sscanf(line, " %*d: %*x:%x %*x:%*x %x", &local_port, &state) == 2 && local_port == port && state == 0x0A)
        found = true;
    if (tcp) fclose(tcp);
    if (found) return true;
    nanosleep(&(struct timespec){.tv_nsec = 20 * 1000000}, NULL);
  } while (two_hosts_ms_since(&start) < ms);
  return false;
}

/* What two_hosts_run runs in b: a command, its output into a file. */
struct command_into {
  char *const *argv, *const *envp;
  int output;
};

static int exec_into(void *arg) {
  const struct command_into *c = arg;
  dup2(c->output, 1);
  dup2(c->output, 2);
  execve(c->argv[0], c->argv, c->envp);
  return 127;
}

int perftest_between(struct two_hosts *h, const struct perftest_run *run, char *output, size_t size) {
  struct perftest_command server, client;
  perftest_command(&server, h, TWO_HOSTS_A, run);
  perftest_command(&client, h, TWO_HOSTS_B, run);
  pid_t serving = two_hosts_spawn(h, TWO_HOSTS_A, server.argv, server.envp);
  if (serving <= 0) {
    snprintf(output, size, "the server did not start: %s", two_hosts_error());
    return -1;
  }
  int status = -1;
  if (!listening_within(serving, perftest_port, 10000)) {
    snprintf(output, size, "ucx_perftest's server listens on no port %d in 10 s", perftest_port);
  } else {
    int file = memfd_create("rig-perftest-output", MFD_CLOEXEC);
    if (file < 0) {
      snprintf(output, size, "memfd_create: %s", strerror(errno));
    } else {
      struct command_into command = {client.argv, client.envp, file};
      status = two_hosts_run(h, TWO_HOSTS_B, exec_into, &command);
      ssize_t n = pread(file, output, size - 1, 0);
      output[n > 0 ? n : 0] = '\0';
      close(file);
      if (status < 0) snprintf(output, size, "the client did not run: %s", two_hosts_error());
    }
  }
  two_hosts_kill(h, serving);
  return status == 0 ? 0 : -1;
}
