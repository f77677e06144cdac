#define _GNU_SOURCE
#include "machine_agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
  listen_wait_ms = 10000,
  secret_bytes = 32 /* written as 64 hex digits: a secret of 64 bytes */
};

static const char listening[] = "listening for machines on ";

static _Thread_local char error_text[2048];

__attribute__((format(printf, 1, 2))) static int fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(error_text, sizeof error_text, format, args);
  va_end(args);
  return -1;
}

const char *machine_agent_error(void) { return error_text; }

void machine_agent_environment(const struct two_hosts *h, enum two_hosts_side side) {
  setenv("UCX_TLS", "tcp", 1);
  setenv("UCX_NET_DEVICES", two_hosts_device(h, side), 1);
}

/* ---- The directory ---------------------------------------------------------- */

/* The files and directories of the agent's directory, children first: the
 * order they are removed in. */
static const char *const made[] = {"keys/tester", "client/tester", "wrong/tester", "keys",   "client",
                                   "wrong",       "rigd.conf",     "rigd.log",     "rigd.sock"};

static void remove_directory(const struct machine_agent *a) {
  char path[256];
  for (size_t i = 0; i < sizeof made / sizeof *made; i++) {
    snprintf(path, sizeof path, "%s/%s", a->dir, made[i]);
    if (unlink(path) != 0 && errno == EISDIR) rmdir(path);
  }
  rmdir(a->dir);
}

static int write_file(const char *path, const char *text, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return fail("open %s: %s (errno %d)", path, strerror(errno), errno);
  size_t length = strlen(text);
  ssize_t written = write(fd, text, length);
  int error = errno;
  close(fd);
  if (written != (ssize_t)length) return fail("write %s: %s (errno %d)", path, strerror(error), error);
  return 0;
}

/* A key file of a fresh secret at path: 64 hex digits and a newline. */
static int write_key(const char *path, char secret[2 * secret_bytes + 2]) {
  uint8_t bytes[secret_bytes];
  if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes)
    return fail("getrandom of %d bytes: %s (errno %d)", secret_bytes, strerror(errno), errno);
  for (int i = 0; i < secret_bytes; i++) snprintf(secret + 2 * i, 3, "%02x", bytes[i]);
  strcat(secret, "\n");
  return write_file(path, secret, 0600);
}

