/* The run suite: submitting (rig.txt, Running work: Submitting, and the
 * runs of Submission.take).  Sim devices run their work on worker threads
 * after submit returns, so what a store after submit changes and what a
 * wait orders shows; the host runs it before submit returns.
 *
 * Asserts: SUB-01, SUB-02, SUB-24, SUB-25, SUB-28, SUB-30, SUB-31, SUB-33,
 *   SUB-34, SUB-35, SUB-36, SUB-43, SUB-46, SUB-47, SUB-48, SUB-49,
 *   HOST-14 (a free run submit takes is a run of zeros).
 *
 * Not reached here:
 *   SUB-32 (each element of buffers read once): a C array's reads are not
 *     observable.
 *   SUB-44 (another submit of r under way) apart from SUB-43: the submit
 *     under way is on another thread, which has taken r; a second submit
 *     on the same thread would have to run inside the first's launch.
 *   SUB-26, SUB-27, SUB-37..39, SUB-45: the sim's queues always have room
 *     for a launch; the queues' growth is the sim suite's (grow_every) with
 *     fills, whose path submit shares.
 *   SUB-40, SUB-41: observed through the order tests (test_order.c).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "helpers.h"
#include "run_support.h"


/* A submission on d of one launch of work.c's set writing slot 0; *image
 * receives the image it loaded on d. */
static rig_submission_t *set_submission(rig_device_t *d, rig_image_t **image) {
  *image = load_kernels(d, RUN_KERNEL("work"));
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(function_of(*image, "set"), refs, RIG_REF_WRITE, slot(0));
  return make(d, &launch, 1);
}

/* Runs f(arg) on a new thread and joins it. */
static void on_another_thread(void *(*f)(void *), void *arg) {
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, f, arg), 0);
  cr_assert_eq(pthread_join(t, NULL), 0);
}

/* What another thread does with a run: its calls' answers, which the test
 * asserts on its own thread (Criterion asserts there only). */
struct other_thread {
  rig_run_t *run;
  int64_t block;
  rig_buffer_t *buffer;
  rig_status_t store, submit;
};

static void *store_into_run(void *arg) {
  struct other_thread *o = arg;
  o->store = rig_run_int64(o->run, o->block, 8, 3);
  return NULL;
}

static void *store_and_submit_run(void *arg) {
  struct other_thread *o = arg;
  o->store = rig_run_int64(o->run, o->block, 8, 3);
  o->submit = rig_submit(o->run, &o->buffer, 1, NULL, 0, NULL);
  return NULL;
}

/* ---------------------------------------------------------------------- */
/* Points and runs                                                          */

Test(submit, submit_answers_the_next_value_of_the_device) {
  /* SUB-01, SUB-28, SUB-30 */
  rig_device_t *sim = open_sim("SIM:50", SIM_QUICK);
  rig_device_t *devices[] = {rig_host(), sim};
  for (int i = 0; i < 2; i++) {
    rig_device_t *d = devices[i];
    rig_image_t *image;
    rig_submission_t *s = set_submission(d, &image);
    rig_buffer_t *out = int64s(d, 8, 0);
    for (int64_t round = 1; round <= 3; round++) {
      rig_run_t *r = take(s);
      store_set(r, rig_submission_block(s, 0), 8, round * 11);
      uint64_t before = rig_submitted(d);
      rig_point_t p = submit(r, &out, 1);
      cr_assert(rig_point_device(p) == d, "SUB-28: the point is not %s's", rig_device_name(d));
      cr_assert_eq(rig_point_value(p), before + 1, "SUB-28: %s", rig_device_name(d));
      cr_assert_eq(rig_submitted(d), before + 1);
      CHECK_OK(rig_point_wait(p));
      expect_int64s(out, 8, round * 11, "SUB-01, SUB-30: the launch's writes");
    }
    rig_submission_unref(s);
    rig_image_unref(image);
    rig_buffer_unref(out);
  }
  CHECK_OK(rig_close(sim));
}

Test(submit, a_store_after_submit_changes_nothing_of_its_work) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* SUB-33, SUB-30, SUB-34 (the run is free: a store takes it) */
  rig_device_t *sim = open_sim("SIM:51", SIM_QUICK);
  rig_image_t *image;
  rig_submission_t *s = set_submission(sim, &image);
  int64_t k = rig_submission_block(s, 0);
  rig_buffer_t *out = pinned_zeros(sim, 16);
  rig_run_t *r = take(s);
  store_set(r, k, 16, 1);
  sim_latency(sim, SIM_SLOW_US);
  rig_point_t p = submit(r, &out, 1);
  CHECK_OK(rig_run_int64(r, k, 8, 2), "SUB-34: a store into the run submit freed");
  CHECK_OK(rig_run_threads(r, k, 2, 1, 1));
  cr_assert(!point_reached(p), "the work ran before the test stored into the run: raise the latency");
  CHECK_OK(rig_point_wait(p));
  expect_int64s(out, 16, 1, "SUB-33: the work of the first submit");
  sim_latency(sim, 0);

  /* The run this thread took by storing into it submits the new value. */
  store_set(r, k, 16, 2);
  CHECK_OK(rig_point_wait(submit(r, &out, 1)));
  expect_int64s(out, 16, 2, "the second submit");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(out);
  CHECK_OK(rig_close(sim));
}

