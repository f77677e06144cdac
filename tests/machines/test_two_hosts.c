/* The two hosts of the machines tests (two_hosts.h): what the fixture
 * itself promises, before any agent relies on it.  The fixture is
 * infrastructure that no rule of RULES.md covers: each test names what it
 * asserts instead.  Clients on side b run as two_hosts_run's children and
 * answer through their exit status (0, or the errno of what failed). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "byte_pattern.h"
#include "find_program.h"
#include "perftest_command.h"
#include "two_hosts.h"

#define MIB (1024 * 1024)

static struct two_hosts *hosts;

/* Criterion's fini: also after a failed test. */
static void hosts_down(void) {
  two_hosts_down(hosts);
  hosts = NULL;
}

TestSuite(two_hosts, .fini = hosts_down, .timeout = 60);

/* The fixture, or the test skipped with the reason it cannot be made. */
static struct two_hosts *hosts_up(void) {
  hosts = two_hosts_up();
  if (!hosts) cr_skip_test("two hosts cannot be made here: %s", two_hosts_error());
  return hosts;
}

/* ---- Sockets ---------------------------------------------------------------- */

static struct sockaddr_in ipv4(const char *address, uint16_t port) {
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, address, &to.sin_addr);
  return to;
}

static void set_nonblocking(int s) { fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK); }

/* Connects s to address:port within ms; 0, or the errno of the failure
 * (ETIMEDOUT past ms).  s is left non-blocking. */
static int connect_within(int s, const char *address, uint16_t port, int ms) {
  struct sockaddr_in to = ipv4(address, port);
  set_nonblocking(s);
  if (connect(s, (struct sockaddr *)&to, sizeof to) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  struct pollfd p = {.fd = s, .events = POLLOUT};
  int ready;
  while ((ready = poll(&p, 1, ms)) < 0 && errno == EINTR) continue;
  if (ready == 0) return ETIMEDOUT;
  int error = 0;
  socklen_t length = sizeof error;
  getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &length);
  return error;
}

/* A listening TCP socket of side's namespace on address, its port in *port. */
static int listen_on(enum two_hosts_side side, const char *address, uint16_t *port) {
  int s = two_hosts_socket(hosts, side, AF_INET, SOCK_STREAM);
  cr_assert_geq(s, 0, "a socket in %s: %s", two_hosts_netns(hosts, side), two_hosts_error());
  struct sockaddr_in at = ipv4(address, 0);
  socklen_t length = sizeof at;
  cr_assert_eq(bind(s, (struct sockaddr *)&at, sizeof at), 0, "bind to %s: %s", address, strerror(errno));
  cr_assert_eq(listen(s, 8), 0, "listen: %s", strerror(errno));
  getsockname(s, (struct sockaddr *)&at, &length);
  *port = ntohs(at.sin_port);
  return s;
}

struct peer {
  const char *address;
  uint16_t port;
  int ms;         /* connect_within's bound */
  uint64_t bytes; /* what send_pattern writes */
};

/* In a namespace: a connect to the peer; 0 or its errno. */
static int connect_answer(void *arg) {
  const struct peer *p = arg;
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return errno;
  int answer = connect_within(s, p->address, p->port, p->ms);
  close(s);
  return answer;
}

static int write_all(int s, const uint8_t *bytes, size_t n) {
  while (n > 0) {
    ssize_t written = send(s, bytes, n, MSG_NOSIGNAL);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0 && errno == EAGAIN) {
      struct pollfd p = {.fd = s, .events = POLLOUT};
      if (poll(&p, 1, 15000) == 0) return ETIMEDOUT;
      continue;
    }
    if (written <= 0) return written < 0 ? errno : EPIPE;
    bytes += written;
    n -= (size_t)written;
  }
  return 0;
}

/* In a namespace: p->bytes of the pattern to the peer, then the end of
 * the stream; 0 or the errno of what failed. */
