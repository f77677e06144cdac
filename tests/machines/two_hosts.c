#define _GNU_SOURCE
#include "two_hosts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "find_program.h"

extern char **environ;

enum {
  name_size = 24,        /* rig-PID-a: at most 13 bytes, within IFNAMSIZ's 15 */
  output_size = 4096,    /* what is kept of an ip command's output */
  carrier_wait_ms = 5000 /* for both ends' carrier, after they are set up */
};

#define NETNS_DIR "/run/netns"
#define NAME_FORMAT "rig-%d-%c"

struct host {
  char name[name_size]; /* the namespace's and its veth end's */
  char address[16];
};

struct two_hosts {
  pid_t owner;
  char ip[256];
  struct host side[2];
  pid_t *children; /* two_hosts_spawn's, kept for teardown */
  size_t children_count, children_capacity;
};

static _Thread_local char error_text[1024];
/* The fixture the process made and has not taken down (one at a time). */
static struct two_hosts *live;

__attribute__((format(printf, 1, 2))) static void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(error_text, sizeof error_text, format, args);
  va_end(args);
}

const char *two_hosts_error(void) { return error_text; }

const char *two_hosts_address(const struct two_hosts *h, enum two_hosts_side side) { return h->side[side].address; }
const char *two_hosts_device(const struct two_hosts *h, enum two_hosts_side side) { return h->side[side].name; }
const char *two_hosts_netns(const struct two_hosts *h, enum two_hosts_side side) { return h->side[side].name; }

/* ---- ip ------------------------------------------------------------------ */

static bool find_ip(char *path, size_t size) {
  if (find_program("ip", "/usr/sbin:/sbin:/usr/bin:/bin", path, size)) return true;
  const char *search = getenv("PATH");
  fail("no `ip` (iproute2) in /usr/sbin, /sbin, /usr/bin, /bin or PATH (%s)", search ? search : "unset");
  return false;
}

/* Reads fd to its end into output (size bytes, NUL-terminated, the rest
 * dropped), without its last newline. */
static void read_all(int fd, char *output, size_t size) {
  size_t kept = 0;
  char chunk[1024];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size_t take = (size_t)n < size - 1 - kept ? (size_t)n : size - 1 - kept;
    memcpy(output + kept, chunk, take);
    kept += take;
  }
  while (kept > 0 && output[kept - 1] == '\n') kept--;
  output[kept] = '\0';
}

static int wait_for(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

/* Runs ip with args (NULL-terminated, args[0] "ip"), its stdout and
 * stderr into output; 0 where it exits 0, else -1 with the command, its
 * status and its words as the reason. */
static int ip_command(const char *ip, char *output, size_t size, const char *const args[]) {
  char command[512] = "";
  for (size_t i = 0, used = 0; args[i] && used < sizeof command; i++)
    used += (size_t)snprintf(command + used, sizeof command - used, "%s%s", i ? " " : "", args[i]);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    fail("%s: pipe: %s (errno %d)", command, strerror(errno), errno);
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  static char *const plain_environment[] = {"LC_ALL=C", NULL};
  pid_t child;
  int spawned = posix_spawn(&child, ip, &actions, NULL, (char *const *)args, plain_environment);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    fail("%s: posix_spawn of %s: %s (errno %d)", command, ip, strerror(spawned), spawned);
    return -1;
  }
  read_all(out[0], output, size);
  close(out[0]);
  int status = wait_for(child);
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (status != -1 && WIFEXITED(status))
    fail("%s: exit %d: %s", command, WEXITSTATUS(status), output);
  else
    fail("%s: ended by signal %d: %s", command, status == -1 ? 0 : WTERMSIG(status), output);
  return -1;
}

#define IP(ip, ...) ip_command(ip, output, sizeof output, (const char *const[]){"ip", __VA_ARGS__, NULL})

/* ---- The checks before ip ------------------------------------------------ */