Test(submit, a_run_is_free_once_submit_returns) {
  /* SUB-02, SUB-34, SUB-35, HOST-14 */
  rig_image_t *image;
  rig_submission_t *s = set_submission(rig_host(), &image);
  int64_t k = rig_submission_block(s, 0);
  rig_buffer_t *out = int64s(rig_host(), 4, 0);
  rig_run_t *r = take(s);
  store_set(r, k, 4, 1);
  submit(r, &out, 1);
  expect_int64s(out, 4, 1, "the first submit");

  /* Submitting the freed run again takes it anew: a run of zeros, whose
   * launch never runs. */
  CHECK_FAILS(RIG_EINVAL, rig_submit(r, &out, 1, NULL, 0, NULL),
              "SUB-02, HOST-14: a second submit of the run without storing its grid again");
  expect_int64s(out, 4, 1, "SUB-02: the second submit ran the first's launch");

  /* The refused submit freed the run too: another thread's store takes
   * it, and then this thread's store and submit are refused. */
  struct other_thread other = {r, k, out, RIG_EINVAL, RIG_EINVAL};
  on_another_thread(store_into_run, &other);
  cr_assert_eq(other.store, RIG_OK, "SUB-34: a store into the freed run from another thread answered %s",
               rig_status_name(other.store));
  CHECK_FAILS(RIG_EINVAL, rig_run_int64(r, k, 8, 4), "a store into a run another thread has taken");
  CHECK_FAILS(RIG_EINVAL, rig_submit(r, &out, 1, NULL, 0, NULL), "SUB-43: a submit of another thread's run");
  expect_int64s(out, 4, 1, "SUB-43: the refused submit ran");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(out);
}

Test(submit, another_threads_run_is_refused_and_stays_its_own) {
  /* SUB-43, SUB-35 (a run the calling thread has taken) */
  rig_image_t *image;
  rig_submission_t *s = set_submission(rig_host(), &image);
  int64_t k = rig_submission_block(s, 0);
  rig_buffer_t *out = int64s(rig_host(), 4, 0);
  rig_run_t *r = take(s);
  store_set(r, k, 4, 7);
  struct other_thread other = {r, k, out, RIG_OK, RIG_OK};
  on_another_thread(store_and_submit_run, &other);
  cr_assert_eq(other.store, RIG_EINVAL, "a store into a run another thread has taken answered %s",
               rig_status_name(other.store));
  cr_assert_eq(other.submit, RIG_EINVAL, "SUB-43: a submit of a run another thread has taken answered %s",
               rig_status_name(other.submit));
  expect_int64s(out, 4, 0, "SUB-43: the refused submit ran");
  /* The refused calls neither took nor freed the run: it holds what this
   * thread stored. */
  submit(r, &out, 1);
  expect_int64s(out, 4, 7, "SUB-35: the run this thread took and stored");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(out);
}

Test(submit, a_free_run_is_taken_by_submit_and_an_empty_one_used) {
  /* SUB-35 (a free run: submit takes it), SUB-36, SUB-30 (a fill's value) */
  rig_device_t *mem = open_named("MEM:0");
  rig_buffer_t *b = create(mem, 64);
  rig_part_t fill = fill_part(slot(0), 7);
  rig_submission_t *s = make(mem, &fill, 1);
  int64_t k = rig_submission_block(s, 0);
  cr_assert_geq(k, 0, "a fill has a block");
  rig_run_t *r = take(s);
  CHECK_OK(rig_run_fill(r, k, 9));
  CHECK_OK(rig_point_wait(submit(r, &b, 1)));
  expect_int64s(b, 8, 0x0909090909090909, "SUB-30: the fill value stored in the run");
  CHECK_OK(rig_point_wait(submit(r, &b, 1)), "SUB-35: a submit of the free run");
  expect_int64s(b, 8, 0x0707070707070707, "SUB-35: the run submit took holds the part's value");
  rig_submission_unref(s);

  /* A copy alone holds no bytes in a run. */
  rig_buffer_t *src = create(mem, 64);
  CHECK_OK(rig_buffer_fill(src, 5));
  rig_part_t copy = copy_part(slot(0), slot(1));
  s = make(mem, &copy, 1);
  cr_assert_eq(rig_submission_block(s, 0), -1, "a copy has no block");
  cr_assert_eq(rig_submission_block(s, 1), -1, "no part 1");
  r = take(s);
  rig_buffer_t *pair[] = {src, b};
  CHECK_OK(rig_point_wait(submit(r, pair, 2)));
  expect_int64s(b, 8, 0x0505050505050505, "the copy");
  CHECK_OK(rig_buffer_fill(src, 6));
  CHECK_OK(rig_point_wait(submit(r, pair, 2)), "SUB-36: a second submit of a run that holds no bytes");
  expect_int64s(b, 8, 0x0606060606060606, "the second copy");
  rig_submission_unref(s);
  rig_buffer_unref(src);
  rig_buffer_unref(b);
}