static int send_pattern(void *arg) {
  const struct peer *p = arg;
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return errno;
  int answer = connect_within(s, p->address, p->port, p->ms);
  static uint8_t chunk[MIB];
  for (uint64_t sent = 0; answer == 0 && sent < p->bytes; sent += sizeof chunk) {
    size_t n = p->bytes - sent < sizeof chunk ? (size_t)(p->bytes - sent) : sizeof chunk;
    byte_pattern_fill(chunk, sent, n);
    answer = write_all(s, chunk, n);
  }
  if (answer != 0) fprintf(stderr, "send_pattern to %s:%u: %s\n", p->address, p->port, strerror(answer));
  close(s);
  return answer;
}

/* Accepts one connection on listener and reads it to its end: 0 where it
 * carried exactly bytes of the pattern, else 1 (the reason on stderr). */
static int receive_pattern(int listener, uint64_t bytes) {
  struct pollfd p = {.fd = listener, .events = POLLIN};
  if (poll(&p, 1, 15000) != 1) {
    fprintf(stderr, "receive_pattern: no connection within 15 s\n");
    return 1;
  }
  int s = accept(listener, NULL, NULL);
  if (s < 0) return 1;
  static uint8_t chunk[MIB];
  uint64_t received = 0;
  for (;;) {
    p = (struct pollfd){.fd = s, .events = POLLIN};
    if (poll(&p, 1, 15000) != 1) {
      fprintf(stderr, "receive_pattern: nothing for 15 s after %llu bytes\n", (unsigned long long)received);
      return 1;
    }
    ssize_t n = read(s, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fprintf(stderr, "receive_pattern: read after %llu bytes: %s\n", (unsigned long long)received, strerror(errno));
      return 1;
    }
    if (n == 0) break;
    size_t differs = byte_pattern_differs(chunk, received, (size_t)n);
    if (differs < (size_t)n) {
      fprintf(stderr, "receive_pattern: byte %llu differs from the pattern\n",
              (unsigned long long)(received + differs));
      return 1;
    }
    received += (uint64_t)n;
  }
  close(s);
  if (received == bytes) return 0;
  fprintf(stderr, "receive_pattern: %llu bytes, not %llu\n", (unsigned long long)received,
          (unsigned long long)bytes);
  return 1;
}

/* Asserts that a stream of bytes from side b to listener's port on a's
 * address carries the pattern whole: the receiver is a child of this
 * process holding listener, the sender a client in b. */
static void assert_stream_carries(int listener, uint16_t port, uint64_t bytes) {
  fflush(NULL);
  pid_t receiver = fork();
  cr_assert_geq(receiver, 0, "fork: %s", strerror(errno));
  if (receiver == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    _exit(receive_pattern(listener, bytes));
  }
  struct peer a = {two_hosts_address(hosts, TWO_HOSTS_A), port, 5000, bytes};
  int sent = two_hosts_run(hosts, TWO_HOSTS_B, send_pattern, &a);
  int status;
  while (waitpid(receiver, &status, 0) < 0 && errno == EINTR) continue;
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "the receiver in a did not get the %llu bytes of the pattern (status 0x%x, its reason above)",
            (unsigned long long)bytes, status);
  cr_assert_eq(sent, 0, "the sender in b answered %d (%s)", sent, sent < 0 ? two_hosts_error() : strerror(sent));
}

/* Asserts: 64 MiB written in b to a's address arrive in a, each byte the
 * pattern's, the stream ending where the sender ended it. */
Test(two_hosts, stream_from_b_carries_64_mib_to_a) {
  hosts_up();
  uint16_t port;
  int listener = listen_on(TWO_HOSTS_A, two_hosts_address(hosts, TWO_HOSTS_A), &port);
  assert_stream_carries(listener, port, 64 * MIB);
  close(listener);
}

/* Asserts the namespaces' isolation: a's 127.0.0.1 is a's own (a client in
 * a reaches a listener there, one in b is refused), and a's address is
 * reached from b but not from the root namespace (nothing connects, and
 * the listener has no connection waiting). */
