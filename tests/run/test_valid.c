/* The run suite: valid submissions and valid submits (rig.txt, Running
 * work: Valid submissions).  Each test breaks one rule and expects
 * RIG_EINVAL with a message, beside a call that keeps the rule and
 * succeeds, so that a library refusing everything fails too.
 *
 * Devices: the host (launches only: HOST-04), memory devices (MEM:n: a
 * copy engine, no compute queue, reaching host memory and every memory
 * device's), sim devices (SIM:n: a compute queue and a copy engine) and
 * the io device DISK (it runs no work).
 *
 * Asserts: SUB-04 .. SUB-23, HOST-04, BPROP-16.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <rig/disk.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "helpers.h"
#include "run_support.h"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */

/* The host's set kernel (kernels/work.c); *image receives its image. */
static rig_function_t *host_set(rig_image_t **image) {
  *image = load_kernels(rig_host(), RUN_KERNEL("work"));
  return function_of(*image, "set");
}

/* Asserts that rig_submission_make of the n parts on d answers RIG_EINVAL
 * with a message. */
static void expect_make_refused(rig_device_t *d, const rig_part_t *parts, size_t n, const char *what) {
  rig_submission_t *s = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_submission_make(d, parts, n, NULL, &s), "%s", what);
}

/* A buffer of n bytes of d's memory, each byte c. */
static rig_buffer_t *filled(rig_device_t *d, int64_t n, uint8_t c) {
  rig_buffer_t *b = create(d, n);
  CHECK_OK(rig_buffer_fill(b, c));
  return b;
}

/* ---------------------------------------------------------------------- */
/* Submission.make                                                          */

Test(valid, make_refuses_a_device_that_runs_no_work) {
  /* SUB-04 */
  rig_device_t *disk = NULL;
  CHECK_OK(rig_disk_device(&disk));
  rig_part_t parts[] = {fill_part(slot(0), 1), copy_part(slot(0), slot(1))};
  expect_make_refused(disk, &parts[0], 1, "SUB-04: a fill on DISK");
  expect_make_refused(disk, &parts[1], 1, "SUB-04: a copy on DISK");
  rig_device_t *mem = open_named("MEM:0");
  rig_submission_unref(make(mem, parts, 2));
}

Test(valid, make_refuses_a_part_with_no_queue) {
  /* SUB-05, HOST-04 */
  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_word_write_t word = {slot(0), 0, 42};
  rig_part_t others[] = {fill_part(slot(0), 1), copy_part(slot(0), slot(1)), words_part(&word, 1)};
  const char *names[] = {"a fill", "a copy", "a words part"};
  for (size_t i = 0; i < 3; i++) expect_make_refused(rig_host(), &others[i], 1, names[i]);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(set, refs, RIG_REF_WRITE, slot(0));
  rig_part_t mixed[] = {launch, others[0]};
  expect_make_refused(rig_host(), mixed, 2, "HOST-04: a launch and a fill on the host");
  rig_submission_unref(make(rig_host(), &launch, 1));

  /* A memory device has no compute queue (the launch is of another
   * device's image too, which SUB-06 also refuses). */
  rig_device_t *mem = open_named("MEM:0");
  expect_make_refused(mem, &launch, 1, "SUB-05: a launch on a memory device");
  rig_image_unref(image);
}

Test(valid, make_refuses_an_image_that_is_not_live_on_the_device) {
  skip_through_rigd("it needs two sims, and rigd serves one");
  /* SUB-06 */
  rig_device_t *a = open_sim("SIM:40", "latency_us=0");
  rig_device_t *b = open_sim("SIM:41", "latency_us=0");
  rig_image_t *on_a = load_kernels(a, RUN_KERNEL("work"));
  rig_image_t *on_host;
  rig_function_t *host_fn = host_set(&on_host);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(function_of(on_a, "set"), refs, RIG_REF_WRITE, slot(0));
  rig_submission_unref(make(a, &launch, 1));
  expect_make_refused(b, &launch, 1, "SUB-06: SIM:40's image on SIM:41");
  rig_part_t host_launch = set_launch(host_fn, refs, RIG_REF_WRITE, slot(0));
  expect_make_refused(b, &host_launch, 1, "SUB-06: the host's image on SIM:41");

  /* The image of a closed device, on the device that reopens its name. */
  launch = set_launch(function_of(on_a, "set"), refs, RIG_REF_WRITE, slot(0));
  CHECK_OK(rig_close(a));
  rig_device_t *again = open_sim("SIM:40", "latency_us=0");
  cr_assert(!rig_device_equal(again, a));
  expect_make_refused(again, &launch, 1, "SUB-06: the image of a closed device");
  rig_image_unref(on_a);
  rig_image_unref(on_host);
  CHECK_OK(rig_close(again));
  CHECK_OK(rig_close(b));
}