/* True where the process may make namespaces and links: CAP_NET_ADMIN for
 * the links, CAP_SYS_ADMIN for the mounts of NETNS_DIR. */
static bool privileged(void) {
  FILE *status = fopen("/proc/self/status", "re");
  unsigned long long effective = 0;
  bool found = false;
  char line[256];
  while (status && fgets(line, sizeof line, status))
    if (sscanf(line, "CapEff: %llx", &effective) == 1) found = true;
  if (status) fclose(status);
  if (!found) {
    fail("the capabilities of this process are unknown: no CapEff in /proc/self/status");
    return false;
  }
  const unsigned long long needed = 1ull << 12 | 1ull << 21; /* CAP_NET_ADMIN, CAP_SYS_ADMIN */
  if ((effective & needed) == needed) return true;
  fail("two hosts need root: CAP_NET_ADMIN (12) and CAP_SYS_ADMIN (21), and this process (uid %u) has "
       "CapEff 0x%llx",
       (unsigned)geteuid(), effective);
  return false;
}

static bool network_namespaces(void) {
  if (access("/proc/self/ns/net", F_OK) == 0) return true;
  fail("this kernel has no network namespaces: /proc/self/ns/net: %s (errno %d)", strerror(errno), errno);
  return false;
}

/* ---- Namespaces of earlier runs ------------------------------------------ */

/* The PID a fixture's namespace name carries (its side in *side), or 0
 * where name is none. */
static pid_t owner_of(const char *name, char *side) {
  int pid;
  char again[NAME_MAX + 1];
  if (sscanf(name, NAME_FORMAT, &pid, side) != 2 || pid <= 0 || (*side != 'a' && *side != 'b')) return 0;
  snprintf(again, sizeof again, NAME_FORMAT, pid, *side);
  return strcmp(again, name) == 0 ? pid : 0;
}

static bool left_behind(pid_t pid) {
  if (pid == getpid()) return !(live && live->owner == pid);
  return kill(pid, 0) != 0 && errno == ESRCH;
}

static int sweep_with(const char *ip) {
  DIR *dir = opendir(NETNS_DIR);
  if (!dir) {
    if (errno == ENOENT) return 0;
    fail("%s: %s (errno %d)", NETNS_DIR, strerror(errno), errno);
    return -1;
  }
  struct {
    pid_t pid;
    char side;
  } stale[64];
  size_t count = 0;
  for (struct dirent *e; count < 64 && (e = readdir(dir));) {
    stale[count].pid = owner_of(e->d_name, &stale[count].side);
    if (stale[count].pid && left_behind(stale[count].pid)) count++;
  }
  closedir(dir);
  char output[output_size], name[name_size], path[sizeof NETNS_DIR + name_size];
  for (size_t i = 0; i < count; i++) {
    snprintf(name, sizeof name, NAME_FORMAT, (int)stale[i].pid, stale[i].side);
    snprintf(path, sizeof path, NETNS_DIR "/%s", name);
    /* Suites run side by side: another's sweep may have deleted it
     * first.  Only a namespace still there is a failure. */
    if (IP(ip, "netns", "delete", name) != 0 && access(path, F_OK) == 0) return -1;
  }
  return (int)count;
}

int two_hosts_sweep(void) {
  char ip[256];
  return find_ip(ip, sizeof ip) ? sweep_with(ip) : -1;
}

/* ---- Up and down --------------------------------------------------------- */

long two_hosts_ms_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Waits for both ends' carrier (LOWER_UP), which a veth has once both
 * ends are up: before it, UCX lists no device and packets drop. */
