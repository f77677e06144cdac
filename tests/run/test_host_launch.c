/* The run suite: host code through the public API (rig.txt, Running work:
 * Host code, Launches, Objects, Symbols).  Each test compiles its kernels
 * with clang, loads them with rig_image_load(rig_host(), ...) and runs them
 * through rig_submission_make, rig_submission_take and rig_submit.
 *
 * Asserts: LINK-01, LINK-03, LINK-20, LINK-35, LINK-36, LINK-37, LINK-38,
 *   HOST-01, HOST-03, HOST-05, HOST-06, HOST-07, HOST-08, HOST-09, HOST-10,
 *   HOST-11, HOST-12 (within the CPUs the process may occupy), HOST-13,
 *   HOST-14, HOST-15, SUB-01, SUB-29, SUB-30, SUB-42.
 *
 * Not reached here:
 *   HOST-02, LINK-21, LINK-22, LINK-41: the mapping's protections are the
 *     linker's, asserted by tests/link (test_host.cpp) where the image's
 *     memory is visible; rig.h gives no address of an image.
 *   HOST-16..20: the count of performance cores is not in rig.h; HOST-12
 *     is asserted against the CPUs of the affinity mask, which bounds it.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "helpers.h"
#include "run_support.h"

/* The bytes of host memory at b (a host buffer, or one the host
 * addresses). */
static void *host_bytes(rig_buffer_t *b) {
  void *p = rig_buffer_host(b);
  cr_assert_not_null(p, "the host does not address the buffer");
  return p;
}

/* A host buffer holding a copy of the n bytes at s. */
static rig_buffer_t *of_bytes(const void *s, int64_t n) {
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_of_bytes(s, n, &b));
  return b;
}

/* ---------------------------------------------------------------------- */
/* Objects and symbols                                                      */

Test(host_launch, the_spec_add_example_runs_end_to_end) {
  /* LINK-01, LINK-03, HOST-01, HOST-06, SUB-01, SUB-42 */
  enum { n = 1000 }; /* not a multiple of 64 */
  float x[n], y[n], z0[n];
  for (int i = 0; i < n; i++) {
    x[i] = (float)i * 0.5f;
    y[i] = 1000.0f - (float)i;
    z0[i] = -1.0f;
  }
  rig_buffer_t *bx = of_bytes(x, sizeof x), *by = of_bytes(y, sizeof y), *bz = of_bytes(z0, sizeof z0);
  rig_image_t *image = load_kernels(rig_host(), LINK_KERNEL("add"));
  rig_function_t *add = function_of(image, "add");

  rig_ref_t refs[] = {ref(RIG_REF_READ, slot(0), 0), ref(RIG_REF_READ, slot(1), 8),
                      ref(RIG_REF_WRITE, slot(2), 16)};
  rig_part_t launch = launch_part(add, refs, 3, 32);
  rig_submission_t *s = make(rig_host(), &launch, 1);
  rig_run_t *r = take(s);
  int64_t k = rig_submission_block(s, 0);
  cr_assert_geq(k, 0, "a launch has a block");
  set_line(r, k, 64, (n + 63) / 64);
  CHECK_OK(rig_run_int64(r, k, 24, n));
  rig_buffer_t *buffers[] = {bx, by, bz};
  uint64_t before = rig_submitted(rig_host());
  rig_point_t p = submit(r, buffers, 3);

  cr_assert(rig_point_device(p) == rig_host(), "SUB-01: the point is not the host's");
  cr_assert_eq(rig_point_value(p), before + 1);
  cr_assert(point_reached(p), "HOST-06, SUB-42: the launch's point is not reached when submit returns");
  const float *got = host_bytes(bz);
  for (int i = 0; i < n; i++)
    cr_assert(got[i] == x[i] + y[i], "LINK-03: z[%d] = %f, want %f", i, (double)got[i], (double)(x[i] + y[i]));

  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(bx);
  rig_buffer_unref(by);
  rig_buffer_unref(bz);
}