Test(valid, make_refuses_dead_fixed_memory) {
  /* SUB-07 */
  rig_device_t *mem = open_named("MEM:0");
  rig_buffer_t *dead = create(mem, 256);
  cr_assert(try_free(dead, "freed by the test"));
  rig_buffer_t *live = create(mem, 256);
  rig_part_t fill = fill_part(fixed(dead), 1);
  expect_make_refused(mem, &fill, 1, "SUB-07: a fill of a dead fixed buffer");
  fill = fill_part(fixed(live), 1);
  rig_submission_unref(make(mem, &fill, 1));

  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_buffer_t *host_dead = create(rig_host(), 64);
  cr_assert(try_free(host_dead, "freed by the test"));
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(set, refs, RIG_REF_WRITE, fixed(host_dead));
  expect_make_refused(rig_host(), &launch, 1, "SUB-07: a ref to a dead fixed buffer");
  rig_image_unref(image);
  rig_buffer_unref(host_dead);
  rig_buffer_unref(dead);
  rig_buffer_unref(live);
}

Test(valid, make_refuses_fixed_memory_held_exclusive) {
  /* SUB-08 */
  rig_device_t *mem = open_named("MEM:0");
  rig_buffer_t *b = create(mem, 256);
  bool exclusive = false;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert(exclusive, "the only hold is exclusive");
  rig_part_t fill = fill_part(fixed(b), 1);
  expect_make_refused(mem, &fill, 1, "SUB-08: a fixed buffer held exclusive");
  CHECK_OK(rig_claim_end(b));
  rig_submission_unref(make(mem, &fill, 1));
  rig_buffer_unref(b);
}

Test(valid, make_refuses_fixed_memory_of_another_device_but_a_copys) {
  /* SUB-09 */
  rig_device_t *m0 = open_named("MEM:0"), *m1 = open_named("MEM:1");
  rig_buffer_t *other = create(m1, 256), *own = create(m0, 256);
  rig_part_t fill = fill_part(fixed(other), 1);
  expect_make_refused(m0, &fill, 1, "SUB-09: a fill of MEM:1's buffer on MEM:0");

  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(set, refs, RIG_REF_WRITE, fixed(own));
  expect_make_refused(rig_host(), &launch, 1, "SUB-09: a host launch of MEM:0's buffer, not borrowed");
  rig_image_unref(image);

  /* A copy's buffers may be memory the device reaches (rig_reaches): a sim
   * device reaches another's it maps as a peer, a memory device the host's
   * and every memory device's. */
  rig_device_t *s0 = open_sim("SIM:42", "latency_us=0"), *s1 = open_sim("SIM:43", "latency_us=0");
  rig_buffer_t *peer = create(s1, 256), *on_s0 = create(s0, 256), *host = create(rig_host(), 256);
  struct {
    rig_device_t *d;
    rig_buffer_t *src, *dst;
    const char *what;
  } copies[] = {
      {s0, peer, on_s0, "SIM:42 copying from SIM:43's buffer"},
      {s0, on_s0, peer, "SIM:42 copying into SIM:43's buffer"},
      {m0, other, own, "MEM:0 copying from MEM:1's buffer"},
      {m0, host, own, "MEM:0 copying from a host buffer"},
      {m0, own, host, "MEM:0 copying into a host buffer"},
  };
  for (size_t i = 0; i < sizeof copies / sizeof *copies; i++) {
    rig_device_t *of = rig_buffer_device(copies[i].src) == copies[i].d ? rig_buffer_device(copies[i].dst)
                                                                        : rig_buffer_device(copies[i].src);
    cr_assert(rig_reaches(copies[i].d, of), "%s: rig_reaches answers false", copies[i].what);
    rig_part_t copy = copy_part(fixed(copies[i].src), fixed(copies[i].dst));
    rig_submission_t *s = NULL;
    CHECK_OK(rig_submission_make(copies[i].d, &copy, 1, NULL, &s), "SUB-09: %s", copies[i].what);
    rig_submission_unref(s);
  }
  rig_buffer_t *mine[] = {other, own, peer, on_s0, host};
  for (size_t i = 0; i < 5; i++) rig_buffer_unref(mine[i]);
  CHECK_OK(rig_close(s0));
  CHECK_OK(rig_close(s1));
}