static int wait_for_carrier(struct two_hosts *h) {
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  char output[output_size];
  for (int s = 0; s < 2; s++) {
    for (;;) {
      if (IP(h->ip, "-n", h->side[s].name, "-o", "link", "show", "dev", h->side[s].name) != 0) return -1;
      if (strstr(output, "LOWER_UP")) break;
      if (two_hosts_ms_since(&start) > carrier_wait_ms) {
        fail("the link has no carrier %d ms after its ends were set up: %s", carrier_wait_ms, output);
        return -1;
      }
      nanosleep(&(struct timespec){.tv_nsec = 20 * 1000000}, NULL);
    }
  }
  return 0;
}

static int set_ends(struct two_hosts *h, const char *state) {
  char output[output_size];
  for (int s = 0; s < 2; s++)
    if (IP(h->ip, "-n", h->side[s].name, "link", "set", "dev", h->side[s].name, state) != 0) return -1;
  return 0;
}

static int make_link(struct two_hosts *h) {
  char output[output_size];
  struct host *a = &h->side[TWO_HOSTS_A], *b = &h->side[TWO_HOSTS_B];
  if (IP(h->ip, "netns", "add", a->name) != 0 || IP(h->ip, "netns", "add", b->name) != 0) return -1;
  if (IP(h->ip, "link", "add", a->name, "netns", a->name, "type", "veth", "peer", "name", b->name, "netns",
         b->name) != 0)
    return -1;
  for (int s = 0; s < 2; s++) {
    char prefix[24];
    snprintf(prefix, sizeof prefix, "%s/30", h->side[s].address);
    if (IP(h->ip, "-n", h->side[s].name, "address", "add", prefix, "dev", h->side[s].name) != 0 ||
        IP(h->ip, "-n", h->side[s].name, "link", "set", "dev", "lo", "up") != 0)
      return -1;
  }
  return set_ends(h, "up") == 0 ? wait_for_carrier(h) : -1;
}

/* Deletes both namespaces where they exist; the first failure's reason. */
static int delete_namespaces(struct two_hosts *h) {
  char output[output_size], first[sizeof error_text] = "";
  for (int s = 0; s < 2; s++) {
    char path[64];
    snprintf(path, sizeof path, NETNS_DIR "/%s", h->side[s].name);
    if (access(path, F_OK) == 0 && IP(h->ip, "netns", "delete", h->side[s].name) != 0 && !first[0])
      snprintf(first, sizeof first, "%s", error_text);
  }
  if (!first[0]) return 0;
  fail("%s", first);
  return -1;
}

static bool name_hosts(struct two_hosts *h) {
  pid_t pid = getpid();
  if (pid >= 1 << 22) {
    fail("PID %d is past 2^22: it has no /30 of its own in 10.0.0.0/8", (int)pid);
    return false;
  }
  uint32_t subnet = 10u << 24 | (uint32_t)pid << 2;
  for (int s = 0; s < 2; s++) {
    uint32_t address = subnet + 1 + (uint32_t)s;
    snprintf(h->side[s].name, name_size, NAME_FORMAT, (int)pid, s == TWO_HOSTS_A ? 'a' : 'b');
    snprintf(h->side[s].address, sizeof h->side[s].address, "%u.%u.%u.%u", address >> 24, address >> 16 & 255,
             address >> 8 & 255, address & 255);
  }
  return true;
}

struct two_hosts *two_hosts_up(void) {
  if (live && live->owner == getpid()) {
    fail("two hosts are up in this process (%d) already: their names would be the same", (int)getpid());
    return NULL;
  }
  if (!privileged() || !network_namespaces()) return NULL;
  struct two_hosts *h = calloc(1, sizeof *h);
  if (!h) {
    fail("no memory for the fixture (%zu bytes)", sizeof *h);
    return NULL;
  }
  h->owner = getpid();
  if (!find_ip(h->ip, sizeof h->ip) || !name_hosts(h) || sweep_with(h->ip) < 0) {
    free(h);
    return NULL;
  }
  if (make_link(h) != 0) {
    char reason[sizeof error_text];
    snprintf(reason, sizeof reason, "%s", error_text);
    delete_namespaces(h);
    fail("%s", reason);
    free(h);
    return NULL;
  }
  live = h;
  return h;
}

