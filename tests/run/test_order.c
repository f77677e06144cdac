/* The run suite: the order of submitted work and what a submission keeps
 * (rig.txt, Order; Memory after a loss; Reclamation; Stops and forks;
 * rig-buffer.txt, Host access).  Sim devices run each queue on a worker
 * thread after submit returns, with a latency, so that work rig failed to
 * order would show.
 *
 * Asserts: ORD-03, ORD-22, ORD-23, LMEM-02, LMEM-10, HACC-19, RECL-06,
 *   STOP-03, SUB-03, SUB-40, SUB-41.
 *
 * Not reached here: ORD-04, ORD-05 (words parts): their order shows only
 * against work the words part does not touch, whose order rig does not
 * state, so a test cannot tell it from chance; the sim suite's driver
 * tests check the after lists the sim receives.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "helpers.h"
#include "run_support.h"

#define MIB ((int64_t)1 << 20)
/* Work takes long enough that work run out of order would show. */
#define LATENCY "latency_us=20000,commit_every=1"

/* Copies the bytes of a host access into context (an int64_t[8]). */
static int copy_out(void *bytes, int64_t n, void *context) {
  memcpy(context, bytes, (size_t)(n < 64 ? n : 64));
  return 0;
}

/* Whether rig_buffer_reached answers that a host access of kind access
 * to b would not wait. */
static bool buffer_reached(rig_buffer_t *b, rig_access_t access) {
  bool reached = false;
  CHECK_OK(rig_buffer_reached(b, access, &reached));
  return reached;
}

/* ---------------------------------------------------------------------- */
/* Parts of one submission                                                  */

Test(order, a_launch_follows_the_copy_it_reads_and_a_copy_the_launch_it_reads) {
  /* ORD-03: the copy runs on the copy engine, the launch on the compute
   * queue; only the submission's order makes each see the other's bytes.
   * SUB-40, SUB-41: the work runs and the stamps order the host's reads. */
  rig_device_t *sim = open_sim("SIM:61", LATENCY);
  rig_image_t *image = load_kernels(sim, RUN_KERNEL("work"));
  rig_ref_t reads[] = {ref(RIG_REF_READ, slot(1), 0), ref(RIG_REF_WRITE, slot(2), 8)};
  rig_ref_t writes[1];
  rig_part_t copy_then_launch[] = {copy_part(slot(0), slot(1)),
                                   launch_part(function_of(image, "copy"), reads, 2, 16)};
  rig_part_t launch_then_copy[] = {set_launch(function_of(image, "set"), writes, RIG_REF_WRITE, slot(0)),
                                   copy_part(slot(0), slot(1))};
  rig_submission_t *first = make(sim, copy_then_launch, 2);
  rig_submission_t *second = make(sim, launch_then_copy, 2);
  rig_buffer_t *src = create(sim, 64), *mid = create(sim, 64), *out = create(sim, 64);
  rig_buffer_t *three[] = {src, mid, out};
  rig_buffer_t *two[] = {src, mid};

  for (uint8_t round = 1; round <= 3; round++) {
    CHECK_OK(rig_buffer_fill(src, round));
    CHECK_OK(rig_buffer_fill(mid, 0));
    CHECK_OK(rig_buffer_fill(out, 0));
    rig_run_t *r = take(first);
    set_line(r, rig_submission_block(first, 1), 1, 8);
    submit(r, three, 3);
    int64_t want = (int64_t)(0x0101010101010101ull * round);
    expect_int64s(out, 8, want, "ORD-03: the launch after the copy it reads");

    r = take(second);
    int64_t k = rig_submission_block(second, 0);
    set_line(r, k, 1, 8);
    CHECK_OK(rig_run_int64(r, k, 8, 1000 + round));
    submit(r, two, 2);
    expect_int64s(mid, 8, 1000 + round, "ORD-03: the copy after the launch it reads");
  }
  rig_submission_unref(first);
  rig_submission_unref(second);
  rig_image_unref(image);
  for (int i = 0; i < 3; i++) rig_buffer_unref(three[i]);
  CHECK_OK(rig_close(sim));
}

Test(order, a_host_read_follows_the_launch_that_wrote) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* ORD-03's memory order against the host: a host access follows the
   * last write of a launch (SUB-41) */
  rig_device_t *sim = open_sim("SIM:62", SIM_QUICK);
  rig_image_t *image = load_kernels(sim, RUN_KERNEL("work"));
  rig_buffer_t *b = pinned_zeros(sim, 8);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(function_of(image, "set"), refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(sim, &launch, 1);
  rig_run_t *r = take(s);
  int64_t k = rig_submission_block(s, 0);
  set_line(r, k, 2, 4);
  CHECK_OK(rig_run_int64(r, k, 8, 31));
  sim_latency(sim, SIM_SLOW_US);
  rig_point_t p = submit(r, &b, 1);
  cr_assert(!buffer_reached(b, RIG_ACCESS_READ), "SUB-41: a read of the launch's buffer would not wait");
  int64_t seen[8] = {0};
  CHECK_OK(rig_buffer_read(b, 8, copy_out, seen));
  cr_assert(point_reached(p), "the read returned before the launch it follows was reached");
  for (int i = 0; i < 8; i++) cr_assert_eq(seen[i], 31, "the host read value %d as %" PRId64, i, seen[i]);
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(sim));
}

