/* The run suite: rig_submit allocates no memory unless it waits, a profile
 * is being taken or the device's queues grow (rig.txt, Submitting).  The
 * test binary counts the calling thread's malloc, calloc and realloc calls
 * while it submits, once a few submits have grown rig's scratch and started
 * the host's pool.
 *
 * Asserts: SUB-39.
 *
 * Under AddressSanitizer and ThreadSanitizer the counting allocator would
 * replace the sanitizer's, so the tests skip there.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "helpers.h"
#include "run_support.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNTS_ALLOCATIONS 0
#else
#define COUNTS_ALLOCATIONS 1

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t count, size_t n);
extern void *__libc_realloc(void *p, size_t n);

/* Counted on the thread that sets counting: other threads (Criterion's,
 * the pool's workers) allocate as they please. */
static __thread int counting;
static __thread long allocations;

void *malloc(size_t n) {
  allocations += counting;
  return __libc_malloc(n);
}
void *calloc(size_t count, size_t n) {
  allocations += counting;
  return __libc_calloc(count, n);
}
void *realloc(void *p, size_t n) {
  allocations += counting;
  return __libc_realloc(p, n);
}
#endif

enum { WARM_UP = 4, COUNTED = 200 };

/* Allocations made by COUNTED rounds of take, stores and submit of s with
 * the n buffers (after WARM_UP uncounted rounds); each round's launch, if
 * part 0 is one, runs groups groups of 4 threads of set. */
static long allocations_of_submits(rig_submission_t *s, rig_buffer_t *const *buffers, size_t n, int64_t groups) {
#if COUNTS_ALLOCATIONS
  int64_t k = rig_submission_block(s, 0);
  long before = 0;
  for (int round = 0; round < WARM_UP + COUNTED; round++) {
    if (round == WARM_UP) {
      before = allocations;
      counting = 1;
    }
    rig_run_t *r = NULL;
    rig_status_t taken = rig_submission_take(s, &r);
    rig_status_t stored = RIG_OK;
    if (k >= 0) {
      stored |= rig_run_groups(r, k, groups, 1, 1);
      stored |= rig_run_threads(r, k, 4, 1, 1);
      stored |= rig_run_int64(r, k, 8, round);
    }
    rig_point_t p;
    rig_status_t submitted = rig_submit(r, buffers, n, NULL, 0, &p);
    counting = 0;
    cr_assert(taken == RIG_OK && stored == RIG_OK && submitted == RIG_OK, "round %d: %s", round, rig_last_error());
    CHECK_OK(rig_point_wait(p));
    counting = round >= WARM_UP;
  }
  counting = 0;
  return allocations - before;
#else
  (void)s, (void)buffers, (void)n, (void)groups;
  return -1;
#endif
}

/* Skipped before a test makes anything, so that nothing is left behind for
 * the leak checker. */
static void skip_unless_counting(void) {
  if (!COUNTS_ALLOCATIONS)
    cr_skip_test("a sanitizer's allocator cannot be counted");
}

Test(allocations, host_launches_allocate_nothing) {
  /* SUB-39: launches of one group (on the calling thread) and of 64 groups
   * (through the pool) over a host buffer. */
  skip_unless_counting();
  rig_image_t *image = load_kernels(rig_host(), RUN_KERNEL("work"));
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(function_of(image, "set"), refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(rig_host(), &launch, 1);
  rig_buffer_t *out = int64s(rig_host(), 64 * 4, 0);
  cr_expect_eq(allocations_of_submits(s, &out, 1, 1), 0, "SUB-39: one group");
  cr_expect_eq(allocations_of_submits(s, &out, 1, 64), 0, "SUB-39: 64 groups through the pool");
  rig_submission_unref(s);
  rig_buffer_unref(out);
  rig_image_unref(image);
}

Test(allocations, copies_on_a_memory_device_allocate_nothing) {
  /* SUB-39: a copy part on a memory device's queue, through the driver's
   * submit. */
  skip_unless_counting();
  rig_device_t *mem = open_named("MEM:0");
  rig_part_t copy = copy_part(slot(0), slot(1));
  rig_submission_t *s = make(mem, &copy, 1);
  rig_buffer_t *buffers[2] = {int64s(mem, 512, 3), int64s(mem, 512, 0)};
  cr_expect_eq(allocations_of_submits(s, buffers, 2, 0), 0, "SUB-39: copies");
  expect_int64s(buffers[1], 512, 3, "the copies ran");
  rig_submission_unref(s);
  rig_buffer_unref(buffers[0]);
  rig_buffer_unref(buffers[1]);
}