int two_hosts_cut(struct two_hosts *h) { return set_ends(h, "down"); }

int two_hosts_restore(struct two_hosts *h) { return set_ends(h, "up") == 0 ? wait_for_carrier(h) : -1; }

int two_hosts_kill(struct two_hosts *h, pid_t pid) {
  for (size_t i = 0; i < h->children_count; i++) {
    if (h->children[i] != pid) continue;
    kill(pid, SIGKILL);
    wait_for(pid);
    h->children[i] = h->children[--h->children_count];
    return 0;
  }
  fail("pid %d is no child that two_hosts_spawn started and kept", (int)pid);
  return -1;
}

int two_hosts_down(struct two_hosts *h) {
  if (!h) return 0;
  int result = 0;
  if (h->owner != getpid()) {
    fail("two_hosts_down in process %d, a child of the fixture's %d: left to its maker", (int)getpid(),
         (int)h->owner);
    result = -1;
  } else {
    while (h->children_count > 0) two_hosts_kill(h, h->children[0]);
    result = delete_namespaces(h);
    if (live == h) live = NULL;
  }
  free(h->children);
  free(h);
  return result;
}

/* ---- Inside a namespace ---------------------------------------------------- */

/* What a child that could not enter its namespace (or exec) reports to its
 * parent through a close-on-exec pipe, before it exits. */
struct entry_failure {
  int step; /* an index of entry_steps */
  int error;
};

static const char *const entry_steps[] = {"outlive its parent", "open its namespace", "setns(CLONE_NEWNET)",
                                          "unshare(CLONE_NEWNS)", "make its mounts private",
                                          "mount a sysfs of its namespace on /sys", "execve"};

enum { step_parent, step_open, step_setns, step_unshare, step_private, step_sysfs, step_exec };

__attribute__((noreturn)) static void report_and_exit(int report, int step) {
  struct entry_failure failure = {step, errno};
  ssize_t written = write(report, &failure, sizeof failure);
  (void)written;
  _exit(127);
}

/* In a forked child: enters the namespace at path as `ip netns exec`
 * does (the network namespace, then a mount namespace of its own with a
 * sysfs of that network namespace on /sys, which UCX reads its devices
 * from), dying with its parent; reports a failure and exits. */
static void enter(const char *path, const char *name, pid_t parent, int report) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) {
    errno = ESRCH;
    report_and_exit(report, step_parent);
  }
  int netns = open(path, O_RDONLY | O_CLOEXEC);
  if (netns < 0) report_and_exit(report, step_open);
  if (setns(netns, CLONE_NEWNET) != 0) report_and_exit(report, step_setns);
  close(netns);
  if (unshare(CLONE_NEWNS) != 0) report_and_exit(report, step_unshare);
  if (mount("", "/", NULL, MS_SLAVE | MS_REC, NULL) != 0) report_and_exit(report, step_private);
  unsigned long flags = 0;
  struct statvfs sys;
  if (umount2("/sys", MNT_DETACH) != 0 && statvfs("/sys", &sys) == 0 && (sys.f_flag & ST_RDONLY)) flags = MS_RDONLY;
  if (mount(name, "/sys", "sysfs", flags, NULL) != 0) report_and_exit(report, step_sysfs);
}

/* Forks a child that enters side's namespace; in the parent, the child's
 * pid once the child has closed report's write end (by exec, or as it
 * starts fn in run) or -1 with the reason it gave. */
