/* Helpers shared by the benchmarks: status checks and a timer that sizes
 * its repetitions so each measurement takes about BENCH_TARGET_NS. */
#ifndef RIG_BENCH_H
#define RIG_BENCH_H

#include <rig/rig.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* About 100 ms per measurement: long enough to dwarf the clock, short
 * enough for a whole run to stay under a minute. */
#define BENCH_TARGET_NS 100000000.0

/* Exits with a message unless status is RIG_OK. */
static inline void bench_check(rig_status_t status, const char *call) {
  if (status != RIG_OK) {
    fprintf(stderr, "%s: %s: %s\n", call, rig_status_name(status), rig_last_error());
    exit(1);
  }
}
#define BENCH_CHECK(call) bench_check((call), #call)

static inline void bench_fail(const char *why) {
  fprintf(stderr, "%s\n", why);
  exit(1);
}

static inline double bench_now_ns(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) bench_fail("clock_gettime failed");
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Runs the measured operation reps times. */
typedef void (*bench_op)(void *context, long reps);

/* One measured operation: the repetitions per measurement and the best
 * time per repetition seen so far. */
typedef struct bench_timer {
  bench_op op;
  void *context;
  long reps;
  double best_ns;
} bench_timer;

/* Times one measurement of t's reps repetitions; returns ns per repetition. */
static inline double bench_time(bench_timer *t) {
  double start = bench_now_ns();
  t->op(t->context, t->reps);
  return (bench_now_ns() - start) / (double)t->reps;
}

/* A timer for op, its repetitions sized (after a warm-up) so that one
 * measurement takes about BENCH_TARGET_NS. */
static inline bench_timer bench_timer_make(bench_op op, void *context) {
  bench_timer t = {op, context, 1, HUGE_VAL};
  bench_time(&t); /* warm-up: first touches, caches */
  double per_rep;
  while ((per_rep = bench_time(&t)) * (double)t.reps < BENCH_TARGET_NS / 10) t.reps *= 2;
  double reps = BENCH_TARGET_NS / per_rep;
  t.reps = reps < 1 ? 1 : (long)reps;
  t.best_ns = HUGE_VAL; /* only full measurements count */
  return t;
}

/* One more measurement: keeps the best time per repetition. */
static inline void bench_round(bench_timer *t) {
  double ns = bench_time(t);
  if (ns < t->best_ns) t->best_ns = ns;
}

/* A size such as 1G, 256M, 64K or a byte count; -1 if not one. */
#ifdef RIG_BENCH_KERNELS
/* The bytes of the kernel object name.o, compiled at build time into
 * RIG_BENCH_KERNELS (bench/CMakeLists.txt), malloc'd; exits if it cannot
 * be read. */
static inline void *bench_read_kernel(const char *name, int64_t *n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.o", RIG_BENCH_KERNELS, name);
  FILE *f = fopen(path, "rb");
  if (!f) bench_fail("cannot open a kernel object: build the benchmark's kernels");
  if (fseek(f, 0, SEEK_END) != 0) bench_fail("cannot size a kernel object");
  long size = ftell(f);
  rewind(f);
  void *bytes = malloc((size_t)size);
  if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) bench_fail("cannot read a kernel object");
  fclose(f);
  *n = size;
  return bytes;
}
#endif

static inline int64_t bench_parse_size(const char *s) {
  char *end = NULL;
  long long n = strtoll(s, &end, 10);
  if (end == s || n <= 0) return -1;
  int shift = 0;
  switch (*end) {
    case 'G': shift = 30; break;
    case 'M': shift = 20; break;
    case 'K': shift = 10; break;
    case '\0': break;
    default: return -1;
  }
  if (*end && end[1]) return -1;
  return (int64_t)n << shift;
}

#endif
