/* rigd, the per-host service, beside what bounds it, in the same run.  Each
 * latency is the p50 and p99 of TRIPS round trips after WARMUP:
 *   pingpong        two processes spinning on two words of a shared page:
 *                   the physical limit of a cross-process round trip;
 *   fill_inprocess  rig_buffer_submit_fill + rig_point_wait of a 4 KiB
 *                   buffer of an in-process MEM:0;
 *   fill_rigd       the same on MEM:0@rigd, a proxy of a rigd this
 *                   benchmark starts, serving its own MEM:0;
 *   signal_mask     the block and restore of every signal, the mask rig
 *                   makes around a driver's calls unless its facts say
 *                   they are signal-safe (ERR-06): two system calls.
 * The latencies run pinned (placement.h): this process on one CPU, the
 * ping-pong's child and every thread of rigd on another; and the
 * ping-pong's trips and fill_rigd's run in turn, ROUND of each at a time,
 * so that both cross the CPUs the machine gives the run at that moment
 * (on a virtual machine the two CPUs' distance changes under a run).
 * `fill_rigd_masks_per_trip` counts the pthread_sigmask calls rig made on
 * this thread during the fills' rounds, per fill_rigd trip (mask_calls.h
 * interposes it; the in-process MEM:0 is signal-safe as well, so any mask
 * it made would count against rigd).
 * Then `rigd_submits_K: N /s`, the fills per second that K client processes
 * (1, 2, 4, 8) submit through rigd together, each waiting every 64; and
 * `rigd_idle_cpu: X %`, the share of one core rigd uses once its clients
 * are gone and their sessions ended (a second later).  Ratios: fill_rigd's p50 and p99 over pingpong's (goal for the
 * p50: at most 3) and over fill_inprocess's (goal for the p50: at most 4),
 * the signal masks' share of fill_rigd's p50 (their calls per trip, halved,
 * times signal_mask's p50; goal: 0), and each client count's submissions
 * per second over one client's.  Then
 * `launches_inprocess: N /s` and `launches_rigd: N /s`, LAUNCHES launches
 * of an empty host function (bench/kernels/empty.c), one thread each,
 * submitted back to back and waited for once, on an in-process SIM:0 and
 * on SIM:0@rigd (rigd runs the client's host code: host_code = allow), and
 * `ratio launches_inprocess_vs_rigd`.  If MEM:0@rigd does not open it says
 * why, prints the baselines and rigd's idle CPU, and exits 1. */
#define _GNU_SOURCE

#include "bench.h"
#include "mask_calls.h"
#include "placement.h"
#include "rigd_child.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define WARMUP 2000
#define TRIPS 20000
/* The trips of the ping-pong and of rigd's fills run in turn, this many of
 * each at a time. */
#define ROUND 500
#define FILL_BYTES 4096
/* Submissions between two waits of a client, and how long a client submits. */
#define CLIENT_BATCH 64
#define CLIENT_NS 1e9
#define MAX_CLIENTS 8
#define IDLE_SECONDS 2
/* How long rigd may take to end the sessions of the clients just gone
 * (closing their instances) before it counts as idle. */
#define SETTLE_SECONDS 1
/* How long the benchmark waits for a client. */
#define CLIENT_TIMEOUT_MS 10000
/* Launches per measurement of launches per second, after a warm-up. */
#define LAUNCHES 20000
#define LAUNCH_WARMUP 1000

/* ---- latency ----------------------------------------------------------- */

/* One round trip, the i-th (from 1) of its series. */
typedef void (*trip_fn)(void *context, uint64_t i);

typedef struct latency {
  double p50, p99;
} latency;

/* A series of round trips: WARMUP untimed, then TRIPS timed. */
typedef struct series {
  trip_fn trip;
  void *context;
  uint64_t next; /* the next trip's number, from 1 */
  double *ns;    /* the timed trips' nanoseconds */
} series;

static series series_make(trip_fn trip, void *context) {
  series s = {trip, context, 1, malloc(TRIPS * sizeof(double))};
  if (!s.ns) bench_fail("out of memory");
  return s;
}