Test(submit, runs_refuse_misuse) {
  /* rig_submission_take and the setters: RIG_EINVAL, storing nothing */
  rig_device_t *sim = open_sim("SIM:59", SIM_QUICK);
  rig_image_t *image = load_kernels(sim, RUN_KERNEL("work"));
  rig_ref_t refs[1];
  rig_buffer_t *b = create(sim, 64);
  rig_part_t parts[] = {fill_part(slot(0), 1), set_launch(function_of(image, "set"), refs, RIG_REF_WRITE, slot(0))};
  rig_submission_t *s = make(sim, parts, 2);
  int64_t fill = rig_submission_block(s, 0), launch = rig_submission_block(s, 1);
  cr_assert(fill >= 0 && launch >= 0 && fill != launch);
  rig_run_t *r = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_submission_take(NULL, &r));
  CHECK_FAILS(RIG_EINVAL, rig_submission_take(s, NULL));
  r = take(s);
  CHECK_FAILS(RIG_EINVAL, rig_run_groups(NULL, launch, 1, 1, 1));
  CHECK_FAILS(RIG_EINVAL, rig_run_groups(r, fill, 1, 1, 1), "groups of a fill's block");
  CHECK_FAILS(RIG_EINVAL, rig_run_fill(r, launch, 1), "a fill value into a launch's block");
  CHECK_FAILS(RIG_EINVAL, rig_run_groups(r, launch, -1, 1, 1));
  CHECK_FAILS(RIG_EINVAL, rig_run_threads(r, launch, 1, 1, -1));
  CHECK_FAILS(RIG_EINVAL, rig_run_shared(r, launch, -1));
  CHECK_FAILS(RIG_EINVAL, rig_run_int64(r, launch, 9, 1), "8 bytes past byte 8 of 16");
  CHECK_FAILS(RIG_EINVAL, rig_run_int32(r, launch, -1, 1));
  CHECK_FAILS(RIG_EINVAL, rig_run_int8(r, launch, 16, 1));
  uint8_t bytes[17] = {0};
  CHECK_FAILS(RIG_EINVAL, rig_run_bytes(r, launch, 0, bytes, 17));
  CHECK_FAILS(RIG_EINVAL, rig_run_bytes(r, launch, 0, bytes, -1));
  CHECK_FAILS(RIG_EINVAL, rig_run_int64(r, 12345, 0, 1), "no such block");
  /* What the refused setters stored: nothing; the launch writes its
   * value, stored last, over the fill. */
  store_set(r, launch, 8, 0x1234);
  CHECK_OK(rig_point_wait(submit(r, &b, 1)));
  expect_int64s(b, 8, 0x1234, "the launch after the fill");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(sim));
}

/* ---------------------------------------------------------------------- */
/* Waits                                                                    */

/* SIM:a fills a buffer slowly; SIM:b's launch copies it through an
 * unordered ref, which orders nothing, after the fill's point in waits:
 * only the wait makes the launch see the fill. */
static void check_waits(const char *a_name, const char *b_name, const char *b_config) {
  rig_device_t *a = open_with(a_name, SIM_QUICK);
  rig_device_t *b = open_with(b_name, b_config);
  rig_image_t *image = load_kernels(b, RUN_KERNEL("work"));
  rig_buffer_t *src = int64s(a, 8, 0);
  sim_latency(a, SIM_SLOW_US);
  rig_buffer_t *lent = borrow(b, src);
  rig_buffer_t *out = int64s(b, 8, 0);
  rig_ref_t refs[] = {unordered_ref(slot(0), 0, RIG_ACCESS_READ), ref(RIG_REF_WRITE, slot(1), 8)};
  rig_part_t launch = launch_part(function_of(image, "copy"), refs, 2, 16);
  rig_submission_t *s = make(b, &launch, 1);
  rig_run_t *r = take(s);
  set_line(r, rig_submission_block(s, 0), 1, 8);

  rig_point_t filled = submit_fill(src, 0x11);
  rig_buffer_t *buffers[] = {lent, out};
  rig_point_t p;
  CHECK_OK(rig_submit(r, buffers, 2, &filled, 1, &p));
  cr_assert(rig_point_device(p) == b);
  CHECK_OK(rig_point_wait(p));
  cr_assert(point_reached(filled), "SUB-31: %s's launch is done before the point it waits for", b_name);
  expect_int64s(out, 8, 0x1111111111111111, "SUB-31: the launch after the fill it waits for");

  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(out);
  rig_buffer_unref(lent);
  rig_buffer_unref(src);
  CHECK_OK(rig_close(b));
  CHECK_OK(rig_close(a));
}

