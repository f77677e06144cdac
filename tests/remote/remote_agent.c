/* The remote suites' agent (remote_agent.h). */
#define _GNU_SOURCE
#include "remote_agent.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { skipped_exit = 77 };

static void write_file(const char *path, const char *text, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  cr_assert(fd >= 0, "open %s: %s", path, strerror(errno));
  size_t n = strlen(text);
  cr_assert_eq(write(fd, text, n), (ssize_t)n, "write %s", path);
  close(fd);
}

/* Reads up to n - 1 bytes of path into out. */
static void read_file(const char *path, char *out, size_t n) {
  out[0] = '\0';
  FILE *f = fopen(path, "re");
  if (!f) return;
  size_t got = fread(out, 1, n - 1, f);
  out[got] = '\0';
  fclose(f);
}

/* Where the suite cannot run, before any test. */
static void remote_agent_or_skip(void) {
  rig_machine_options_t none = {.size = sizeof none, .key_file = "/dev/null"};
  if (rig_machine_connect("127.0.0.1:1", &none, NULL) == RIG_EOPEN &&
      strstr(rig_last_error(), "built without machines")) {
    printf("skipped: %s\n", rig_last_error());
    exit(skipped_exit);
  }
  char command[512], help[4096];
  snprintf(command, sizeof command, "%s --help", RIGD_PATH);
  FILE *p = popen(command, "re");
  size_t got = p ? fread(help, 1, sizeof help - 1, p) : 0;
  help[got] = '\0';
  if (p) pclose(p);
  if (!strstr(help, "--listen")) {
    printf("skipped: rigd does not listen for machines (no --listen)\n");
    exit(skipped_exit);
  }
}

void remote_agent_start(remote_agent_t *a, const char *config_lines) {
  static int count;
  memset(a, 0, sizeof *a);
  const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(a->dir, sizeof a->dir, "%s/rig-remote-%d-%d", base, (int)getpid(), count++);
  cr_assert_eq(mkdir(a->dir, 0700), 0, "mkdir %s: %s", a->dir, strerror(errno));
  char ring[300], ring_key[340], config[320], text[1024];
  snprintf(ring, sizeof ring, "%s/ring", a->dir);
  cr_assert_eq(mkdir(ring, 0700), 0);
  const char *secret = "a secret of the remote suites, at least 32 bytes long";
  snprintf(ring_key, sizeof ring_key, "%s/client", ring);
  write_file(ring_key, secret, 0600);
  char mine[300], wrong[300];
  snprintf(mine, sizeof mine, "%s/mine", a->dir);
  snprintf(wrong, sizeof wrong, "%s/wrong", a->dir);
  cr_assert_eq(mkdir(mine, 0700), 0);
  cr_assert_eq(mkdir(wrong, 0700), 0);
  snprintf(a->key_file, sizeof a->key_file, "%s/client", mine);
  write_file(a->key_file, secret, 0600);
  snprintf(a->wrong_key, sizeof a->wrong_key, "%s/client", wrong);
  write_file(a->wrong_key, "another secret, which the agent's ring lacks", 0600);
  snprintf(config, sizeof config, "%s/rigd.conf", a->dir);
  snprintf(text, sizeof text, "machine_keys = %s\n%s", ring, config_lines);
  write_file(config, text, 0600);
  snprintf(a->log, sizeof a->log, "%s/rigd.log", a->dir);
  char socket_path[320];
  snprintf(socket_path, sizeof socket_path, "%s/rigd.sock", a->dir);

  fflush(NULL);
  a->pid = fork();
  cr_assert(a->pid >= 0, "fork: %s", strerror(errno));
  if (a->pid == 0) {
    int fd = open(a->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(RIGD_PATH, "rigd", "--socket", socket_path, "--devices", "MEM:0,SIM:0", "--config", config, "--listen",
          "127.0.0.1:0", "--foreground", (char *)NULL);
    _exit(127);
  }
  const char *said = "listening for machines on ";
  char log[8192];
  // Up to 30 s: a loaded machine (or a sanitizer's build) starts rigd slowly.
  for (int i = 0; i < 3000; i++) {
    read_file(a->log, log, sizeof log);
    const char *at = strstr(log, said);
    if (at && strchr(at, '\n')) {
      at += strlen(said);
      size_t n = strcspn(at, " \n");
      cr_assert(n < sizeof a->address, "rigd's address: %s", log);
      memcpy(a->address, at, n);
      a->address[n] = '\0';
      return;
    }
    if (waitpid(a->pid, NULL, WNOHANG) == a->pid) {
      a->pid = 0;
      break;
    }
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  cr_assert_fail("rigd did not listen for machines: %s", log);
}

static void remove_tree(const char *dir) {
  char command[600];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  cr_expect_eq(system(command), 0);
}

void remote_agent_kill(remote_agent_t *a) {
  if (a->pid <= 0) return;
  kill(a->pid, SIGKILL);
  waitpid(a->pid, NULL, 0);
  a->pid = 0;
}

void remote_agent_stop(remote_agent_t *a) {
  if (a->pid > 0) {
    kill(a->pid, SIGTERM);
    waitpid(a->pid, NULL, 0);
    a->pid = 0;
  }
  if (a->dir[0]) remove_tree(a->dir);
}

rig_machine_t *remote_connect(remote_agent_t *a, const char *name) {
  rig_machine_options_t o = {.size = sizeof o, .name = name, .key_file = a->key_file};
  rig_machine_t *m = NULL;
  rig_status_t s = rig_machine_connect(a->address, &o, &m);
  cr_assert(s == RIG_OK && m, "rig_machine_connect %s: %s: %s", a->address, rig_status_name(s), rig_last_error());
  return m;
}

rig_device_t *remote_open(rig_machine_t *m, const char *name) {
  rig_device_t *d = NULL;
  rig_status_t s = rig_machine_open(m, name, NULL, &d);
  cr_assert(s == RIG_OK && d, "rig_machine_open %s: %s: %s", name, rig_status_name(s), rig_last_error());
  return d;
}

remote_agent_t agent;

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
  (void)set;
  remote_agent_or_skip();
}

void remote_suite_start(void) { remote_agent_start(&agent, "quota_bytes = 268435456\ntest_knobs = allow\n"); }

void remote_suite_stop(void) { remote_agent_stop(&agent); }

rig_device_t *remote_slow_sim(rig_machine_t *m, const char *latency_us) {
  char config[64];
  snprintf(config, sizeof config, "latency_us=%s", latency_us);
  rig_open_options_t o = {sizeof o, config};
  rig_device_t *d = NULL;
  rig_status_t s = rig_machine_open(m, "SIM:0", &o, &d);
  cr_assert(s == RIG_OK && d, "rig_machine_open SIM:0 (%s): %s: %s", config, rig_status_name(s), rig_last_error());
  return d;
}

/* n bytes of d's memory of kind; fails the test where it has none. */
static rig_buffer_t *buffer_of(rig_device_t *d, int64_t n, rig_memory_t kind) {
  rig_buffer_t *b = NULL;
  rig_status_t s = rig_buffer_create(d, n, kind, &b);
  cr_assert(s == RIG_OK, "rig_buffer_create %s of %lld: %s: %s", rig_device_name(d), (long long)n,
            rig_status_name(s), rig_last_error());
  return b;
}

rig_buffer_t *remote_buffer(rig_device_t *d, int64_t n) { return buffer_of(d, n, RIG_MEMORY_DEVICE); }

rig_buffer_t *remote_pinned(rig_device_t *d, int64_t n) { return buffer_of(d, n, RIG_MEMORY_PINNED); }