Test(valid, make_refuses_writes_of_fixed_memory_that_admits_only_read) {
  /* SUB-10, BPROP-16 */
  rig_device_t *mem = open_named("MEM:0");
  rig_buffer_t *ro = read_only(create(mem, 256));
  rig_buffer_t *rw = create(mem, 256);
  rig_part_t writes[] = {fill_part(fixed(ro), 1), copy_part(fixed(rw), fixed(ro))};
  expect_make_refused(mem, &writes[0], 1, "SUB-10: a fill of a Read buffer");
  expect_make_refused(mem, &writes[1], 1, "SUB-10: a copy into a Read buffer");
  rig_part_t read = copy_part(fixed(ro), fixed(rw));
  rig_submission_unref(make(mem, &read, 1));

  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_buffer_t *host_ro = read_only(create(rig_host(), 64));
  rig_ref_t refs[1];
  const rig_ref_kind_t writing[] = {RIG_REF_WRITE, RIG_REF_READ_WRITE};
  for (size_t i = 0; i < 2; i++) {
    rig_part_t launch = set_launch(set, refs, writing[i], fixed(host_ro));
    expect_make_refused(rig_host(), &launch, 1, "SUB-10, BPROP-16: a launch writing a Read buffer");
  }
  refs[0] = unordered_ref(fixed(host_ro), 0, RIG_ACCESS_READ_WRITE);
  rig_part_t unordered = launch_part(set, refs, 1, 16);
  expect_make_refused(rig_host(), &unordered, 1, "SUB-10: an unordered ref writing a Read buffer");
  rig_part_t launch = set_launch(set, refs, RIG_REF_READ, fixed(host_ro));
  rig_submission_unref(make(rig_host(), &launch, 1));
  rig_image_unref(image);
  rig_buffer_unref(ro);
  rig_buffer_unref(rw);
  rig_buffer_unref(host_ro);
}

Test(valid, make_refuses_a_slot_no_part_names) {
  /* SUB-11 */
  rig_device_t *mem = open_named("MEM:0");
  rig_buffer_t *b = create(mem, 64);
  rig_part_t gap[] = {copy_part(slot(0), slot(2))};
  expect_make_refused(mem, gap, 1, "SUB-11: slots 0 and 2 named, 1 not");
  rig_part_t fixed_between[] = {fill_part(slot(0), 1), fill_part(fixed(b), 2), fill_part(slot(3), 3)};
  expect_make_refused(mem, fixed_between, 3, "SUB-11: slots 0 and 3 named");
  rig_part_t full[] = {copy_part(slot(0), slot(2)), fill_part(fixed(b), 2), fill_part(slot(1), 3)};
  rig_submission_t *s = make(mem, full, 3);
  cr_assert_eq(rig_submission_slots(s), 3);
  rig_submission_unref(s);
  rig_buffer_unref(b);
}

Test(valid, make_refuses_a_slot_both_unordered_and_ordered) {
  /* SUB-12 */
  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_ref_t both[] = {unordered_ref(slot(0), 0, RIG_ACCESS_READ_WRITE), ref(RIG_REF_READ, slot(0), 8)};
  rig_part_t launch = launch_part(set, both, 2, 16);
  expect_make_refused(rig_host(), &launch, 1, "SUB-12: one launch, unordered and ordered refs to slot 0");
  rig_ref_t first[] = {unordered_ref(slot(0), 0, RIG_ACCESS_READ_WRITE)};
  rig_ref_t second[] = {ref(RIG_REF_WRITE, slot(0), 0)};
  rig_part_t two[] = {launch_part(set, first, 1, 16), launch_part(set, second, 1, 16)};
  expect_make_refused(rig_host(), two, 2, "SUB-12: two launches, unordered and ordered refs to slot 0");

  rig_ref_t apart[] = {unordered_ref(slot(0), 0, RIG_ACCESS_READ_WRITE), ref(RIG_REF_READ, slot(1), 8)};
  launch = launch_part(set, apart, 2, 16);
  rig_submission_unref(make(rig_host(), &launch, 1));
  rig_ref_t unordered_twice[] = {unordered_ref(slot(0), 0, RIG_ACCESS_READ_WRITE),
                                 unordered_ref(slot(0), 8, RIG_ACCESS_READ)};
  launch = launch_part(set, unordered_twice, 2, 16);
  rig_submission_unref(make(rig_host(), &launch, 1));
  rig_image_unref(image);
}

