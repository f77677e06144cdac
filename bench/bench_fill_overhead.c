/* The fixed cost of a submission: rig_buffer_submit_fill of an empty buffer
 * on MEM:0, beside a call of a trivial function that the compiler can
 * neither inline nor drop, in the same run.  Prints `fill0: N ns`,
 * `call: N ns` and `ratio fill0_vs_call: X`. */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

/* Measurements of each figure; the best one counts. */
#define ROUNDS 5

__attribute__((noinline)) static int trivial(int x) { return x + 1; }

/* Read on each call, so the call stays an indirect call the compiler
 * cannot see through. */
static int (*volatile trivial_call)(int) = trivial;
static volatile int sink;

static void run_calls(void *context, long reps) {
  (void)context;
  int x = 0;
  for (long i = 0; i < reps; i++) x = trivial_call(x);
  sink = x;
}

static void run_empty_fills(void *context, long reps) {
  rig_buffer_t *empty = context;
  rig_point_t p;
  for (long i = 0; i < reps; i++) BENCH_CHECK(rig_buffer_submit_fill(empty, 0, NULL, 0, &p));
}

int main(void) {
  rig_device_t *mem = NULL;
  BENCH_CHECK(rig_open("MEM:0", NULL, &mem));
  rig_buffer_t *empty = NULL;
  BENCH_CHECK(rig_buffer_create(mem, 0, RIG_MEMORY_DEVICE, &empty));

  bench_timer call = bench_timer_make(run_calls, NULL);
  bench_timer fill = bench_timer_make(run_empty_fills, empty);
  for (int r = 0; r < ROUNDS; r++) {
    bench_round(&call);
    bench_round(&fill);
  }
  printf("fill0: %.1f ns\n", fill.best_ns);
  printf("call: %.2f ns\n", call.best_ns);
  printf("ratio fill0_vs_call: %.1f\n", fill.best_ns / call.best_ns);

  rig_buffer_unref(empty);
  return 0;
}