/* Runs the series' next n trips. */
static void series_run(series *s, uint64_t n) {
  for (uint64_t k = 0; k < n && s->next <= WARMUP + TRIPS; k++, s->next++) {
    double start = bench_now_ns();
    s->trip(s->context, s->next);
    if (s->next > WARMUP) s->ns[s->next - WARMUP - 1] = bench_now_ns() - start;
  }
}

static bool series_done(const series *s) { return s->next > WARMUP + TRIPS; }

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The p50 and p99 of a finished series, whose samples it frees. */
static latency series_latency(series *s) {
  qsort(s->ns, TRIPS, sizeof *s->ns, compare_doubles);
  latency l = {s->ns[TRIPS / 2], s->ns[TRIPS * 99 / 100]};
  free(s->ns);
  s->ns = NULL;
  return l;
}

static latency measure_trips(trip_fn trip, void *context) {
  series s = series_make(trip, context);
  series_run(&s, WARMUP + TRIPS);
  return series_latency(&s);
}

static void print_latency(const char *name, latency l) {
  printf("%s_p50: %.0f ns\n%s_p99: %.0f ns\n", name, l.p50, name, l.p99);
  fflush(stdout);
}

/* ---- baseline: shared-memory ping-pong ---------------------------------- */

/* Each word on a cache line of its own: a write of one does not move the
 * other's line.  `serving` is the child's futex word: 1 while it answers
 * pings, 0 while it sleeps (so that rigd's round trips, run in turn with
 * the ping-pong's, have its CPU), 2 once it is to exit. */
typedef struct pingpong {
  _Alignas(64) _Atomic uint64_t ping;
  _Alignas(64) _Atomic uint64_t pong;
  _Alignas(64) _Atomic uint32_t serving;
  pid_t child;
} pingpong;

static void futex_wait_u32(_Atomic uint32_t *word, uint32_t seen) {
  syscall(SYS_futex, word, FUTEX_WAIT, seen, NULL, NULL, 0);
}

static void futex_wake_u32(_Atomic uint32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0); }

static void pingpong_trip(void *context, uint64_t i) {
  pingpong *words = context;
  atomic_store_explicit(&words->ping, i, memory_order_release);
  while (atomic_load_explicit(&words->pong, memory_order_acquire) != i) {
  }
}

_Noreturn static void pingpong_child(pingpong *words) {
  uint64_t answered = 0;
  for (;;) {
    uint32_t serving;
    while ((serving = atomic_load_explicit(&words->serving, memory_order_acquire)) == 0)
      futex_wait_u32(&words->serving, 0);
    if (serving == 2) _exit(0);
    while (atomic_load_explicit(&words->serving, memory_order_relaxed) == 1) {
      uint64_t ping = atomic_load_explicit(&words->ping, memory_order_acquire);
      if (ping != answered) atomic_store_explicit(&words->pong, answered = ping, memory_order_release);
    }
  }
}