Test(host_launch, kernels_call_the_process_and_read_their_constants) {
  /* LINK-35, LINK-36 (memcpy for a struct copy the source does not name),
   * LINK-20 (a constant table in .rodata; a jump table relocated against
   * .text), LINK-38 */
  enum { n = 64, copied = 1000 };
  float in[n], zeros[n] = {0};
  for (int i = 0; i < n; i++) in[i] = (float)i * 0.1f;
  uint8_t src[copied], block_src[256];
  for (int i = 0; i < copied; i++) src[i] = (uint8_t)(i * 7 + 3);
  for (int i = 0; i < 256; i++) block_src[i] = (uint8_t)(255 - i);
  uint8_t blank[copied] = {0};
  rig_buffer_t *buffers[] = {of_bytes(in, sizeof in),       of_bytes(zeros, sizeof zeros),
                             of_bytes(blank, copied),        of_bytes(src, copied),
                             of_bytes(blank, 256),           of_bytes(block_src, 256)};

  rig_image_t *image = load_kernels(rig_host(), LINK_KERNEL("calls"));
  /* struct calls { in, out, dst, src, copy_bytes, block_dst, block_src } */
  rig_ref_t refs[] = {ref(RIG_REF_READ, slot(0), 0),  ref(RIG_REF_WRITE, slot(1), 8),
                      ref(RIG_REF_WRITE, slot(2), 16), ref(RIG_REF_READ, slot(3), 24),
                      ref(RIG_REF_WRITE, slot(4), 40), ref(RIG_REF_READ, slot(5), 48)};
  rig_part_t launch = launch_part(function_of(image, "calls"), refs, 6, 56);
  rig_submission_t *s = make(rig_host(), &launch, 1);
  cr_assert_eq(rig_submission_slots(s), 6);
  rig_run_t *r = take(s);
  int64_t k = rig_submission_block(s, 0);
  set_line(r, k, 1, n); /* one call: the copies are not split */
  CHECK_OK(rig_run_int64(r, k, 32, copied));
  submit(r, buffers, 6);

  static const float scale[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const float *out = host_bytes(buffers[1]);
  for (int i = 0; i < n; i++)
    cr_assert(out[i] == sinf(in[i]) * scale[i & 7], "LINK-35: out[%d] = %f, want sinf(%f) * %f", i,
              (double)out[i], (double)in[i], (double)scale[i & 7]);
  cr_assert(memcmp(host_bytes(buffers[2]), src, copied) == 0, "LINK-35: memcpy did not copy");
  cr_assert(memcmp(host_bytes(buffers[4]), block_src, 256) == 0, "LINK-36: the struct copy did not copy");
  rig_submission_unref(s);
  rig_image_unref(image);

  /* rodata.c: out[i] = pick(in[i], primes[in[i] & 15]), pick a switch. */
  enum { m = 100 };
  static const int64_t primes[16] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
  int64_t values[m], want[m], blank_out[m] = {0};
  for (int i = 0; i < m; i++) {
    values[i] = i * 37 + 5;
    int64_t y = primes[values[i] & 15];
    switch (values[i] & 7) {
      case 0: want[i] = y * 3; break;
      case 1: want[i] = y + 7; break;
      case 2: want[i] = y ^ 5; break;
      case 3: want[i] = y - 11; break;
      case 4: want[i] = y * y; break;
      case 5: want[i] = 99; break;
      case 6: want[i] = y << 3; break;
      default: want[i] = -y; break;
    }
  }
  rig_buffer_t *io[] = {of_bytes(values, sizeof values), of_bytes(blank_out, sizeof blank_out)};
  image = load_kernels(rig_host(), LINK_KERNEL("rodata"));
  rig_ref_t io_refs[] = {ref(RIG_REF_READ, slot(0), 0), ref(RIG_REF_WRITE, slot(1), 8)};
  launch = launch_part(function_of(image, "rodata"), io_refs, 2, 16);
  s = make(rig_host(), &launch, 1);
  r = take(s);
  set_line(r, rig_submission_block(s, 0), 10, 10);
  submit(r, io, 2);
  const int64_t *got = host_bytes(io[1]);
  for (int i = 0; i < m; i++)
    cr_assert_eq(got[i], want[i], "LINK-20: out[%d] = %" PRId64 ", want %" PRId64, i, got[i], want[i]);

  rig_submission_unref(s);
  rig_image_unref(image);
  for (int i = 0; i < 6; i++) rig_buffer_unref(buffers[i]);
  rig_buffer_unref(io[0]);
  rig_buffer_unref(io[1]);
}

Test(host_launch, resolve_finds_functions_and_nothing_else) {
  /* HOST-03 */
  rig_image_t *image = load_kernels(rig_host(), LINK_KERNEL("rodata"));
  cr_assert(rig_image_device(image) == rig_host());
  rig_function_t *f = function_of(image, "rodata");
  cr_assert_str_eq(rig_function_name(f), "rodata");
  cr_assert(rig_function_image(f) == image);
  cr_assert_gt(rig_function_max_threads(f), 0);

  /* primes: an object symbol of .rodata; rodata.c: the file's symbol;
   * and a name the object lacks.  Each answers RIG_OK and no function. */
  const char *not_functions[] = {"primes", "rodata.c", "no_such_function", ""};
  for (size_t i = 0; i < sizeof not_functions / sizeof *not_functions; i++) {
    rig_function_t *none = f;
    CHECK_OK(rig_image_resolve(image, not_functions[i], &none), "resolving \"%s\"", not_functions[i]);
    cr_assert_null(none, "HOST-03: \"%s\" resolved to a function", not_functions[i]);
  }
  rig_function_t *out = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_image_resolve(NULL, "rodata", &out));
  CHECK_FAILS(RIG_EINVAL, rig_image_resolve(image, NULL, &out));
  CHECK_FAILS(RIG_EINVAL, rig_image_resolve(image, "rodata", NULL));
  CHECK_FAILS(RIG_EINVAL, rig_image_prepare(image, NULL));
  CHECK_OK(rig_image_prepare(image, "rodata"));
  CHECK_OK(rig_image_prepare(image, "no_such_function"), "prepare reports nothing");
  cr_assert(rig_image_ref(image) == image);
  rig_image_unref(image);
  rig_image_unref(image);
  rig_image_unref(NULL);
}