Test(two_hosts, loopback_and_address_of_a_stay_inside) {
  hosts_up();
  uint16_t port;
  int local = listen_on(TWO_HOSTS_A, "127.0.0.1", &port);
  struct peer loopback = {"127.0.0.1", port, 2000, 0};
  int from_a = two_hosts_run(hosts, TWO_HOSTS_A, connect_answer, &loopback);
  cr_assert_eq(from_a, 0, "a's client of a's 127.0.0.1:%u answered %d (%s)", port, from_a,
               from_a < 0 ? two_hosts_error() : strerror(from_a));
  int from_b = two_hosts_run(hosts, TWO_HOSTS_B, connect_answer, &loopback);
  cr_assert_eq(from_b, ECONNREFUSED, "b's client of 127.0.0.1:%u answered %d (%s), not ECONNREFUSED", port, from_b,
               from_b < 0 ? two_hosts_error() : strerror(from_b));
  close(local);

  const char *address = two_hosts_address(hosts, TWO_HOSTS_A);
  int listener = listen_on(TWO_HOSTS_A, address, &port);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int from_root = connect_within(s, address, port, 2000);
  close(s);
  cr_assert_neq(from_root, 0, "the root namespace connected to a's %s:%u", address, port);
  struct pollfd waiting = {.fd = listener, .events = POLLIN};
  cr_assert_eq(poll(&waiting, 1, 0), 0, "a's listener on %s:%u has a connection from the root namespace", address,
               port);
  struct peer a = {address, port, 5000, 0};
  from_b = two_hosts_run(hosts, TWO_HOSTS_B, connect_answer, &a);
  cr_assert_eq(from_b, 0, "b's client of %s:%u answered %d (%s)", address, port, from_b,
               from_b < 0 ? two_hosts_error() : strerror(from_b));
  close(listener);
}

/* ---- A cut ------------------------------------------------------------------ */

/* A stream from b to a that this process drives at both ends. */
struct flow {
  int sender, receiver;
  uint64_t sent, received;
  struct timespec last_arrival;
};

/* Moves the flow's bytes for at most ms, until received reaches until or
 * nothing arrived for idle_ms with nothing left to read (0: no such end);
 * asserts each byte that arrives is the pattern's. */
static void pump(struct flow *f, long ms, uint64_t until, long idle_ms) {
  static uint8_t chunk[256 * 1024];
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  clock_gettime(CLOCK_MONOTONIC, &f->last_arrival);
  while (two_hosts_ms_since(&start) < ms && f->received < until) {
    struct pollfd p[2] = {{.fd = f->sender, .events = POLLOUT}, {.fd = f->receiver, .events = POLLIN}};
    poll(p, 2, 10);
    if (idle_ms && !(p[1].revents & POLLIN) && two_hosts_ms_since(&f->last_arrival) >= idle_ms) return;
    if (p[0].revents & POLLOUT) {
      byte_pattern_fill(chunk, f->sent, sizeof chunk);
      ssize_t n = send(f->sender, chunk, sizeof chunk, MSG_NOSIGNAL);
      if (n > 0) f->sent += (uint64_t)n;
    }
    if (p[1].revents & POLLIN) {
      ssize_t n = read(f->receiver, chunk, sizeof chunk);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      cr_assert_gt(n, 0, "the stream ended after %llu bytes: %s", (unsigned long long)f->received,
                   n < 0 ? strerror(errno) : "end of stream");
      size_t differs = byte_pattern_differs(chunk, f->received, (size_t)n);
      cr_assert_eq(differs, (size_t)n, "byte %llu differs from the pattern",
                   (unsigned long long)(f->received + differs));
      f->received += (uint64_t)n;
      clock_gettime(CLOCK_MONOTONIC, &f->last_arrival);
    }
  }
}

/* Asserts a cut: a stream from b to a that carried 8 MiB carries nothing
 * more in 2 s once the link is cut (after what was on its way when the cut
 * came is read), a connect from b to a while cut fails, and not by its
 * timeout, within 5 s; after the restore a new connection from b carries
 * 1 MiB of the pattern to a. */