Test(valid, make_refuses_launches_past_a_run) {
  /* SUB-13: 2^31 - 1 bytes, each launch 16 plus its parameters rounded up
   * to 16. */
  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_ref_t refs[1] = {ref(RIG_REF_WRITE, slot(0), 0)};
  rig_part_t one = launch_part(set, refs, 1, INT64_C(1) << 31);
  expect_make_refused(rig_host(), &one, 1, "SUB-13: a launch of 2^31 bytes of parameters");
  rig_part_t two[] = {launch_part(set, refs, 1, INT64_C(1) << 30), launch_part(set, refs, 1, INT64_C(1) << 30)};
  expect_make_refused(rig_host(), two, 2, "SUB-13: two launches of 2^30 bytes of parameters each");
  rig_part_t huge = launch_part(set, refs, 1, INT64_MAX);
  expect_make_refused(rig_host(), &huge, 1, "SUB-13: INT64_MAX bytes of parameters");
  rig_image_unref(image);
}

Test(valid, make_refuses_refs_outside_the_parameters_and_bad_arguments) {
  /* rig_submission_make: refs lie inside their launch's parameters, 8
   * bytes each */
  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  const int64_t outside[] = {-8, -1, 9, 16, INT64_MAX};
  for (size_t i = 0; i < sizeof outside / sizeof *outside; i++) {
    rig_ref_t refs[1] = {ref(RIG_REF_WRITE, slot(0), outside[i])};
    rig_part_t launch = launch_part(set, refs, 1, 16);
    expect_make_refused(rig_host(), &launch, 1, "a ref at a byte past the parameters");
  }
  rig_ref_t refs[1] = {ref(RIG_REF_WRITE, slot(0), 8)};
  rig_part_t launch = launch_part(set, refs, 1, -16);
  expect_make_refused(rig_host(), &launch, 1, "negative parameters");
  launch = launch_part(NULL, refs, 1, 16);
  expect_make_refused(rig_host(), &launch, 1, "a launch of no function");
  launch = launch_part(set, refs, 1, 16);
  rig_submission_t *s = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_submission_make(NULL, &launch, 1, NULL, &s));
  CHECK_FAILS(RIG_EINVAL, rig_submission_make(rig_host(), NULL, 1, NULL, &s));
  CHECK_FAILS(RIG_EINVAL, rig_submission_make(rig_host(), &launch, 1, NULL, NULL));
  /* Kinds no value of the enums names (within their range of values). */
  rig_part_t unknown = {.kind = (rig_part_kind_t)0};
  expect_make_refused(rig_host(), &unknown, 1, "a part of no kind");
  rig_ref_t no_kind[1] = {ref((rig_ref_kind_t)0, slot(0), 0)};
  rig_part_t launch_of_no_kind = launch_part(set, no_kind, 1, 16);
  expect_make_refused(rig_host(), &launch_of_no_kind, 1, "a ref of no kind");
  rig_ref_t bad_access[1] = {unordered_ref(slot(0), 0, (rig_access_t)2)};
  rig_part_t launch_of_bad_access = launch_part(set, bad_access, 1, 16);
  expect_make_refused(rig_host(), &launch_of_bad_access, 1, "an unordered ref of no access");
  rig_submission_unref(make(rig_host(), &launch, 1));
  rig_image_unref(image);
}

/* ---------------------------------------------------------------------- */
/* submit                                                                   */

