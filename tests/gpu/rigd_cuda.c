/* rigd serving CUDA:0 to several processes of two users, on a machine with
 * an NVIDIA GPU (run by tests/gpu/cuda.sh as root; never in CI):
 *   overlap       two clients of one user (cuda_contexts = per_user) launch
 *                 a kernel that spins 200 ms at once; the kernels' spans,
 *                 read on the GPU from %globaltimer, overlap in time: one
 *                 context, concurrent kernels;
 *   contexts      GPU memory in use (nvidia-smi) grows by a context's
 *                 reserve for a client of a second user (nobody), and not
 *                 for a second client of the first user;
 *   trap          a trapping kernel in a client of the first user loses that
 *                 client's proxy with CUDA's reason, while the second user's
 *                 kernel, running meanwhile, completes; a new client of the
 *                 first user is admitted at once and computes;
 *   memory        the GPU memory of a client's context, and the client's
 *                 RSS beside that of a process that opens CUDA:0 itself.
 * Prints `check NAME: PASS|FAIL (detail)` per check and `NAME: VALUE UNIT`
 * per figure; exits 1 if a check failed.
 *
 * Usage: rigd_cuda RIGD KERNELS_DIR */
#define _GNU_SOURCE

#include <rig/rig.h>
#include <rig/service.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPIN_NS 200000000LL /* each spinning kernel's time on the GPU */
#define NOBODY 65534

static const char *kernels_dir;
static int failures;

static void check(const char *name, bool ok, const char *detail) {
  printf("check %s: %s%s%s%s\n", name, ok ? "PASS" : "FAIL", detail[0] ? " (" : "", detail, detail[0] ? ")" : "");
  fflush(stdout);
  if (!ok) failures++;
}

static void die(const char *what) {
  fprintf(stderr, "rigd_cuda: %s: %s\n", what, rig_last_error());
  exit(2);
}
#define MUST(call) \
  do {             \
    if ((call) != RIG_OK) die(#call); \
  } while (0)

/* ---- A client: a process of its own, talking to its parent by pipes ---- */

struct client {
  pid_t pid;
  int to, from; /* the parent's ends: commands to it, answers from it */
};

/* The client's side: CUDA:0@rigd, the kernels, a buffer for two times. */
struct session {
  rig_device_t *gpu;
  rig_image_t *image;
  rig_buffer_t *times; /* two u64 on the GPU */
};

static uint8_t *cubin(int64_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/kernels.cubin", kernels_dir);
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open kernels.cubin");
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *bytes = malloc((size_t)*n);
  if (!bytes || fread(bytes, 1, (size_t)*n, f) != (size_t)*n) die("cannot read kernels.cubin");
  fclose(f);
  return bytes;
}

static struct session open_session(void) {
  struct session s = {0};
  MUST(rig_open("CUDA:0@rigd", NULL, &s.gpu));
  int64_t n = 0;
  uint8_t *bytes = cubin(&n);
  MUST(rig_image_load(s.gpu, bytes, n, &s.image));
  free(bytes);
  MUST(rig_buffer_create(s.gpu, 16, RIG_MEMORY_DEVICE, &s.times));
  return s;
}

/* Launches kernel name over s.times (ref at 0) with n at 8 on one thread;
 * its point. */
static rig_status_t launch(struct session *s, const char *name, int64_t n, rig_point_t *done) {
  rig_function_t *f = NULL;
  if (rig_image_resolve(s->image, name, &f) != RIG_OK || !f) return RIG_EINVAL;
  rig_ref_t ref = {RIG_REF_WRITE, {0, NULL}, 0, RIG_ACCESS_READ_WRITE, NULL};
  rig_part_t part = {.kind = RIG_LAUNCH};
  part.u.launch.function = f;
  part.u.launch.refs = &ref;
  part.u.launch.ref_count = 1;
  part.u.launch.params = 16;
  rig_submission_t *sub = NULL;
  rig_run_t *run = NULL;
  rig_status_t st = rig_submission_make(s->gpu, &part, 1, NULL, &sub);
  if (st == RIG_OK) st = rig_submission_take(sub, &run);
  if (st == RIG_OK) st = rig_run_groups(run, 0, 1, 1, 1);
  if (st == RIG_OK) st = rig_run_threads(run, 0, 1, 1, 1);
  if (st == RIG_OK) st = rig_run_int64(run, 0, 8, n);
  if (st == RIG_OK) st = rig_submit(run, &s->times, 1, NULL, 0, done);
  rig_submission_unref(sub);
  return st;
}

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  if (f) fclose(f);
  return kib;
}

/* Commands a client runs, one byte each; it answers a line. */
enum { SPIN = 's', TRAP = 't', ADD = 'a', RSS = 'r', QUIT = 'q' };