static pid_t fork_inside(struct two_hosts *h, enum two_hosts_side side, int report[2]) {
  char path[64];
  snprintf(path, sizeof path, NETNS_DIR "/%s", h->side[side].name);
  if (pipe2(report, O_CLOEXEC) != 0) {
    fail("pipe: %s (errno %d)", strerror(errno), errno);
    return -1;
  }
  pid_t parent = getpid();
  fflush(NULL); /* nothing buffered twice */
  pid_t child = fork();
  if (child < 0) {
    fail("fork: %s (errno %d)", strerror(errno), errno);
    close(report[0]);
    close(report[1]);
    return -1;
  }
  if (child == 0) {
    close(report[0]);
    enter(path, h->side[side].name, parent, report[1]);
  }
  return child;
}

/* In the parent: waits for the child's report; -1 (the child reaped)
 * where it could not enter or exec. */
static int entered(struct two_hosts *h, enum two_hosts_side side, pid_t child, int report, const char *what) {
  struct entry_failure failure;
  ssize_t n;
  while ((n = read(report, &failure, sizeof failure)) < 0 && errno == EINTR) continue;
  close(report);
  if (n != (ssize_t)sizeof failure) return 0;
  wait_for(child);
  fail("the child for %s in %s could not %s: %s (errno %d)", what, h->side[side].name, entry_steps[failure.step],
       strerror(failure.error), failure.error);
  return -1;
}

pid_t two_hosts_spawn(struct two_hosts *h, enum two_hosts_side side, char *const argv[], char *const envp[]) {
  if (h->children_count == h->children_capacity) {
    size_t capacity = h->children_capacity ? 2 * h->children_capacity : 8;
    pid_t *grown = realloc(h->children, capacity * sizeof *grown);
    if (!grown) {
      fail("no memory to keep %zu children", capacity);
      return -1;
    }
    h->children = grown;
    h->children_capacity = capacity;
  }
  int report[2];
  pid_t child = fork_inside(h, side, report);
  if (child < 0) return -1;
  if (child == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(argv[0], argv, envp ? envp : environ);
    report_and_exit(report[1], step_exec);
  }
  close(report[1]);
  if (entered(h, side, child, report[0], argv[0]) != 0) return -1;
  h->children[h->children_count++] = child;
  return child;
}

int two_hosts_run(struct two_hosts *h, enum two_hosts_side side, int (*fn)(void *arg), void *arg) {
  int report[2];
  pid_t child = fork_inside(h, side, report);
  if (child < 0) return -1;
  if (child == 0) {
    close(report[1]);
    int answer = fn(arg);
    fflush(NULL);
    _exit(answer & 255);
  }
  close(report[1]);
  if (entered(h, side, child, report[0], "a function") != 0) return -1;
  int status = wait_for(child);
  if (status != -1 && WIFEXITED(status)) return WEXITSTATUS(status);
  fail("the function's child in %s ended by signal %d", h->side[side].name, status == -1 ? 0 : WTERMSIG(status));
  return -1;
}

int two_hosts_socket(struct two_hosts *h, enum two_hosts_side side, int domain, int type) {
  char path[64];
  snprintf(path, sizeof path, NETNS_DIR "/%s", h->side[side].name);
  int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int there = open(path, O_RDONLY | O_CLOEXEC);
  int made = -1;
  if (home < 0 || there < 0)
    fail("open %s: %s (errno %d)", home < 0 ? "/proc/thread-self/ns/net" : path, strerror(errno), errno);
  else if (setns(there, CLONE_NEWNET) != 0)
    fail("setns to %s: %s (errno %d)", path, strerror(errno), errno);
  else {
    made = socket(domain, type | SOCK_CLOEXEC, 0);
    int error = errno;
    if (setns(home, CLONE_NEWNET) != 0) {
      /* Every later socket of this thread would be made in the wrong
       * namespace: no test's result would mean anything. */
      fprintf(stderr, "two_hosts_socket: setns back from %s: %s\n", path, strerror(errno));
      abort();
    }
    if (made < 0) fail("socket(%d, %d) in %s: %s (errno %d)", domain, type, path, strerror(error), error);
  }
  if (home >= 0) close(home);
  if (there >= 0) close(there);
  return made;
}