static int make_directory(struct machine_agent *a) {
  static int counter;
  const char *tmp = getenv("TMPDIR");
  snprintf(a->dir, sizeof a->dir, "%s/rig-machine-agent-%d-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid(), ++counter);
  if (mkdir(a->dir, 0700) != 0) return fail("mkdir %s: %s (errno %d)", a->dir, strerror(errno), errno);
  char path[256], secret[2 * secret_bytes + 2] = "", other[2 * secret_bytes + 2] = "";
  const char *dirs[] = {"keys", "client", "wrong"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", a->dir, dirs[i]);
    if (mkdir(path, 0700) != 0) return fail("mkdir %s: %s (errno %d)", path, strerror(errno), errno);
  }
  snprintf(path, sizeof path, "%s/keys/tester", a->dir);
  snprintf(a->good_key_file, sizeof a->good_key_file, "%s/client/tester", a->dir);
  snprintf(a->wrong_key_file, sizeof a->wrong_key_file, "%s/wrong/tester", a->dir);
  if (write_key(path, secret) != 0 || write_file(a->good_key_file, secret, 0600) != 0 ||
      write_key(a->wrong_key_file, other) != 0)
    return -1;
  char config[512];
  snprintf(config, sizeof config, "machine_keys = %s/keys\ntest_knobs = allow\n", a->dir);
  snprintf(path, sizeof path, "%s/rigd.conf", a->dir);
  snprintf(a->log, sizeof a->log, "%s/rigd.log", a->dir);
  return write_file(path, config, 0600);
}

/* ---- rigd ------------------------------------------------------------------- */

/* What rigd keeps of the test's environment: UCX_MEM_EVENTS and the
 * sanitizers' options, which the sanitizer presets set for every process
 * of their suites (README).  Without UCX_MEM_EVENTS=no, UCX's memory hooks
 * in rigd take madvise, which glibc calls as a thread ends, after
 * ThreadSanitizer let go of that thread: rigd dies of SIGSEGV and serves
 * no later client. */
static const char *const kept_variables[] = {"UCX_MEM_EVENTS", "TSAN_OPTIONS", "ASAN_OPTIONS", "LSAN_OPTIONS",
                                             "UBSAN_OPTIONS"};
enum { kept_count = sizeof kept_variables / sizeof *kept_variables };

/* Appends to envp, from its entry n on, the entry of environ of each of
 * kept_variables that is set (its first); answers the entries envp then
 * holds. */
static size_t keep_environment(char **envp, size_t n) {
  for (size_t i = 0; i < kept_count; i++) {
    size_t length = strlen(kept_variables[i]);
    for (char **entry = environ; *entry; entry++)
      if (strncmp(*entry, kept_variables[i], length) == 0 && (*entry)[length] == '=') {
        envp[n++] = *entry;
        break;
      }
  }
  return n;
}

void machine_agent_log(const struct machine_agent *a, char *text, size_t size) {
  text[0] = '\0';
  FILE *log = fopen(a->log, "re");
  if (!log) return;
  size_t n = fread(text, 1, size - 1, log);
  text[n] = '\0';
  fclose(log);
}

/* True while pid runs: a zombie (state Z in /proc/PID/stat) has ended. */
static bool running(pid_t pid) {
  char path[64], stat_line[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f) return false;
  bool read = fgets(stat_line, sizeof stat_line, f) != NULL;
  fclose(f);
  const char *state = read ? strrchr(stat_line, ')') : NULL;
  return state && state[1] == ' ' && state[2] != 'Z' && state[2] != 'X';
}

/* Waits for rigd's line of the address it listens on and keeps it. */
static int await_listening(struct machine_agent *a) {
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  char text[8192];
  for (;;) {
    machine_agent_log(a, text, sizeof text);
    const char *line = strstr(text, listening);
    if (line && strchr(line, '\n')) {
      line += strlen(listening);
      size_t n = strcspn(line, " \n");
      if (n == 0 || n >= sizeof a->address) return fail("rigd logged no address it listens on: %s", text);
      memcpy(a->address, line, n);
      a->address[n] = '\0';
      return 0;
    }
    if (!running(a->pid)) return fail("rigd ended before it listened; its log: %s", text);
    if (two_hosts_ms_since(&start) > listen_wait_ms)
      return fail("rigd logged no `%s...` in %d ms; its log: %s", listening, listen_wait_ms, text);
    nanosleep(&(struct timespec){.tv_nsec = 20 * 1000000}, NULL);
  }
}

int machine_agent_start(struct machine_agent *a, struct two_hosts *h, const char *rigd, const char *devices) {
  memset(a, 0, sizeof *a);
  a->hosts = h;
  if (make_directory(a) != 0) {
    char reason[sizeof error_text];
    snprintf(reason, sizeof reason, "%s", error_text);
    machine_agent_stop(a);
    return fail("%s", reason);
  }
  char listen[64], socket_path[192], config[192], tls[] = "UCX_TLS=tcp", net[64], path[] = "PATH=/usr/bin:/bin";
  snprintf(listen, sizeof listen, "%s:0", two_hosts_address(h, TWO_HOSTS_A));
  snprintf(socket_path, sizeof socket_path, "%s/rigd.sock", a->dir);
  snprintf(config, sizeof config, "%s/rigd.conf", a->dir);
  snprintf(net, sizeof net, "UCX_NET_DEVICES=%s", two_hosts_device(h, TWO_HOSTS_A));
  /* The shell only points rigd's output at its log, then becomes rigd. */
  char *argv[] = {"/bin/sh", "-c", "log=$1; shift; exec \"$@\" >\"$log\" 2>&1", "sh", a->log, (char *)rigd,
                  "--foreground", "--socket", socket_path, "--config", config, "--listen", listen, "--devices",
                  (char *)devices, NULL};
  char *envp[3 + kept_count + 1] = {tls, net, path};
  envp[keep_environment(envp, 3)] = NULL;
  a->pid = two_hosts_spawn(h, TWO_HOSTS_A, argv, envp);
  if (a->pid <= 0) {
    a->pid = 0;
    fail("rigd did not start in side a: %s", two_hosts_error());
  } else if (await_listening(a) == 0) {
    return 0;
  }
  char reason[sizeof error_text];
  snprintf(reason, sizeof reason, "%s", error_text);
  machine_agent_stop(a);
  return fail("%s", reason);
}

bool machine_agent_ended(const struct machine_agent *a) {
  siginfo_t info = {0};
  /* WNOWAIT: the kill of machine_agent_stop still reaps it. */
  if (a->pid <= 0 || waitid(P_PID, (id_t)a->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != a->pid)
    return false;
  char text[8192];
  machine_agent_log(a, text, sizeof text);
  fprintf(stderr, "the agent (rigd, pid %d) ended on its own, %s %d; its log:\n%s\n", (int)a->pid,
          info.si_code == CLD_EXITED ? "exit status" : "by signal", info.si_status, text);
  return true;
}

int machine_agent_kill(struct machine_agent *a) {
  if (a->pid <= 0) return fail("rigd is not running: it was killed already or never started");
  int killed = two_hosts_kill(a->hosts, a->pid);
  a->pid = 0;
  return killed == 0 ? 0 : fail("%s", two_hosts_error());
}

void machine_agent_stop(struct machine_agent *a) {
  if (a->pid > 0) machine_agent_kill(a);
  if (a->dir[0]) remove_directory(a);
  memset(a, 0, sizeof *a);
}