static void serve(int in, int out, uid_t uid) {
  if (uid != 0 && (setgid(NOBODY) != 0 || setuid(uid) != 0)) _exit(3);
  struct session s = open_session();
  dprintf(out, "ready\n");
  char command;
  while (read(in, &command, 1) == 1 && command != QUIT) {
    rig_point_t done;
    rig_status_t st = RIG_OK;
    uint64_t times[2] = {0, 0};
    switch (command) {
      case SPIN:
        st = launch(&s, "timed_spin", SPIN_NS, &done);
        if (st == RIG_OK) st = rig_point_wait(done);
        if (st == RIG_OK) st = rig_buffer_blit_to_bytes(s.times, 0, times, sizeof times, 0, sizeof times);
        dprintf(out, "%d %llu %llu %s\n", (int)st, (unsigned long long)times[0], (unsigned long long)times[1],
                st == RIG_OK ? "" : rig_last_error());
        break;
      case TRAP:
        st = launch(&s, "trap", 0, &done);
        if (st == RIG_OK) st = rig_point_wait(done);
        dprintf(out, "%d %s\n", (int)st, rig_lost(s.gpu) ? rig_lost(s.gpu) : rig_last_error());
        break;
      case ADD: /* a kernel that writes: the client computes */
        st = launch(&s, "timed_spin", 1000, &done);
        if (st == RIG_OK) st = rig_point_wait(done);
        if (st == RIG_OK) st = rig_buffer_blit_to_bytes(s.times, 0, times, sizeof times, 0, sizeof times);
        dprintf(out, "%d %d\n", (int)st, st == RIG_OK && times[1] > times[0]);
        break;
      case RSS: dprintf(out, "%ld\n", rss_kib()); break;
      default: break;
    }
  }
  _exit(0);
}

static struct client start_client(uid_t uid) {
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) die("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    serve(down[0], up[1], uid);
  }
  close(down[0]);
  close(up[1]);
  struct client c = {pid, down[1], up[0]};
  return c;
}

/* The client's next answer line, into line. */
static bool answer(struct client *c, char *line, size_t n) {
  size_t used = 0;
  while (used + 1 < n) {
    ssize_t r = read(c->from, line + used, 1);
    if (r != 1) return false;
    if (line[used] == '\n') break;
    used++;
  }
  line[used] = '\0';
  return true;
}

static bool ready(struct client *c) {
  char line[64];
  return answer(c, line, sizeof line) && strcmp(line, "ready") == 0;
}

static void ask(struct client *c, char command) {
  if (write(c->to, &command, 1) != 1) die("write to a client");
}

static void stop_client(struct client *c) {
  ask(c, QUIT);
  close(c->to);
  close(c->from);
  waitpid(c->pid, NULL, 0);
}

/* ---- The GPU's memory in use, as nvidia-smi reports it (MiB) ----------- */

static long gpu_used_mib(void) {
  FILE *p = popen("nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0", "r");
  long mib = -1;
  if (p && fscanf(p, "%ld", &mib) != 1) mib = -1;
  if (p) pclose(p);
  return mib;
}

/* ---- rigd -------------------------------------------------------------- */