Test(two_hosts, cut_stops_the_stream_and_restore_lets_a_new_one_through) {
  hosts_up();
  const char *address = two_hosts_address(hosts, TWO_HOSTS_A);
  uint16_t port;
  int listener = listen_on(TWO_HOSTS_A, address, &port);
  struct flow f = {.sender = two_hosts_socket(hosts, TWO_HOSTS_B, AF_INET, SOCK_STREAM)};
  cr_assert_geq(f.sender, 0, "a socket in b: %s", two_hosts_error());
  int connected = connect_within(f.sender, address, port, 5000);
  cr_assert_eq(connected, 0, "b's connect to %s:%u: %s", address, port, strerror(connected));
  f.receiver = accept(listener, NULL, NULL);
  cr_assert_geq(f.receiver, 0, "accept: %s", strerror(errno));
  set_nonblocking(f.receiver);
  pump(&f, 10000, 8 * MIB, 0);
  cr_assert_geq(f.received, 8 * MIB, "the stream carried %llu bytes in 10 s before the cut",
                (unsigned long long)f.received);

  cr_assert_eq(two_hosts_cut(hosts), 0, "cut: %s", two_hosts_error());
  pump(&f, 3000, UINT64_MAX, 500);
  uint64_t before = f.received;
  pump(&f, 2000, UINT64_MAX, 0);
  cr_assert_eq(f.received, before, "%llu bytes arrived in the 2 s while the link was cut",
               (unsigned long long)(f.received - before));

  struct peer a = {address, port, 5000, 0};
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  int while_cut = two_hosts_run(hosts, TWO_HOSTS_B, connect_answer, &a);
  long took = two_hosts_ms_since(&start);
  cr_assert(while_cut > 0 && while_cut != ETIMEDOUT,
            "b's connect to %s:%u while cut answered %d (%s) after %ld ms, not a failure of its own", address, port,
            while_cut, while_cut < 0 ? two_hosts_error() : strerror(while_cut), took);
  cr_assert_lt(took, 5000, "b's connect while cut took %ld ms to fail", took);

  cr_assert_eq(two_hosts_restore(hosts), 0, "restore: %s", two_hosts_error());
  assert_stream_carries(listener, port, MIB);
  close(f.sender);
  close(f.receiver);
  close(listener);
}

/* ---- Entering a side -------------------------------------------------------- */

struct own_device {
  const char *own, *other;
};

/* In a namespace: 0 where its interfaces and its /sys/class/net (which UCX
 * reads) hold its own veth end and not the other side's, else 1. */
static int sees_own_device(void *arg) {
  const struct own_device *d = arg;
  char own[64], other[64];
  snprintf(own, sizeof own, "/sys/class/net/%s", d->own);
  snprintf(other, sizeof other, "/sys/class/net/%s", d->other);
  bool right = if_nametoindex(d->own) != 0 && if_nametoindex(d->other) == 0 && access(own, F_OK) == 0 &&
               access(other, F_OK) != 0;
  if (!right)
    fprintf(stderr, "in %s: %s %s, %s %s\n", d->own, own, access(own, F_OK) == 0 ? "is there" : "is missing", other,
            access(other, F_OK) == 0 ? "is there" : "is missing");
  return right ? 0 : 1;
}

static ino_t inode_of(const char *path) {
  struct stat s;
  return stat(path, &s) == 0 ? s.st_ino : 0;
}

/* A `sleep 30` that two_hosts_spawn started on side. */
static pid_t spawn_sleep(enum two_hosts_side side) {
  char sleep_path[256];
  cr_assert(find_program("sleep", "/usr/bin:/bin", sleep_path, sizeof sleep_path), "no sleep in /usr/bin, /bin");
  char *argv[] = {sleep_path, "30", NULL};
  pid_t pid = two_hosts_spawn(hosts, side, argv, NULL);
  cr_assert_gt(pid, 0, "spawn of %s in %s: %s", sleep_path, two_hosts_netns(hosts, side), two_hosts_error());
  return pid;
}

/* Asserts: a function run on a side sees that side's veth end alone,
 * through its interfaces and /sys/class/net; a spawned process lives in
 * its side's network namespace (/proc/PID/ns/net is /run/netns/NAME); a
 * kill reaps it, and a second kill of it is refused with a reason. */