/* ---------------------------------------------------------------------- */
/* Launches                                                                 */

/* What the ranges kernel records of one call (kernels/work.c). */
struct call {
  int64_t first, end, stack;
};

static int by_first(const void *a, const void *b) {
  const struct call *x = a, *y = b;
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  return (x->end > y->end) - (x->end < y->end);
}

/* True iff address lies on the calling thread's stack. */
static bool on_this_threads_stack(int64_t address) {
  pthread_attr_t attr;
  cr_assert_eq(pthread_getattr_np(pthread_self(), &attr), 0);
  void *base;
  size_t size;
  cr_assert_eq(pthread_attr_getstack(&attr, &base, &size), 0);
  pthread_attr_destroy(&attr);
  uintptr_t a = (uintptr_t)address;
  return a >= (uintptr_t)base && a < (uintptr_t)base + size;
}

/* Runs the ranges kernel over the grid and checks the calls: they
 * partition the threads into whole groups and each thread ran once. */
static void check_calls(rig_function_t *ranges, const int64_t groups[3], const int64_t threads[3]) {
  int64_t g = groups[0] * groups[1] * groups[2], t = threads[0] * threads[1] * threads[2];
  int64_t total = g * t, spare = 8;
  rig_buffer_t *count = int64s(rig_host(), 1, 0);
  rig_buffer_t *calls = int64s(rig_host(), 3 * g, -1);
  rig_buffer_t *numbers = int64s(rig_host(), total + spare, -1);
  rig_buffer_t *running = int64s(rig_host(), 2, 0);
  rig_ref_t refs[] = {ref(RIG_REF_READ_WRITE, slot(0), 0), ref(RIG_REF_WRITE, slot(1), 8),
                      ref(RIG_REF_WRITE, slot(2), 16), ref(RIG_REF_READ_WRITE, slot(3), 24)};
  rig_part_t launch = launch_part(ranges, refs, 4, 32);
  rig_submission_t *s = make(rig_host(), &launch, 1);
  rig_run_t *r = take(s);
  int64_t k = rig_submission_block(s, 0);
  set_grid(r, k, groups[0], groups[1], groups[2], threads[0], threads[1], threads[2]);
  rig_buffer_t *buffers[] = {count, calls, numbers, running};
  rig_point_t p = submit(r, buffers, 4);
  cr_assert(point_reached(p), "HOST-06");

  int64_t made = *(const int64_t *)host_bytes(count);
  cr_assert(made >= 1 && made <= g, "%" PRId64 " calls for %" PRId64 " groups", made, g);
  struct call *seen = malloc((size_t)made * sizeof *seen);
  cr_assert_not_null(seen);
  memcpy(seen, host_bytes(calls), (size_t)made * sizeof *seen);
  bool on_submitter = false;
  for (int64_t i = 0; i < made; i++) {
    cr_assert(seen[i].first % t == 0 && seen[i].end % t == 0,
              "HOST-10: a call ran [%" PRId64 ", %" PRId64 "), not whole groups of %" PRId64, seen[i].first,
              seen[i].end, t);
    on_submitter = on_submitter || on_this_threads_stack(seen[i].stack);
  }
  qsort(seen, (size_t)made, sizeof *seen, by_first);
  int64_t next = 0;
  for (int64_t i = 0; i < made; i++) {
    cr_assert(seen[i].first == next && seen[i].end >= seen[i].first,
              "HOST-11: the calls leave a gap or overlap at thread %" PRId64 " (a call ran [%" PRId64 ", %" PRId64 "))",
              next, seen[i].first, seen[i].end);
    next = seen[i].end;
  }
  cr_assert_eq(next, total, "HOST-11: the calls ran threads up to %" PRId64 " of %" PRId64, next, total);
  free(seen);

  const int64_t *n = host_bytes(numbers);
  for (int64_t i = 0; i < total; i++) cr_assert_eq(n[i], i, "HOST-09: thread %" PRId64 " did not run", i);
  for (int64_t i = total; i < total + spare; i++) cr_assert_eq(n[i], -1, "HOST-09: thread %" PRId64 " ran", i);

  cr_assert(on_submitter, "HOST-05: no call ran on the thread that submitted the launch");
  const int64_t *most = host_bytes(running);
  cpu_set_t cpus;
  cr_assert_eq(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  cr_assert(most[1] >= 1 && most[1] <= CPU_COUNT(&cpus),
            "HOST-12: %" PRId64 " calls ran at once on %d CPUs", most[1], CPU_COUNT(&cpus));

  rig_submission_unref(s);
  for (int i = 0; i < 4; i++) rig_buffer_unref(buffers[i]);
}

Test(host_launch, calls_partition_the_threads_into_whole_groups) {
  /* HOST-05, HOST-07, HOST-09, HOST-10, HOST-11, HOST-12 */
  rig_image_t *image = load_kernels(rig_host(), RUN_KERNEL("work"));
  rig_function_t *ranges = function_of(image, "ranges");
  const int64_t grids[][2][3] = {
      {{1, 1, 1}, {1, 1, 1}},
      {{1000, 1, 1}, {7, 1, 1}},
      {{5, 4, 3}, {4, 3, 2}},
      {{2, 3, 7}, {1, 1, 5}},
  };
  for (size_t i = 0; i < sizeof grids / sizeof *grids; i++) check_calls(ranges, grids[i][0], grids[i][1]);
  rig_image_unref(image);
}

Test(host_launch, params_hold_the_host_addresses_of_refs) {
  /* HOST-08, SUB-29 (buffers[i] is slot i) */
  rig_image_t *image = load_kernels(rig_host(), RUN_KERNEL("work"));
  rig_buffer_t *out = int64s(rig_host(), 3, 0);
  rig_buffer_t *a = create(rig_host(), 256);
  rig_buffer_t *b = view(a, 16, 64);
  rig_ref_t refs[] = {ref(RIG_REF_WRITE, slot(0), 0), ref(RIG_REF_READ, slot(1), 8), ref(RIG_REF_READ, slot(2), 16)};
  rig_part_t launch = launch_part(function_of(image, "addresses"), refs, 3, 24);
  rig_submission_t *s = make(rig_host(), &launch, 1);
  cr_assert_eq(rig_submission_slots(s), 3);

  rig_buffer_t *orders[2][3] = {{out, a, b}, {out, b, a}};
  for (int round = 0; round < 2; round++) {
    rig_run_t *r = take(s);
    set_line(r, rig_submission_block(s, 0), 1, 1);
    submit(r, orders[round], 3);
    const int64_t *got = host_bytes(out);
    for (int i = 0; i < 3; i++)
      cr_assert_eq((uintptr_t)got[i], (uintptr_t)rig_buffer_host(orders[round][i]),
                   "HOST-08, SUB-29: round %d: the ref to slot %d holds %#" PRIx64 ", not slot %d's host address",
                   round, i, got[i], i);
  }
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(b);
  rig_buffer_unref(a);
  rig_buffer_unref(out);
}

Test(host_launch, an_entry_ref_calls_a_function_of_another_image) {
  /* LINK-37, HOST-07 (first and end of a launch of one thread), SUB-30 */
  rig_image_t *caller = load_kernels(rig_host(), LINK_KERNEL("arguments"));
  rig_image_t *callee = load_kernels(rig_host(), RUN_KERNEL("triple"));
  rig_function_t *target = function_of(callee, "triple_plus_one");
  rig_buffer_t *seen = int64s(rig_host(), 4, -1);
  /* struct arguments { int64_t *seen; int64_t (*other)(int64_t); int64_t x; } */
  rig_ref_t refs[] = {ref(RIG_REF_WRITE, slot(0), 0), entry_ref(target, 8)};
  rig_part_t launch = launch_part(function_of(caller, "arguments"), refs, 2, 24);
  rig_submission_t *s = make(rig_host(), &launch, 1);
  /* The submission holds the images it launches and calls: dropping ours
   * keeps them (rig_image_load). */
  rig_image_unref(callee);
  rig_image_unref(caller);
  rig_run_t *r = take(s);
  int64_t k = rig_submission_block(s, 0);
  set_line(r, k, 1, 1);
  CHECK_OK(rig_run_int64(r, k, 16, 14));
  submit(r, &seen, 1);
  const int64_t *got = host_bytes(seen);
  cr_assert_neq(got[0], 0, "HOST-07: params is NULL");
  cr_assert(got[1] == 0 && got[2] == 1, "HOST-07: one thread ran as [%" PRId64 ", %" PRId64 ")", got[1], got[2]);
  cr_assert_eq(got[3], 3 * 14 + 1, "LINK-37, SUB-30: the call through the entry ref answered %" PRId64, got[3]);
  rig_submission_unref(s);
  rig_buffer_unref(seen);
}

Test(host_launch, launches_that_never_run) {
  /* HOST-13, HOST-14, HOST-15: submit answers RIG_EINVAL, the function is
   * not called, and no value is assigned. */
  rig_image_t *image = load_kernels(rig_host(), RUN_KERNEL("work"));
  rig_buffer_t *out = int64s(rig_host(), 4, 0);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(function_of(image, "set"), refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(rig_host(), &launch, 1);
  int64_t k = rig_submission_block(s, 0);
  const int64_t big = INT64_C(1) << 31, quarter = INT64_C(1) << 60;
  struct {
    const char *rule;
    bool grid; /* whether the grid is stored: a run's starts as 0 x 0 x 0 */
    int64_t groups[3], threads[3], shared;
  } refused[] = {
      {"HOST-13: shared memory", true, {1, 1, 1}, {4, 1, 1}, 16},
      {"HOST-14: the taken run's grid of zeros", false, {0, 0, 0}, {0, 0, 0}, 0},
      {"HOST-14: zero groups along x", true, {0, 1, 1}, {4, 1, 1}, 0},
      {"HOST-14: zero groups along y", true, {1, 0, 1}, {4, 1, 1}, 0},
      {"HOST-14: zero groups along z", true, {1, 1, 0}, {4, 1, 1}, 0},
      {"HOST-14: zero threads along x", true, {1, 1, 1}, {0, 1, 1}, 0},
      {"HOST-14: zero threads along y", true, {1, 1, 1}, {4, 0, 1}, 0},
      {"HOST-14: zero threads along z", true, {1, 1, 1}, {4, 1, 0}, 0},
      {"HOST-15: 2^62 + 4 threads", true, {quarter + 1, 1, 1}, {2, 1, 2}, 0},
      {"HOST-15: 2^63 threads, past int64", true, {big, big, 1}, {2, 1, 1}, 0},
      {"HOST-15: a count far past int64", true, {INT64_MAX, INT64_MAX, INT64_MAX}, {INT64_MAX, 2, 3}, 0},
  };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    rig_run_t *r = take(s);
    if (refused[i].grid)
      set_grid(r, k, refused[i].groups[0], refused[i].groups[1], refused[i].groups[2], refused[i].threads[0],
               refused[i].threads[1], refused[i].threads[2]);
    if (refused[i].shared) CHECK_OK(rig_run_shared(r, k, refused[i].shared));
    CHECK_OK(rig_run_int64(r, k, 8, 77));
    uint64_t before = rig_submitted(rig_host());
    CHECK_FAILS(RIG_EINVAL, rig_submit(r, &out, 1, NULL, 0, NULL), "%s", refused[i].rule);
    cr_assert_eq(rig_submitted(rig_host()), before, "%s: the refused submit assigned a value", refused[i].rule);
    const int64_t *got = host_bytes(out);
    for (int j = 0; j < 4; j++) cr_assert_eq(got[j], 0, "%s: the function ran", refused[i].rule);
  }
  /* The same launch with a grid it may run writes the marker. */
  rig_run_t *r = take(s);
  set_line(r, k, 1, 4);
  CHECK_OK(rig_run_int64(r, k, 8, 77));
  submit(r, &out, 1);
  const int64_t *got = host_bytes(out);
  for (int j = 0; j < 4; j++) cr_assert_eq(got[j], 77, "the launch that may run did not write its marker");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(out);
}