Test(submit, a_launch_follows_the_points_it_waits_for) {
  /* SUB-31, SUB-24 (the queue waits), SUB-25 (submit waits on the host) */
  check_waits("SIM:52", "SIM:53", SIM_QUICK ",queue_waits=1");
  check_waits("SIM:54", "SIM:55", SIM_QUICK ",queue_waits=0");
}

/* ---------------------------------------------------------------------- */
/* Lost devices and the last value                                          */

Test(submit, a_submit_on_a_lost_device_answers_lost) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* SUB-46 */
  rig_device_t *sim = open_sim("SIM:56", SIM_QUICK);
  rig_image_t *image;
  rig_submission_t *s = set_submission(sim, &image);
  rig_buffer_t *out = int64s(sim, 4, 0);
  lose_by_fault(sim, out, "injected fault");
  uint64_t before = rig_submitted(sim);
  CHECK_LOST(sim, try_set(s, &out, 1, 4, 1, NULL), "SUB-46: a submit on the lost device");
  cr_assert_eq(rig_submitted(sim), before, "the submit on the lost device assigned a value");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(out);
  CHECK_OK(rig_close(sim));
}

Test(submit, a_driver_that_fails_to_take_the_work_loses_the_device) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* SUB-47 */
  rig_device_t *sim = open_sim("SIM:57", SIM_QUICK);
  rig_buffer_t *b = create(sim, 64);
  rig_part_t fill = fill_part(slot(0), 1);
  rig_submission_t *s = make(sim, &fill, 1);
  const rig_sim_inject_t *inj = sim_inject(sim);
  inj->fail_submits(inj->device, 1);
  CHECK_LOST(sim, rig_submit(take(s), &b, 1, NULL, 0, NULL), "SUB-47: the driver failed to take the work");
  cr_assert_not_null(rig_lost(sim));
  rig_submission_unref(s);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(sim));
}

Test(submit, a_wait_for_a_lost_devices_unreached_point_answers_lost) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* SUB-48 */
  rig_device_t *lost = open_sim("SIM:58", SIM_QUICK);
  rig_buffer_t *b = create(lost, 64);
  rig_point_t never = lose_by_fault(lost, b, "injected fault");
  rig_image_t *image;
  rig_submission_t *s = set_submission(rig_host(), &image);
  rig_buffer_t *out = int64s(rig_host(), 4, 0);
  rig_run_t *r = take(s);
  store_set(r, rig_submission_block(s, 0), 4, 1);
  CHECK_LOST(lost, rig_submit(r, &out, 1, &never, 1, NULL), "SUB-48: a host launch waiting for it");
  expect_int64s(out, 4, 0, "SUB-48: the launch ran");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(out);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(lost));
}

Test(submit, a_submit_past_the_last_value_loses_the_device) {
  skip_through_rigd("the proxy's timeline is its own, not the sim's (first_after), and rigd takes no value past 2^47");
  /* SUB-49 */
  rig_device_t *sim = open_sim("SIM:60", SIM_QUICK ",first_after=140737488355326"); /* 2^47 - 2 */
  cr_assert_eq(rig_submitted(sim), RIG_POINT_VALUE_MAX - 1);
  rig_buffer_t *b = create(sim, 64);
  rig_part_t fill = fill_part(slot(0), 1);
  rig_submission_t *s = make(sim, &fill, 1);
  rig_point_t last = submit(take(s), &b, 1);
  cr_assert_eq(rig_point_value(last), RIG_POINT_VALUE_MAX);
  CHECK_OK(rig_point_wait(last));
  CHECK_LOST(sim, rig_submit(take(s), &b, 1, NULL, 0, NULL), "SUB-49: a submit past 2^47 - 1");
  cr_assert_not_null(rig_lost(sim), "SUB-49: the device is not lost");
  cr_assert_eq(rig_submitted(sim), RIG_POINT_VALUE_MAX, "SUB-49: the submit assigned a value");
  rig_submission_unref(s);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(sim));
}