/* ---------------------------------------------------------------------- */
/* Unordered refs                                                           */

/* A submission on d of set writing slot 0 through an unordered ref. */
static rig_submission_t *unordered_set(rig_device_t *d, rig_image_t *image) {
  rig_ref_t refs[] = {unordered_ref(slot(0), 0, RIG_ACCESS_READ_WRITE)};
  rig_part_t launch = launch_part(function_of(image, "set"), refs, 1, 16);
  return make(d, &launch, 1);
}

Test(order, no_host_access_follows_unordered_work) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* ORD-22, ORD-23, HACC-19, LMEM-02 (the unordered use adds no stamp) */
  rig_device_t *sim = open_sim("SIM:63", SIM_QUICK);
  rig_image_t *image = load_kernels(sim, RUN_KERNEL("work"));
  rig_buffer_t *b = pinned_zeros(sim, 8);
  rig_submission_t *s = unordered_set(sim, image);
  sim_latency(sim, SIM_SLOW_US);
  rig_point_t p = submit_set(s, b, 8, 5);
  cr_assert(buffer_reached(b, RIG_ACCESS_READ_WRITE), "ORD-23: a host access would wait for unordered work");
  CHECK_OK(rig_buffer_wait(b, RIG_ACCESS_READ_WRITE));
  cr_assert(!point_reached(p), "HACC-19: rig_buffer_wait waited for unordered work");
  CHECK_OK(rig_point_wait(p));
  const int64_t *values = rig_buffer_host(b);
  for (int i = 0; i < 8; i++) cr_assert_eq(values[i], 5, "the unordered launch's write %d", i);
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(sim));
}

Test(order, an_unordered_use_of_memory_a_lost_device_wrote_goes_ahead) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* LMEM-10, LMEM-02 */
  rig_device_t *lost = open_sim("SIM:64", SIM_QUICK);
  rig_device_t *user = open_sim("SIM:65", SIM_QUICK);
  rig_image_t *image = load_kernels(user, RUN_KERNEL("work"));
  rig_buffer_t *b = create(lost, 64);
  rig_buffer_t *lent = borrow(user, b);
  lose_by_fault(lost, b, "injected fault");

  rig_submission_t *unordered = unordered_set(user, image);
  rig_point_t p = submit_set(unordered, lent, 8, 9);
  CHECK_OK(rig_point_wait(p), "LMEM-10: the unordered use of the memory");

  rig_ref_t refs[1];
  rig_part_t launch = set_launch(function_of(image, "set"), refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *ordered = make(user, &launch, 1);
  CHECK_LOST(lost, try_set(ordered, &lent, 1, 8, 1, NULL), "LMEM-10: an ordered use of the memory");
  cr_assert_null(rig_lost(user), "the loss spread to the device that used the memory unordered");

  rig_submission_unref(unordered);
  rig_submission_unref(ordered);
  rig_image_unref(image);
  rig_buffer_unref(lent);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(user));
  CHECK_OK(rig_close(lost));
}

Test(order, collected_memory_waits_for_unordered_work) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* RECL-06 */
  rig_device_t *sim = open_sim("SIM:66", SIM_QUICK);
  rig_image_t *image = load_kernels(sim, RUN_KERNEL("work"));
  rig_submission_t *s = unordered_set(sim, image);
  int64_t start = rig_allocated(sim);
  rig_buffer_t *b = create(sim, MIB);
  int64_t held = rig_allocated(sim);
  cr_assert_geq(held - start, MIB);
  sim_latency(sim, SIM_SLOW_US);
  rig_point_t p = submit_set(s, b, 8, 1);
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(sim));
  cr_assert(!point_reached(p), "the work ran before the test checked: raise the latency");
  cr_assert_eq(rig_allocated(sim), held, "RECL-06: the memory returned before the unordered work was done");
  CHECK_OK(rig_point_wait(p));
  CHECK_OK(rig_free_cache(sim));
  cr_assert_eq(rig_allocated(sim), start, "the memory did not return once the unordered work was done");
  rig_submission_unref(s);
  rig_image_unref(image);
  CHECK_OK(rig_close(sim));
}

/* ---------------------------------------------------------------------- */
/* What a submission keeps                                                  */

