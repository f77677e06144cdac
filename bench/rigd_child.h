/* A rigd the benchmark starts as its child (bench_rigd, bench_io_device),
 * and the benchmark's other children: none outlives the benchmark. */
#pragma once

#include "bench.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RIGD_PATH
#error "RIGD_PATH names the rigd executable"
#endif

/* How long the benchmark waits for rigd to accept. */
#define START_TIMEOUT_MS 5000

/* ---- child processes ----------------------------------------------------- */

/* The process that runs the benchmark: only it stops rigd at exit. */
static pid_t bench_pid;

/* fork, the child getting death_signal once the benchmark dies, so that no
 * child outlives a benchmark that failed. */
static pid_t fork_child(int death_signal) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) bench_fail("fork failed");
  if (pid == 0 && (prctl(PR_SET_PDEATHSIG, death_signal) != 0 || getppid() != bench_pid)) _exit(1);
  return pid;
}

/* Waits for pid; true iff it exited with status 0. */
static bool reap(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---- rigd ---------------------------------------------------------------- */

static pid_t rigd_pid;
static char rigd_dir[128];
static char rigd_socket[sizeof rigd_dir + 16];
static char rigd_config[sizeof rigd_dir + 16];

/* Stops rigd and removes its directory; true iff rigd exited with 0.  At
 * exit too, so that a benchmark that fails leaves no rigd behind. */
static bool stop_rigd(void) {
  if (getpid() != bench_pid || rigd_pid == 0) return true;
  kill(rigd_pid, SIGTERM);
  bool clean = reap(rigd_pid);
  rigd_pid = 0;
  unlink(rigd_config);
  rmdir(rigd_dir); /* rigd removed its socket */
  if (!clean) fprintf(stderr, "rigd did not exit cleanly on SIGTERM\n");
  return clean;
}

static void stop_rigd_at_exit(void) { stop_rigd(); }

static bool rigd_accepts(void) {
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  memcpy(address.sun_path, rigd_socket, strlen(rigd_socket) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) bench_fail("socket failed");
  /* rigd ends a session whose client closes before its hello quietly. */
  bool accepts = connect(fd, (struct sockaddr *)&address, sizeof address) == 0;
  close(fd);
  return accepts;
}

/* Starts rigd serving devices, with the configuration text config, on a
 * socket of a new private directory and returns once it accepts;
 * RIG_SERVICE names the socket from then on. */
static void start_rigd(const char *devices, const char *config_text) {
  const char *tmp = getenv("TMPDIR");
  snprintf(rigd_dir, sizeof rigd_dir, "%s/rig-bench-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
  if (!mkdtemp(rigd_dir)) bench_fail("mkdtemp failed");
  snprintf(rigd_socket, sizeof rigd_socket, "%s/rigd.sock", rigd_dir);
  snprintf(rigd_config, sizeof rigd_config, "%s/rigd.conf", rigd_dir);
  FILE *config = fopen(rigd_config, "w");
  if (!config || fputs(config_text, config) < 0 || fclose(config) != 0)
    bench_fail("cannot write rigd.conf");
  if (strlen(rigd_socket) >= sizeof((struct sockaddr_un){0}).sun_path) bench_fail("the socket path is too long");
  rigd_pid = fork_child(SIGTERM);
  if (rigd_pid == 0) {
    execl(RIGD_PATH, "rigd", "--socket", rigd_socket, "--devices", devices, "--config", rigd_config,
          "--foreground", (char *)NULL);
    _exit(127);
  }
  atexit(stop_rigd_at_exit);
  for (int waited_ms = 0; !rigd_accepts(); waited_ms += 10) {
    int status;
    if (waitpid(rigd_pid, &status, WNOHANG) == rigd_pid) {
      rigd_pid = 0;
      bench_fail("rigd exited before it accepted");
    }
    if (waited_ms >= START_TIMEOUT_MS) bench_fail("rigd did not accept within 5 s");
    usleep(10000);
  }
  if (setenv("RIG_SERVICE", rigd_socket, 1) != 0) bench_fail("setenv failed");
}