/* The ping-pong's child, on the far CPU, asleep until a series runs. */
static pingpong *pingpong_start(const placement *where) {
  pingpong *words = mmap(NULL, sizeof *words, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (words == MAP_FAILED) bench_fail("mmap of the shared page failed");
  words->child = fork_child(SIGKILL);
  if (words->child == 0) {
    placement_put(where, 0, where->far_cpu);
    pingpong_child(words);
  }
  return words;
}

static void pingpong_serve(pingpong *words, uint32_t serving) {
  atomic_store_explicit(&words->serving, serving, memory_order_release);
  if (serving != 0) futex_wake_u32(&words->serving);
}

static void pingpong_stop(pingpong *words) {
  pingpong_serve(words, 2);
  if (!reap(words->child)) bench_fail("the ping-pong child failed");
  munmap(words, sizeof *words);
}

/* Runs the ping-pong's series and the n others in turn with it, ROUND
 * trips of each at a time, so that all see the same CPUs as the machine
 * moves them: each round of the ping-pong starts with an untimed trip,
 * which wakes its child. */
static latency measure_beside_pingpong(pingpong *words, series *others, int n) {
  series ping = series_make(pingpong_trip, words);
  uint64_t woken = 0;
  while (!series_done(&ping)) {
    pingpong_serve(words, 1);
    pingpong_trip(words, UINT64_MAX - woken++);
    series_run(&ping, ROUND);
    pingpong_serve(words, 0);
    for (int k = 0; k < n; k++) series_run(&others[k], ROUND);
  }
  return series_latency(&ping);
}

/* ---- fills ----------------------------------------------------------------- */

static void fill_trip(void *context, uint64_t i) {
  rig_point_t p;
  BENCH_CHECK(rig_buffer_submit_fill(context, (uint8_t)i, NULL, 0, &p));
  BENCH_CHECK(rig_point_wait(p));
}

/* Checks b holds the last fill's bytes: a fill that did nothing would be
 * timed for nothing. */
static void check_last_fill(rig_buffer_t *b) {
  uint8_t bytes[FILL_BYTES];
  BENCH_CHECK(rig_buffer_blit_to_bytes(b, 0, bytes, FILL_BYTES, 0, FILL_BYTES));
  uint8_t last = (uint8_t)(WARMUP + TRIPS);
  for (size_t i = 0; i < FILL_BYTES; i++)
    if (bytes[i] != last) bench_fail("a fill did not land: the buffer lacks the last fill's bytes");
}

static rig_buffer_t *fill_buffer(rig_device_t *d) {
  rig_buffer_t *b = NULL;
  BENCH_CHECK(rig_buffer_create(d, FILL_BYTES, RIG_MEMORY_DEVICE, &b));
  return b;
}

/* ---- the floor under a driver call: its signal mask ------------------------ */

/* rig blocks signals across each call into a driver that is not
 * signal-safe (ERR-06): two system calls.  One trip: a block and the
 * restore. */
static void mask_trip(void *context, uint64_t i) {
  (void)i;
  sigset_t *all = context, old;
  pthread_sigmask(SIG_BLOCK, all, &old);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static latency measure_mask(void) {
  sigset_t all;
  sigfillset(&all);
  return measure_trips(mask_trip, &all);
}

/* ---- launches per second ------------------------------------------------ */

#ifdef RIG_BENCH_KERNELS

/* Submits count launches of s, one thread each; the last one's point. */
static rig_point_t submit_launches(rig_submission_t *s, int count) {
  rig_point_t p = {0};
  for (int i = 0; i < count; i++) {
    rig_run_t *run = NULL;
    BENCH_CHECK(rig_submission_take(s, &run));
    BENCH_CHECK(rig_run_groups(run, 0, 1, 1, 1));
    BENCH_CHECK(rig_run_threads(run, 0, 1, 1, 1));
    BENCH_CHECK(rig_submit(run, NULL, 0, NULL, 0, &p));
  }
  return p;
}

/* LAUNCHES launches of the empty kernel on d per second, back to back. */
static double launches_per_second(rig_device_t *d) {
  int64_t n = 0;
  void *bytes = bench_read_kernel("empty", &n);
  rig_image_t *image = NULL;
  BENCH_CHECK(rig_image_load(d, bytes, n, &image));
  free(bytes);
  rig_function_t *f = NULL;
  BENCH_CHECK(rig_image_resolve(image, "empty", &f));
  if (!f) bench_fail("the kernel object lacks its function");
  rig_part_t part = {.kind = RIG_LAUNCH, .u.launch = {.function = f}};
  rig_submission_t *s = NULL;
  BENCH_CHECK(rig_submission_make(d, &part, 1, NULL, &s));
  BENCH_CHECK(rig_point_wait(submit_launches(s, LAUNCH_WARMUP)));
  double start = bench_now_ns();
  BENCH_CHECK(rig_point_wait(submit_launches(s, LAUNCHES)));
  double ns = bench_now_ns() - start;
  rig_submission_unref(s);
  rig_image_unref(image);
  return LAUNCHES / (ns * 1e-9);
}
#else
/* Without clang the benchmark's kernels are not built: no launches. */
static double launches_per_second(rig_device_t *d) {
  (void)d;
  bench_fail("the benchmark's kernels are not built (no clang for this host)");
  return 0;
}
#endif

/* ---- rigd: clients' submissions per second -------------------------------- */

/* What a client reports: once ready (count unused), once done. */
typedef struct client_report {
  int64_t ok; /* as wide as the others: the record has no padding */
  uint64_t count;
  double ns;
} client_report;

static int client_report_fd;

static void client_send(client_report r) {
  if (write(client_report_fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
}

static void client_check(rig_status_t status, const char *call) {
  if (status == RIG_OK) return;
  fprintf(stderr, "client %d: %s: %s: %s\n", (int)getpid(), call, rig_status_name(status), rig_last_error());
  client_send((client_report){0, 0, 0});
  _exit(1);
}
#define CLIENT_CHECK(call) client_check((call), #call)

/* A client process: opens MEM:0@rigd itself (a device never crosses a
 * fork), reports ready, and once go_fd reads end of file submits fills for
 * CLIENT_NS, waiting every CLIENT_BATCH, then reports its count. */
_Noreturn static void client_main(int go_fd) {
  rig_device_t *d = NULL;
  CLIENT_CHECK(rig_open("MEM:0@rigd", NULL, &d));
  rig_buffer_t *b = NULL;
  CLIENT_CHECK(rig_buffer_create(d, FILL_BYTES, RIG_MEMORY_DEVICE, &b));
  rig_point_t p;
  CLIENT_CHECK(rig_buffer_submit_fill(b, 0, NULL, 0, &p));
  CLIENT_CHECK(rig_point_wait(p));
  client_send((client_report){1, 0, 0});
  char go;
  if (read(go_fd, &go, 1) != 0) _exit(1);

  uint64_t count = 0;
  double start = bench_now_ns(), ns;
  do {
    for (int i = 0; i < CLIENT_BATCH; i++, count++)
      CLIENT_CHECK(rig_buffer_submit_fill(b, (uint8_t)count, NULL, 0, &p));
    CLIENT_CHECK(rig_point_wait(p));
  } while ((ns = bench_now_ns() - start) < CLIENT_NS);
  client_send((client_report){1, count, ns});
  rig_buffer_unref(b);
  CLIENT_CHECK(rig_close(d));
  _exit(0);
}

static client_report client_receive(int fd) {
  client_report r;
  struct pollfd readable = {fd, POLLIN, 0};
  if (poll(&readable, 1, CLIENT_TIMEOUT_MS) != 1 || read(fd, &r, sizeof r) != (ssize_t)sizeof r || !r.ok)
    bench_fail("a client of rigd failed");
  return r;
}

/* The fills per second that n clients submit together. */
static double measure_clients(int n) {
  int report[2], go[2];
  if (pipe2(report, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) bench_fail("pipe failed");
  pid_t clients[MAX_CLIENTS];
  for (int i = 0; i < n; i++) {
    clients[i] = fork_child(SIGKILL);
    if (clients[i] == 0) {
      close(report[0]);
      close(go[1]);
      client_report_fd = report[1];
      client_main(go[0]);
    }
  }
  close(report[1]);
  close(go[0]);
  for (int i = 0; i < n; i++) client_receive(report[0]);
  close(go[1]); /* go: every client reads end of file */
  double rate = 0;
  for (int i = 0; i < n; i++) {
    client_report r = client_receive(report[0]);
    rate += (double)r.count * 1e9 / r.ns;
  }
  close(report[0]);
  for (int i = 0; i < n; i++)
    if (!reap(clients[i])) bench_fail("a client of rigd exited with an error");
  return rate;
}

/* ---- rigd: idle CPU -------------------------------------------------------- */

/* utime + stime of rigd, all its threads, in clock ticks (proc(5)). */
static double rigd_cpu_ticks(void) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)rigd_pid);
  FILE *f = fopen(path, "r");
  if (!f) bench_fail("cannot read rigd's /proc stat");
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  /* Fields from the 3rd on follow the last ')': the name may hold any. */
  const char *p = strrchr(text, ')');
  unsigned long long utime, stime;
  if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
    bench_fail("cannot parse rigd's /proc stat");
  return (double)(utime + stime);
}

static double measure_idle_cpu(void) {
  sleep(SETTLE_SECONDS);
  double before = rigd_cpu_ticks();
  sleep(IDLE_SECONDS);
  double ticks = rigd_cpu_ticks() - before;
  return 100.0 * ticks / (double)sysconf(_SC_CLK_TCK) / IDLE_SECONDS;
}

/* ---- main ------------------------------------------------------------------ */

int main(void) {
  bench_pid = getpid();
  placement where = placement_choose();
  placement_print(&where);
  placement_put(&where, 0, where.near_cpu);
  rig_device_t *mem = NULL;
  BENCH_CHECK(rig_memory_device("MEM:0", &mem));
  latency mask = measure_mask();
  print_latency("signal_mask", mask);

  /* SIM:0@rigd runs the launches with the sim's latency knob at 0. */
  start_rigd("MEM:0,SIM:0", "host_code = allow\ntest_knobs = allow\n");
  rig_device_t *proxy = NULL;
  rig_status_t opened = rig_open("MEM:0@rigd", NULL, &proxy);
  double launches_local = 0, launches_rigd = 0;
  latency rigd = {0, 0}, ping, inprocess;
  double masks_per_trip = 0, clients[MAX_CLIENTS + 1] = {0};
  pingpong *words = pingpong_start(&where);
  rig_buffer_t *local = fill_buffer(mem);
  if (opened != RIG_OK) {
    fprintf(stderr, "rig_open(\"MEM:0@rigd\"): %s: %s\n", rig_status_name(opened), rig_last_error());
    series fills = series_make(fill_trip, local);
    ping = measure_beside_pingpong(words, &fills, 1);
    pingpong_stop(words);
    inprocess = series_latency(&fills);
    check_last_fill(local);
    rig_buffer_unref(local);
    print_latency("pingpong", ping);
    print_latency("fill_inprocess", inprocess);
  } else {
    placement_put(&where, rigd_pid, where.far_cpu);
    rig_buffer_t *served = fill_buffer(proxy);
    series fills[2] = {series_make(fill_trip, local), series_make(fill_trip, served)};
    uint64_t masks_before = mask_calls();
    ping = measure_beside_pingpong(words, fills, 2);
    masks_per_trip = (double)(mask_calls() - masks_before) / (WARMUP + TRIPS);
    pingpong_stop(words);
    inprocess = series_latency(&fills[0]);
    rigd = series_latency(&fills[1]);
    check_last_fill(local);
    check_last_fill(served);
    rig_buffer_unref(local);
    rig_buffer_unref(served);
    /* The throughputs below run where the scheduler puts them. */
    placement_put(&where, rigd_pid, -1);
    placement_put(&where, 0, -1);
    print_latency("pingpong", ping);
    print_latency("fill_inprocess", inprocess);
    print_latency("fill_rigd", rigd);
    printf("fill_rigd_masks_per_trip: %.2f\n", masks_per_trip);
    BENCH_CHECK(rig_close(proxy));
    rig_open_options_t quick = {sizeof quick, "latency_us=0"};
    rig_device_t *sim = NULL;
    BENCH_CHECK(rig_open("SIM:0", &quick, &sim));
    launches_local = launches_per_second(sim);
    printf("launches_inprocess: %.0f /s\n", launches_local);
    BENCH_CHECK(rig_open("SIM:0@rigd", &quick, &sim));
    launches_rigd = launches_per_second(sim);
    printf("launches_rigd: %.0f /s\n", launches_rigd);
    fflush(stdout);
    for (int n = 1; n <= MAX_CLIENTS; n *= 2) {
      clients[n] = measure_clients(n);
      printf("rigd_submits_%d: %.0f /s\n", n, clients[n]);
      fflush(stdout);
    }
  }
  printf("rigd_idle_cpu: %.1f %%\n", measure_idle_cpu());
  bool stopped = stop_rigd();
  if (opened == RIG_OK) {
    printf("ratio rigd_vs_pingpong_p50: %.2f (goal: at most 3)\n", rigd.p50 / ping.p50);
    printf("ratio rigd_vs_pingpong_p99: %.2f\n", rigd.p99 / ping.p99);
    printf("ratio rigd_vs_inprocess_p50: %.2f (goal: at most 4)\n", rigd.p50 / inprocess.p50);
    printf("ratio rigd_vs_inprocess_p99: %.2f\n", rigd.p99 / inprocess.p99);
    printf("ratio signal_mask_share_of_rigd: %.3f (goal: 0)\n", masks_per_trip / 2 * mask.p50 / rigd.p50);
    for (int n = 2; n <= MAX_CLIENTS; n *= 2)
      printf("ratio rigd_submits_%d_vs_1: %.2f\n", n, clients[n] / clients[1]);
    printf("ratio launches_inprocess_vs_rigd: %.2f\n", launches_local / launches_rigd);
  }
  return opened == RIG_OK && stopped ? 0 : 1;
}