Test(two_hosts, run_and_spawn_enter_their_side) {
  hosts_up();
  const char *a = two_hosts_device(hosts, TWO_HOSTS_A), *b = two_hosts_device(hosts, TWO_HOSTS_B);
  struct own_device in_a = {a, b}, in_b = {b, a};
  cr_assert_eq(two_hosts_run(hosts, TWO_HOSTS_A, sees_own_device, &in_a), 0, "a's view (above)");
  cr_assert_eq(two_hosts_run(hosts, TWO_HOSTS_B, sees_own_device, &in_b), 0, "b's view (above)");

  for (int side = TWO_HOSTS_A; side <= TWO_HOSTS_B; side++) {
    pid_t pid = spawn_sleep(side);
    char ns[64], named[64];
    snprintf(ns, sizeof ns, "/proc/%d/ns/net", (int)pid);
    snprintf(named, sizeof named, "/run/netns/%s", two_hosts_netns(hosts, side));
    cr_assert_neq(inode_of(named), 0);
    cr_assert_eq(inode_of(ns), inode_of(named), "process %d is not in %s", (int)pid, named);
    cr_assert_eq(two_hosts_kill(hosts, pid), 0, "kill: %s", two_hosts_error());
    cr_assert(kill(pid, 0) != 0 && errno == ESRCH, "process %d is still there after its kill", (int)pid);
    cr_assert_eq(two_hosts_kill(hosts, pid), -1, "a second kill of %d", (int)pid);
    cr_assert(strstr(two_hosts_error(), "no child"), "the second kill's reason: %s", two_hosts_error());
  }
}

/* ---- Up and down ------------------------------------------------------------ */

/* The number of entries of dir whose names start with prefix. */
static int entries_starting(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  int count = 0;
  for (struct dirent *e; d && (e = readdir(d));) count += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  if (d) closedir(d);
  return count;
}

/* The lines of `ip netns list` that start with prefix. */
static int listed_starting(const char *prefix) {
  char ip[256], command[300], line[256];
  cr_assert(find_program("ip", "/usr/sbin:/sbin", ip, sizeof ip), "no ip");
  snprintf(command, sizeof command, "%s netns list", ip);
  FILE *out = popen(command, "r");
  cr_assert_not_null(out, "popen %s: %s", command, strerror(errno));
  int count = 0;
  while (fgets(line, sizeof line, out)) count += strncmp(line, prefix, strlen(prefix)) == 0;
  cr_assert_eq(pclose(out), 0, "%s failed", command);
  return count;
}

/* Asserts: down kills and reaps what was spawned on either side, and leaves
 * no namespace of this PID (in /run/netns and in `ip netns list`, where
 * both were before) and no interface of it in the root namespace's
 * /sys/class/net. */
Test(two_hosts, down_leaves_no_namespace_interface_or_child) {
  hosts_up();
  char prefix[32];
  snprintf(prefix, sizeof prefix, "rig-%d-", (int)getpid());
  cr_assert_eq(entries_starting("/run/netns", prefix), 2, "/run/netns while up");
  cr_assert_eq(listed_starting(prefix), 2, "ip netns list while up");
  pid_t in_a = spawn_sleep(TWO_HOSTS_A), in_b = spawn_sleep(TWO_HOSTS_B);
  int down = two_hosts_down(hosts);
  hosts = NULL;
  cr_assert_eq(down, 0, "down: %s", two_hosts_error());
  cr_assert(kill(in_a, 0) != 0 && errno == ESRCH, "a's child %d is still there after down", (int)in_a);
  cr_assert(kill(in_b, 0) != 0 && errno == ESRCH, "b's child %d is still there after down", (int)in_b);
  cr_assert_eq(entries_starting("/run/netns", prefix), 0, "/run/netns holds %s* after down", prefix);
  cr_assert_eq(listed_starting(prefix), 0, "ip netns list shows %s* after down", prefix);
  cr_assert_eq(entries_starting("/sys/class/net", prefix), 0, "/sys/class/net holds %s* after down", prefix);
}

/* Asserts: up first deletes a namespace that a process now dead left (as
 * a test killed before its teardown does), and not one of a live process. */