/* A keep callback's record: its calls, and the device's signaled value
 * at the first (rig_signaled takes no lock). */
struct keep_record {
  rig_device_t *device;
  atomic_int calls;
  uint64_t signaled;
};

static void count_keep(void *context) {
  struct keep_record *k = context;
  if (atomic_fetch_add(&k->calls, 1) == 0) {
    uint64_t v = 0;
    if (rig_signaled(k->device, &v) == RIG_OK) k->signaled = v;
  }
}

/* rig_submission_make with keep counting into record. */
static rig_submission_t *make_keeping(rig_device_t *d, const rig_part_t *parts, size_t n, struct keep_record *record) {
  rig_submission_options_t options = {sizeof options, count_keep, record};
  rig_submission_t *s = NULL;
  CHECK_OK(rig_submission_make(d, parts, n, &options, &s));
  cr_assert_not_null(s);
  return s;
}

/* Returns once record's keep has been called, moving d's collected memory
 * (rig_free_cache) meanwhile; fails the test after 5 s. */
static void await_keep(rig_device_t *d, struct keep_record *record) {
  for (int i = 0; i < 5000 && atomic_load(&record->calls) == 0; i++) {
    CHECK_OK(rig_free_cache(d));
    if (atomic_load(&record->calls) == 0) nap_ms(1);
  }
  cr_assert_eq(atomic_load(&record->calls), 1, "keep was called %d times, not once", atomic_load(&record->calls));
}

Test(order, keep_returns_once_the_last_work_is_done) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* SUB-03 */
  rig_device_t *sim = open_sim("SIM:67", SIM_QUICK);
  rig_image_t *image = load_kernels(sim, RUN_KERNEL("work"));
  rig_buffer_t *b = pinned_zeros(sim, 8);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(function_of(image, "set"), refs, RIG_REF_WRITE, slot(0));
  struct keep_record record = {sim, 0, 0};
  rig_submission_t *s = make_keeping(sim, &launch, 1, &record);
  rig_image_unref(image);
  sim_latency(sim, SIM_SLOW_US);
  submit_set(s, b, 8, 1);
  rig_point_t last = submit_set(s, b, 8, 2);
  rig_submission_unref(s);
  CHECK_OK(rig_free_cache(sim));
  cr_assert(!point_reached(last), "the work ran before the test checked: raise the latency");
  cr_assert_eq(atomic_load(&record.calls), 0, "SUB-03: keep returned before the last submit's work was done");
  CHECK_OK(rig_point_wait(last));
  await_keep(sim, &record);
  cr_assert_geq(record.signaled, rig_point_value(last), "SUB-03: keep ran before the device reached the work");
  expect_int64s(b, 8, 2, "the last submit's work");
  rig_buffer_unref(b);
  CHECK_OK(rig_close(sim));

  /* On the host the work is done when submit returns; a submission never
   * submitted keeps nothing past its release. */
  rig_image_t *host_image = load_kernels(rig_host(), RUN_KERNEL("work"));
  launch = set_launch(function_of(host_image, "set"), refs, RIG_REF_WRITE, slot(0));
  struct keep_record on_host = {rig_host(), 0, 0}, unused = {rig_host(), 0, 0};
  rig_buffer_t *out = int64s(rig_host(), 8, 0);
  s = make_keeping(rig_host(), &launch, 1, &on_host);
  rig_submission_t *never = make_keeping(rig_host(), &launch, 1, &unused);
  rig_image_unref(host_image);
  submit_set(s, out, 8, 3);
  cr_assert_eq(atomic_load(&on_host.calls), 0, "keep ran while the submission was held");
  rig_submission_unref(s);
  rig_submission_unref(never);
  await_keep(rig_host(), &on_host);
  await_keep(rig_host(), &unused);
  rig_buffer_unref(out);
}

Test(order, a_lost_devices_submissions_keep_until_it_stops) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* STOP-03 */
  rig_device_t *sim = open_sim("SIM:68", SIM_QUICK);
  rig_buffer_t *b = create(sim, 64);
  rig_part_t fill = fill_part(slot(0), 1);
  struct keep_record record = {sim, 0, 0};
  rig_submission_t *s = make_keeping(sim, &fill, 1, &record);
  sim_fault_next(sim, "injected fault");
  rig_point_t p = submit(take(s), &b, 1);
  CHECK_LOST(sim, rig_point_wait(p), "the faulting work");
  rig_submission_unref(s);
  CHECK_OK(rig_free_cache(sim));
  cr_assert_eq(atomic_load(&record.calls), 0, "STOP-03: keep returned before the lost device stopped");
  CHECK_OK(rig_close(sim));
  await_stopped(sim);
  await_keep(sim, &record);
  rig_buffer_unref(b);
}
