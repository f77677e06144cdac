/* The host's launches (rig.txt, Launches), in the same run as their
 * baselines:
 *   (a) an empty function linked on the host and launched through
 *       rig_submit, one group of one thread, a run taken each time, beside
 *       a direct call of an empty function through a volatile pointer.
 *       Prints `launch_empty: N ns`, `call_empty: N ns`,
 *       `launch_over_call: N ns` and `ratio launch_empty_vs_call: X`.
 *   (b) the spec's add (rig.txt, Objects) over 64 Mi floats in 4096 groups,
 *       split by the host's pool, beside the same loop compiled into the
 *       benchmark on one thread.  Prints `add_pool: N ms`, `add_loop: N ms`
 *       and `ratio add_loop_vs_pool: X`, which approaches
 *       `performance_cores: N` where memory bandwidth allows.
 * The kernels' objects are compiled at build time into RIG_BENCH_KERNELS. */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <string.h>

/* Measurements of each figure; the best one counts. */
#define ROUNDS 5
#define ADD_FLOATS ((int64_t)64 << 20)
#define ADD_GROUPS 4096

/* drivers/host: the count the pool runs on (bench_performance_cores.cpp). */
int bench_performance_cores(void);

/* The function name of the kernel object name.o, loaded on the host into
 * *image, which the caller unrefs. */
static rig_function_t *load_function(const char *name, rig_image_t **image) {
  int64_t n = 0;
  void *bytes = bench_read_kernel(name, &n);
  BENCH_CHECK(rig_image_load(rig_host(), bytes, n, image));
  free(bytes);
  rig_function_t *f = NULL;
  BENCH_CHECK(rig_image_resolve(*image, name, &f));
  if (!f) bench_fail("a kernel object lacks its function");
  return f;
}

/* A submission of one launch of function name on the host. */
static rig_submission_t *launch_of(const char *name, const rig_ref_t *refs, size_t ref_count, int64_t params) {
  rig_image_t *image = NULL;
  rig_part_t part = {.kind = RIG_LAUNCH,
                     .u.launch = {.function = load_function(name, &image), .refs = refs, .ref_count = ref_count,
                                  .params = params}};
  rig_submission_t *s = NULL;
  BENCH_CHECK(rig_submission_make(rig_host(), &part, 1, NULL, &s));
  rig_image_unref(image); /* the submission holds it */
  if (rig_submission_block(s, 0) != 0) bench_fail("the launch's block is not 0");
  return s;
}

/* (a) */

static void empty(const void *params, int64_t first, int64_t end) {
  (void)params;
  (void)first;
  (void)end;
}

static void (*volatile empty_pointer)(const void *, int64_t, int64_t) = empty;

static void run_calls(void *context, long reps) {
  for (long i = 0; i < reps; i++) empty_pointer(context, 0, 1);
}

static void run_launches(void *context, long reps) {
  rig_submission_t *s = context;
  for (long i = 0; i < reps; i++) {
    rig_run_t *run = NULL;
    BENCH_CHECK(rig_submission_take(s, &run));
    BENCH_CHECK(rig_run_groups(run, 0, 1, 1, 1));
    BENCH_CHECK(rig_run_threads(run, 0, 1, 1, 1));
    BENCH_CHECK(rig_submit(run, NULL, 0, NULL, 0, NULL));
  }
}

static void bench_empty(void) {
  rig_submission_t *s = launch_of("empty", NULL, 0, 0);

  bench_timer launches = bench_timer_make(run_launches, s);
  bench_timer calls = bench_timer_make(run_calls, NULL);
  for (int r = 0; r < ROUNDS; r++) {
    bench_round(&launches);
    bench_round(&calls);
  }
  printf("launch_empty: %.1f ns\n", launches.best_ns);
  printf("call_empty: %.1f ns\n", calls.best_ns);
  printf("launch_over_call: %.1f ns\n", launches.best_ns - calls.best_ns);
  printf("ratio launch_empty_vs_call: %.2f\n", launches.best_ns / calls.best_ns);
  rig_submission_unref(s);
}

/* (b) */

struct add {
  const float *x, *y;
  float *z;
  int64_t n;
};

/* The kernel's loop, as the benchmark's compiler makes it. */
static void add_loop(const struct add *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end && i < p->n; i++) p->z[i] = p->x[i] + p->y[i];
}

typedef struct add_context {
  rig_submission_t *s;
  rig_buffer_t *buffers[3];
  struct add loop;
} add_context;

static void run_loop(void *context, long reps) {
  add_context *c = context;
  for (long i = 0; i < reps; i++) add_loop(&c->loop, 0, ADD_FLOATS);
}

static void run_pool(void *context, long reps) {
  add_context *c = context;
  for (long i = 0; i < reps; i++) {
    rig_run_t *run = NULL;
    BENCH_CHECK(rig_submission_take(c->s, &run));
    BENCH_CHECK(rig_run_groups(run, 0, ADD_GROUPS, 1, 1));
    BENCH_CHECK(rig_run_threads(run, 0, ADD_FLOATS / ADD_GROUPS, 1, 1));
    BENCH_CHECK(rig_run_int64(run, 0, 24, ADD_FLOATS));
    BENCH_CHECK(rig_submit(run, c->buffers, 3, NULL, 0, NULL));
  }
}

static void bench_add(void) {
  rig_ref_t refs[] = {
      {.kind = RIG_REF_READ, .memory = {.slot = 0}, .at = 0},
      {.kind = RIG_REF_READ, .memory = {.slot = 1}, .at = 8},
      {.kind = RIG_REF_WRITE, .memory = {.slot = 2}, .at = 16},
  };
  add_context c = {0};
  c.s = launch_of("add", refs, 3, 32);
  float *host[3];
  for (int i = 0; i < 3; i++) {
    BENCH_CHECK(rig_buffer_create(rig_host(), ADD_FLOATS * (int64_t)sizeof(float), RIG_MEMORY_DEVICE, &c.buffers[i]));
    host[i] = rig_buffer_host(c.buffers[i]);
  }
  for (int64_t i = 0; i < ADD_FLOATS; i++) {
    host[0][i] = (float)(i & 1023);
    host[1][i] = 0.5f;
  }
  memset(host[2], 0, (size_t)ADD_FLOATS * sizeof(float));
  c.loop = (struct add){host[0], host[1], host[2], ADD_FLOATS};

  bench_timer pool = bench_timer_make(run_pool, &c);
  for (int64_t i = 0; i < ADD_FLOATS; i += 4097)
    if (host[2][i] != host[0][i] + 0.5f) bench_fail("the launched add wrote a wrong sum");
  bench_timer loop = bench_timer_make(run_loop, &c);
  for (int r = 0; r < ROUNDS; r++) {
    bench_round(&pool);
    bench_round(&loop);
  }
  printf("performance_cores: %d\n", bench_performance_cores());
  printf("add_pool: %.2f ms\n", pool.best_ns / 1e6);
  printf("add_loop: %.2f ms\n", loop.best_ns / 1e6);
  printf("ratio add_loop_vs_pool: %.2f\n", loop.best_ns / pool.best_ns);
  for (int i = 0; i < 3; i++) rig_buffer_unref(c.buffers[i]);
  rig_submission_unref(c.s);
}

int main(void) {
  bench_empty();
  bench_add();
  return 0;
}