Test(two_hosts, up_removes_namespaces_of_dead_processes_first) {
  char ip[256], command[1200];
  cr_assert(find_program("ip", "/usr/sbin:/sbin", ip, sizeof ip), "no ip");
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, NULL, 0);
  pid_t alive = getppid();
  char stale[32], kept[32], stale_path[64], kept_path[64];
  snprintf(stale, sizeof stale, "rig-%d-a", (int)dead);
  snprintf(kept, sizeof kept, "rig-%d-b", (int)alive);
  snprintf(stale_path, sizeof stale_path, "/run/netns/%s", stale);
  snprintf(kept_path, sizeof kept_path, "/run/netns/%s", kept);
  snprintf(command, sizeof command, "%s netns add %s && %s netns add %s", ip, stale, ip, kept);
  if (system(command) != 0) cr_skip_test("`%s` failed: two hosts cannot be made here", command);
  struct two_hosts *h = two_hosts_up();
  bool stale_gone = access(stale_path, F_OK) != 0, kept_there = access(kept_path, F_OK) == 0;
  snprintf(command, sizeof command, "%s netns delete %s 2>/dev/null; %s netns delete %s", ip, stale, ip, kept);
  int cleaned = system(command);
  hosts = h;
  cr_assert_not_null(h, "up: %s", two_hosts_error());
  cr_assert(stale_gone, "%s, of dead process %d, is still there after up", stale_path, (int)dead);
  cr_assert(kept_there, "%s, of live process %d, went with up", kept_path, (int)alive);
  cr_assert_eq(cleaned, 0, "%s failed", command);
}

/* In a child: 0 where up, without the privileges it needs, answers NULL
 * with a reason that names them, else 1. */
static int up_without_privileges(void) {
  if (geteuid() == 0 && setuid(65534) != 0) return 1;
  struct two_hosts *h = two_hosts_up();
  if (h) {
    two_hosts_down(h);
    return 1;
  }
  fprintf(stderr, "up as uid %u: %s\n", (unsigned)geteuid(), two_hosts_error());
  return strstr(two_hosts_error(), "CAP_NET_ADMIN") ? 0 : 1;
}

/* Asserts: up refuses with a reason naming CAP_NET_ADMIN where the process
 * lacks it (uid 65534), and refuses a second fixture in one process (the
 * names carry the PID) with a reason. */
Test(two_hosts, up_refuses_without_privileges_and_twice_in_a_process) {
  fflush(NULL);
  pid_t child = fork();
  if (child == 0) _exit(up_without_privileges());
  int status;
  waitpid(child, &status, 0);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "up without privileges (its reason above)");
  hosts_up();
  struct two_hosts *again = two_hosts_up();
  cr_assert_null(again, "a second up in process %d", (int)getpid());
  cr_assert(strstr(two_hosts_error(), "already"), "the second up's reason: %s", two_hosts_error());
}

/* ---- UCX across the two hosts ----------------------------------------------- */

/* Asserts: ucx_perftest's server in a and its client in b, over UCX's tcp
 * transport on the veth alone (perftest_command, the benchmarks'
 * baseline), run ucp_am_bw to its end, exit 0 and report a bandwidth. */
Test(two_hosts, ucx_perftest_runs_between_the_hosts) {
  char program[256];
  if (!perftest_find(program, sizeof program)) cr_skip_test("no ucx_perftest (Debian's ucx-utils) in /usr/bin or PATH");
  hosts_up();
  struct perftest_run run = {program, "ucp_am_bw", 65536, 500, 50, NULL};
  char text[16384];
  cr_assert_eq(perftest_between(hosts, &run, text, sizeof text), 0, "ucx_perftest %s between the hosts: %s",
               run.test, text);
  double bandwidth = perftest_bandwidth(text);
  cr_assert_gt(bandwidth, 0, "the client reported no bandwidth: %s", text);
  cr_log_info("ucx_perftest %s of %ld bytes from %s to %s: %.1f MB/s", run.test, run.message_bytes,
              two_hosts_device(hosts, TWO_HOSTS_B), two_hosts_device(hosts, TWO_HOSTS_A), bandwidth);
}