static pid_t start_rigd(const char *rigd, const char *dir) {
  char config[512], socket_path[512];
  snprintf(config, sizeof config, "%s/rigd.conf", dir);
  snprintf(socket_path, sizeof socket_path, "%s/rigd.sock", dir);
  FILE *f = fopen(config, "w");
  if (!f) die("cannot write rigd's config");
  fprintf(f, "cuda_contexts = per_user\n");
  fclose(f);
  pid_t pid = fork();
  if (pid == 0) {
    execl(rigd, rigd, "--socket", socket_path, "--devices", "CUDA:0", "--config", config, "--foreground", (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 200 && access(socket_path, F_OK) != 0; i++) usleep(50000);
  /* The second user connects too: the socket is every user's here. */
  chmod(socket_path, 0666);
  setenv("RIG_SERVICE", socket_path, 1);
  return pid;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: rigd_cuda RIGD KERNELS_DIR\n");
    return 2;
  }
  kernels_dir = argv[2];
  char dir[] = "/tmp/rigd-cuda-XXXXXX";
  if (!mkdtemp(dir) || chmod(dir, 0755) != 0) die("mkdtemp");
  pid_t rigd = start_rigd(argv[1], dir);
  char line[512], detail[512];

  /* overlap: two clients of one user, kernels at once. */
  struct client a1 = start_client(0), a2 = start_client(0);
  bool both = ready(&a1) && ready(&a2);
  check("two clients of one user connect", both, "");
  if (!both) goto end;
  long before_b = gpu_used_mib();
  ask(&a1, SPIN);
  ask(&a2, SPIN);
  unsigned long long s1 = 0, e1 = 0, s2 = 0, e2 = 0;
  int st1 = -1, st2 = -1;
  if (answer(&a1, line, sizeof line)) sscanf(line, "%d %llu %llu", &st1, &s1, &e1);
  if (answer(&a2, line, sizeof line)) sscanf(line, "%d %llu %llu", &st2, &s2, &e2);
  unsigned long long latest_start = s1 > s2 ? s1 : s2, earliest_end = e1 < e2 ? e1 : e2;
  snprintf(detail, sizeof detail, "spans [%llu, %llu] and [%llu, %llu] ns: %lld ns together", s1, e1, s2, e2,
           (long long)(earliest_end - latest_start));
  check("one user's kernels overlap", st1 == 0 && st2 == 0 && latest_start < earliest_end, detail);

  /* contexts: a second user's client makes a context; nothing else does. */
  struct client b = start_client(NOBODY);
  bool b_ready = ready(&b);
  long after_b = gpu_used_mib();
  struct client a3 = start_client(0);
  bool a3_ready = ready(&a3);
  long after_a3 = gpu_used_mib();
  printf("gpu_memory_of_a_context: %ld MiB\n", after_b - before_b);
  printf("gpu_memory_of_a_client_in_its_users_context: %ld MiB\n", after_a3 - after_b);
  snprintf(detail, sizeof detail, "used %ld MiB, then %ld with the second user, %ld with a third client of the first",
           before_b, after_b, after_a3);
  check("a second user gets a context of its own", b_ready && a3_ready && after_b - before_b > 2 * (after_a3 - after_b),
        detail);

  /* trap: the first user's context breaks; the second user's kernel, which
   * spins meanwhile, completes. */
  ask(&b, SPIN);
  usleep(20000);
  ask(&a1, TRAP);
  int trap_status = 0, spin_status = -1;
  char why[400] = "";
  if (answer(&a1, line, sizeof line)) sscanf(line, "%d %399[^\n]", &trap_status, why);
  if (answer(&b, line, sizeof line)) sscanf(line, "%d", &spin_status);
  check("a trap loses the trapping client's proxy, with CUDA's reason",
        trap_status == RIG_ELOST && strstr(why, "CUDA") != NULL, why);
  check("the other user's kernel completes meanwhile", spin_status == 0, line);
  ask(&a2, ADD);
  int a2_status = 0;
  if (answer(&a2, line, sizeof line)) sscanf(line, "%d", &a2_status);
  check("the trapping user's other clients lose their proxies (one context)", a2_status == RIG_ELOST, line);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  struct client a4 = start_client(0);
  bool a4_ready = ready(&a4);
  int a4_status = -1, a4_ok = 0;
  ask(&a4, ADD);
  if (answer(&a4, line, sizeof line)) sscanf(line, "%d %d", &a4_status, &a4_ok);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  snprintf(detail, sizeof detail, "admitted and computed in %.0f ms",
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
  check("a new client of the trapping user is admitted at once and computes", a4_ready && a4_status == 0 && a4_ok,
        detail);

  /* memory: the client's RSS beside a process that opens CUDA itself. */
  ask(&a4, RSS);
  long client_kib = answer(&a4, line, sizeof line) ? atol(line) : -1;
  long own_kib = -1;
  int pipefd[2];
  pid_t in_process = -1;
  if (pipe(pipefd) == 0 && (in_process = fork()) == 0) {
    close(pipefd[0]);
    rig_device_t *d = NULL;
    long kib = rig_open("CUDA:0", NULL, &d) == RIG_OK ? rss_kib() : -1;
    dprintf(pipefd[1], "%ld\n", kib);
    _exit(0);
  }
  close(pipefd[1]);
  FILE *from = fdopen(pipefd[0], "r");
  if (from && fscanf(from, "%ld", &own_kib) != 1) own_kib = -1;
  if (from) fclose(from);
  waitpid(in_process, NULL, 0);
  printf("client_rss_through_rigd: %ld KiB\n", client_kib);
  printf("client_rss_with_cuda_in_process: %ld KiB\n", own_kib);
  if (client_kib > 0 && own_kib > 0) printf("ratio client_rss_rigd_vs_in_process: %.3f\n", (double)client_kib / (double)own_kib);

  stop_client(&a4);
  stop_client(&a3);
  stop_client(&b);
  stop_client(&a2);
end:
  stop_client(&a1);
  kill(rigd, SIGTERM);
  int status = 0;
  waitpid(rigd, &status, 0);
  check("rigd ends cleanly", WIFEXITED(status) && WEXITSTATUS(status) == 0, "");
  return failures ? 1 : 0;
}
