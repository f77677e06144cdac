/* The cost of a submission: rig_buffer_submit_fill of a 64-byte buffer on a
 * sim device with no latency, whose work a worker thread runs after submit
 * returns (one wait ends each batch), beside the same on a memory device,
 * whose fills the host runs before submit returns, in the same run.  Prints
 * `submit_sim: N /s`, `submit_mem: N /s` and `ratio submit_sim_vs_mem: X`
 * (the sim device's rate over the memory device's). */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

/* Measurements of each figure; the best one counts. */
#define ROUNDS 5
#define BUFFER_BYTES 64

/* One batch: reps fills, then a wait for the last one's point, so a batch
 * ends with its work done. */
static void run_fills(void *context, long reps) {
  rig_buffer_t *b = context;
  rig_point_t p = {0};
  for (long i = 0; i < reps; i++) BENCH_CHECK(rig_buffer_submit_fill(b, (uint8_t)i, NULL, 0, &p));
  BENCH_CHECK(rig_point_wait(p));
}

static rig_buffer_t *buffer_on(const char *name, const char *config) {
  rig_open_options_t opts = {sizeof opts, config};
  rig_device_t *d = NULL;
  BENCH_CHECK(rig_open(name, config ? &opts : NULL, &d));
  rig_buffer_t *b = NULL;
  BENCH_CHECK(rig_buffer_create(d, BUFFER_BYTES, RIG_MEMORY_DEVICE, &b));
  return b;
}

int main(void) {
  rig_buffer_t *sim = buffer_on("SIM:0", "latency_us=0,copy_gbps=0");
  rig_buffer_t *mem = buffer_on("MEM:0", NULL);
  if (rig_buffer_host(sim) != NULL) bench_fail("SIM:0's memory is host-addressed: its fills would run on the host");

  bench_timer sim_fills = bench_timer_make(run_fills, sim);
  bench_timer mem_fills = bench_timer_make(run_fills, mem);
  for (int r = 0; r < ROUNDS; r++) {
    bench_round(&sim_fills);
    bench_round(&mem_fills);
  }
  double sim_rate = 1e9 / sim_fills.best_ns, mem_rate = 1e9 / mem_fills.best_ns;
  printf("submit_sim: %.0f /s\n", sim_rate);
  printf("submit_mem: %.0f /s\n", mem_rate);
  printf("ratio submit_sim_vs_mem: %.3f\n", sim_rate / mem_rate);

  rig_buffer_unref(sim);
  rig_buffer_unref(mem);
  return 0;
}