Test(valid, submit_refuses_a_buffer_count_other_than_the_slots) {
  /* SUB-14 */
  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(set, refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(rig_host(), &launch, 1);
  cr_assert_eq(rig_submission_slots(s), 1);
  rig_buffer_t *out = int64s(rig_host(), 4, 0);
  rig_buffer_t *two[] = {out, out};
  rig_buffer_t *none[] = {NULL};
  CHECK_FAILS(RIG_EINVAL, try_set(s, two, 0, 4, 5, NULL), "SUB-14: no buffer for one slot");
  CHECK_FAILS(RIG_EINVAL, try_set(s, two, 2, 4, 5, NULL), "SUB-14: two buffers for one slot");
  CHECK_FAILS(RIG_EINVAL, try_set(s, none, 1, 4, 5, NULL), "SUB-14: a NULL buffer");
  CHECK_FAILS(RIG_EINVAL, try_set(s, NULL, 1, 4, 5, NULL), "SUB-14: buffers NULL");
  expect_int64s(out, 4, 0, "SUB-14: a refused submit ran");
  CHECK_OK(try_set(s, two, 1, 4, 5, NULL));
  expect_int64s(out, 4, 5, "the valid submit's launch");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(out);
}

Test(valid, submit_refuses_dead_and_exclusive_buffers) {
  /* SUB-15, SUB-16 */
  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(set, refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(rig_host(), &launch, 1);
  rig_buffer_t *dead = int64s(rig_host(), 4, 0);
  cr_assert(try_free(dead, "freed by the test"));
  CHECK_FAILS(RIG_EINVAL, try_set(s, &dead, 1, 4, 5, NULL), "SUB-15: a dead buffer");

  rig_buffer_t *held = int64s(rig_host(), 4, 0);
  bool exclusive = false;
  CHECK_OK(rig_claim_begin(held, &exclusive));
  cr_assert(exclusive);
  CHECK_FAILS(RIG_EINVAL, try_set(s, &held, 1, 4, 5, NULL), "SUB-16: a buffer held exclusive");
  CHECK_OK(rig_claim_end(held));
  expect_int64s(held, 4, 0, "SUB-16: the refused submit ran");
  CHECK_OK(try_set(s, &held, 1, 4, 5, NULL));
  expect_int64s(held, 4, 5, "the submit once the hold ended");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(dead);
  rig_buffer_unref(held);
}

Test(valid, submit_refuses_a_buffer_of_another_device_but_a_borrow_or_a_copys) {
  /* SUB-17 */
  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(set, refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(rig_host(), &launch, 1);
  rig_device_t *mem = open_named("MEM:0");
  rig_buffer_t *on_mem = filled(mem, 32, 0);
  CHECK_FAILS(RIG_EINVAL, try_set(s, &on_mem, 1, 4, 5, NULL), "SUB-17: MEM:0's buffer in a host launch");
  expect_int64s(on_mem, 4, 0, "SUB-17: the refused submit ran");
  rig_buffer_t *lent = borrow(rig_host(), on_mem);
  CHECK_OK(try_set(s, &lent, 1, 4, 5, NULL), "a borrow of MEM:0's buffer on the host");
  expect_int64s(on_mem, 4, 5, "the launch through the borrow");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(lent);

  /* A copy's buffers may be memory the device reaches: SIM:45's memory on
   * SIM:44, which maps it as a peer; host memory on MEM:0. */
  rig_device_t *s0 = open_sim("SIM:44", "latency_us=0"), *s1 = open_sim("SIM:45", "latency_us=0");
  rig_buffer_t *on_s0 = filled(s0, 32, 0), *peer = filled(s1, 32, 8);
  rig_buffer_t *host = create(rig_host(), 32);
  CHECK_OK(rig_buffer_fill(host, 9));
  struct {
    rig_device_t *d;
    rig_buffer_t *src, *dst;
    int64_t want;
    const char *what;
  } copies[] = {
      {s0, peer, on_s0, 0x0808080808080808, "SIM:44 copying from SIM:45's buffer"},
      {mem, host, on_mem, 0x0909090909090909, "MEM:0 copying from a host buffer"},
  };
  rig_part_t copy = copy_part(slot(0), slot(1));
  for (size_t i = 0; i < sizeof copies / sizeof *copies; i++) {
    s = make(copies[i].d, &copy, 1);
    rig_buffer_t *pair[] = {copies[i].src, copies[i].dst};
    rig_point_t p = {0};
    CHECK_OK(rig_submit(take(s), pair, 2, NULL, 0, &p), "SUB-17: %s", copies[i].what);
    CHECK_OK(rig_point_wait(p));
    expect_int64s(copies[i].dst, 4, copies[i].want, copies[i].what);
    rig_submission_unref(s);
  }
  rig_buffer_t *mine[] = {on_mem, on_s0, peer, host};
  for (size_t i = 0; i < 4; i++) rig_buffer_unref(mine[i]);
  CHECK_OK(rig_close(s0));
  CHECK_OK(rig_close(s1));
}

Test(valid, submit_refuses_writes_through_a_read_buffer) {
  /* SUB-18 */
  rig_image_t *image;
  rig_function_t *set = host_set(&image);
  rig_buffer_t *ro = read_only(int64s(rig_host(), 4, 0));
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(set, refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(rig_host(), &launch, 1);
  CHECK_FAILS(RIG_EINVAL, try_set(s, &ro, 1, 4, 5, NULL), "SUB-18: a launch writing a Read buffer");
  expect_int64s(ro, 4, 0, "SUB-18: the refused submit ran");
  rig_submission_unref(s);
  refs[0] = unordered_ref(slot(0), 0, RIG_ACCESS_READ_WRITE);
  s = make(rig_host(), &launch, 1);
  CHECK_FAILS(RIG_EINVAL, try_set(s, &ro, 1, 4, 5, NULL), "SUB-18: an unordered ref writing a Read buffer");
  rig_submission_unref(s);

  rig_device_t *mem = open_named("MEM:0");
  rig_buffer_t *mem_ro = read_only(create(mem, 64));
  rig_part_t fill = fill_part(slot(0), 1);
  s = make(mem, &fill, 1);
  rig_run_t *r = take(s);
  CHECK_FAILS(RIG_EINVAL, rig_submit(r, &mem_ro, 1, NULL, 0, NULL), "SUB-18: a fill of a Read buffer");
  rig_submission_unref(s);

  /* A launch that only reads a Read buffer runs: set writes the address
   * its read ref holds. */
  rig_ref_t two[] = {ref(RIG_REF_WRITE, slot(0), 0), ref(RIG_REF_READ, slot(1), 8)};
  launch = launch_part(set, two, 2, 16);
  s = make(rig_host(), &launch, 1);
  rig_buffer_t *out = int64s(rig_host(), 1, -1);
  rig_buffer_t *buffers[] = {out, ro};
  r = take(s);
  set_line(r, rig_submission_block(s, 0), 1, 1);
  submit(r, buffers, 2);
  cr_assert_eq(int64_at(out, 0), (int64_t)(intptr_t)rig_buffer_host(ro), "the launch reading a Read buffer");
  rig_submission_unref(s);
  rig_image_unref(image);
  rig_buffer_unref(ro);
  rig_buffer_unref(mem_ro);
  rig_buffer_unref(out);
}

Test(valid, submit_refuses_copies_of_other_lengths_or_shared_bytes) {
  /* SUB-19, SUB-20 */
  rig_device_t *mem = open_named("MEM:0");
  rig_part_t copy = copy_part(slot(0), slot(1));
  rig_submission_t *s = make(mem, &copy, 1);
  rig_buffer_t *whole = filled(mem, 256, 3);
  rig_buffer_t *a = view(whole, 0, 64), *b = view(whole, 128, 128), *c = view(whole, 32, 64),
               *d = view(whole, 64, 64);
  rig_buffer_t *lengths[] = {a, b};
  CHECK_FAILS(RIG_EINVAL, rig_submit(take(s), lengths, 2, NULL, 0, NULL), "SUB-19: 64 bytes into 128");
  rig_buffer_t *overlapping[] = {a, c};
  CHECK_FAILS(RIG_EINVAL, rig_submit(take(s), overlapping, 2, NULL, 0, NULL), "SUB-20: views sharing 32 bytes");
  rig_buffer_t *same[] = {a, a};
  CHECK_FAILS(RIG_EINVAL, rig_submit(take(s), same, 2, NULL, 0, NULL), "SUB-20: a buffer into itself");

  CHECK_OK(rig_buffer_fill(a, 7));
  rig_buffer_t *adjacent[] = {a, d};
  CHECK_OK(rig_point_wait(submit(take(s), adjacent, 2)));
  expect_int64s(d, 8, 0x0707070707070707, "the copy between adjacent views");
  rig_submission_unref(s);
  rig_buffer_unref(a);
  rig_buffer_unref(b);
  rig_buffer_unref(c);
  rig_buffer_unref(d);
  rig_buffer_unref(whole);
}

Test(valid, submit_refuses_work_the_driver_cannot_run) {
  skip_through_rigd("the served sim's room is rigd's: a launch it cannot run fails in rigd, losing the proxy, rather than being refused at submit");
  /* SUB-22: the sim runs no launch with shared memory (its room answers
   * RIG_NEVER); the same launch without it runs. */
  rig_device_t *sim = open_sim("SIM:0", SIM_QUICK);
  rig_image_t *image = load_kernels(sim, RUN_KERNEL("work"));
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(function_of(image, "set"), refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(sim, &launch, 1);
  rig_buffer_t *out = pinned_zeros(sim, 4);
  rig_run_t *r = take(s);
  store_set(r, 0, 4, 9);
  CHECK_OK(rig_run_shared(r, 0, 1024));
  CHECK_FAILS(RIG_EINVAL, rig_submit(r, &out, 1, NULL, 0, NULL), "SUB-22: a sim launch with shared memory");
  cr_expect_null(rig_lost(sim), "SUB-22: the refusal loses nothing");
  CHECK_OK(rig_point_wait(submit_set(s, out, 4, 9)));
  expect_int64s(out, 4, 9, "the launch without shared memory");
  rig_submission_unref(s);
  rig_buffer_unref(out);
  rig_image_unref(image);
}

Test(valid, submit_refuses_more_words_than_the_driver_bounds) {
  skip_through_rigd("the served sim's bound of words is rigd's: a proxy's room states its own");
  /* SUB-23: a sim whose queues take at most 3 words a submission (each
   * part and each word it writes count one) refuses a words part of 3
   * writes (4 words) and runs one of 2 (3 words). */
  rig_device_t *sim = open_sim("SIM:1", SIM_QUICK ",max_words=3");
  rig_buffer_t *out = pinned_zeros(sim, 4);
  rig_word_write_t writes[3] = {{slot(0), 0, 11}, {slot(0), 8, 12}, {slot(0), 16, 13}};
  rig_part_t three = words_part(writes, 3), two = words_part(writes, 2);
  rig_submission_t *over = make(sim, &three, 1), *within = make(sim, &two, 1);
  CHECK_FAILS(RIG_EINVAL, rig_submit(take(over), &out, 1, NULL, 0, NULL), "SUB-23: 4 words past a bound of 3");
  cr_expect_null(rig_lost(sim), "SUB-23: the refusal loses nothing");
  CHECK_OK(rig_point_wait(submit(take(within), &out, 1)));
  cr_expect_eq(int64_at(out, 0), 11);
  cr_expect_eq(int64_at(out, 1), 12);
  cr_expect_eq(int64_at(out, 2), 0, "the refused submit wrote nothing");
  rig_submission_unref(over);
  rig_submission_unref(within);
  rig_buffer_unref(out);
}

Test(valid, submit_refuses_a_ref_to_handle_only_memory) {
  skip_through_rigd("a proxy's memory is handle-only by design, and its refs go to rigd by location, which places the served device's addresses");
  /* SUB-21: a sim whose Device memory is handle-only (handle_only=1: the
   * driver gives a handle and an offset, no address) refuses a launch ref
   * naming it, and runs the same launch over its Pinned memory, which has
   * an address; copies into and out of the handle-only memory still run. */
  rig_device_t *sim = open_sim("SIM:2", SIM_QUICK ",handle_only=1");
  rig_image_t *image = load_kernels(sim, RUN_KERNEL("work"));
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(function_of(image, "set"), refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = make(sim, &launch, 1);
  rig_buffer_t *handled = int64s(sim, 4, 0);
  uint64_t handle = 0;
  int64_t offset = 0;
  CHECK_OK(rig_buffer_handle(handled, &handle, &offset));
  cr_assert_neq(handle, 0, "the sim's Device memory has a handle");
  cr_assert_null(rig_buffer_host(handled));
  rig_status_t refused = try_set(s, &handled, 1, 4, 7, NULL);
  cr_assert_eq(refused, RIG_EINVAL, "SUB-21: %s", rig_status_name(refused));
  assert_mentions(rig_last_error(), "handle");
  expect_int64s(handled, 4, 0, "the refused launch wrote nothing");
  rig_buffer_t *pinned = pinned_zeros(sim, 4);
  CHECK_OK(rig_point_wait(submit_set(s, pinned, 4, 7)));
  expect_int64s(pinned, 4, 7, "the launch over memory with an address");
  CHECK_OK(rig_buffer_copy(pinned, handled));
  expect_int64s(handled, 4, 7, "a copy into handle-only memory and back");
  rig_submission_unref(s);
  rig_buffer_unref(handled);
  rig_buffer_unref(pinned);
  rig_image_unref(image);
}
