/* The sim suite: order across two sim devices and the host with real
 * asynchrony (rig.txt's Intro, Timelines and points, Order, Hangs and
 * Running work's queue waits; rig-buffer.txt's staging memory).
 *
 * Sim devices run their work on a worker thread after submit returns, after
 * a latency; the driver holds work until a commit (every commit_every
 * values on its own, or when a wait commits).  A device that must hold
 * work for a test opens with commit_every=1000; one that must run it at
 * once with commit_every=1.  Each test opens sim names of its own.
 *
 * Asserts: INTRO-06 (submit returns before the work ran), ORD-07 (a copy
 *   on SIM:b of SIM:a's memory sees SIM:a's fill), ORD-08 (a fill on
 *   SIM:a follows SIM:b's read of its memory), ORD-09 (waits of a fill),
 *   ORD-10, ORD-11, ORD-12, ORD-13, ORD-14, TL-08, TL-09 (on the host and in
 *   another device's queue), TL-12, TL-13, TL-17, TL-21, SUB-24, SUB-25,
 *   HANG-05 (a queue waiting for another device is idle), HANG-06, HANG-07,
 *   ERR-27, COPY-10 (a peer copy), COPY-15, COPY-17, COPY-18, COPY-19,
 *   COPY-24, COPY-28, COPY-31, COPY-41, COPY-42, COPY-45, COPY-52, COPY-56,
 *   COPY-91.
 *
 * Not reached here:
 *   ORD-01..06, ORD-16..18, ORD-22, ORD-23: rig.h has no submissions (parts,
 *     words, unordered refs) and no GPU peers.
 *   ORD-24..29 (concurrent submitters): the stress program stress_sim_model
 *     (each thread's work ordered by its buffers' stamps).
 *   TL-01, TL-03: rig.h has no submit or images; TL-02/TL-04..07, TL-14..16,
 *     TL-18..23: the conformance suite (test_points, test_devices) and
 *     test_lifecycle (a lost device's word).
 *   TL-10, TL-11: the sim driver's own commit every k values is what makes
 *     the held fills of the stress program run; no test here reads k.
 *   HANG-01: a driver fact, not observable through rig.h.  HANG-02..04: the
 *     clock's starts are observed only through HANG-05..07.
 *   SUB-26..27, SUB-37..39, SUB-45: the sim driver's queues always have
 *     room and never grow.  The other SUB rules: rig.h has no submit.
 *   COPY-16, COPY-20..23, COPY-25..27, COPY-29, COPY-30, COPY-32..34: where
 *     bytes go inside staging memory and which allocation a copy takes are
 *     not observable through rig.h beyond the bytes held and returned
 *     (COPY-19, COPY-24, COPY-28); the sim driver maps host memory
 *     (maps_host), so no device-owned staging exists.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "devices.h"
#include "helpers.h"

#define MIB ((int64_t)1 << 20)
/* The latency of work on the devices of the order tests: real asynchrony. */
#define LATENCY "latency_us=20000"
/* The latency of work that a test asserts has not run yet right after a
 * submit returned: long enough that no scheduling delay reaches it. */
#define SLOW "latency_us=250000"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */

/* open_with(name, config), a device that runs its work on a worker. */
static rig_device_t *open_sim(const char *name, const char *config) {
  rig_device_t *d = open_with(name, config);
  cr_assert(!rig_device_runs_on_host(d), "%s runs its work on a worker, not the host", name);
  return d;
}

/* A buffer over caller memory of n bytes (outside the claims), which the
 * test may change through the pointer at any time. */
static rig_buffer_t *of_memory(uint8_t *bytes, int64_t n) {
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_of_memory(bytes, n, NULL, NULL, &b));
  return b;
}

static uint64_t signaled(rig_device_t *d) {
  uint64_t v = 0;
  CHECK_OK(rig_signaled(d, &v));
  return v;
}

/* Asserts that p names device d: work d's queue runs, not the host. */
static void expect_device_point(rig_point_t p, const rig_device_t *d) {
  cr_assert(rig_point_device(p) == d, "the point names %s, not %s", rig_device_name(rig_point_device(p)),
            rig_device_name(d));
}

/* Asserts every byte of b is c, reading it back through the host
 * (rig_buffer_blit_to_bytes, which follows b's last writes). */
static void expect_bytes(rig_buffer_t *b, uint8_t c, const char *what) {
  int64_t n = rig_buffer_bytes(b);
  uint8_t *got = malloc((size_t)n);
  cr_assert_not_null(got);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, got, n, 0, n));
  for (int64_t i = 0; i < n; i++)
    if (got[i] != c) {
      uint8_t g = got[i];
      free(got);
      cr_assert_fail("%s: byte %" PRId64 " is %u, want %u", what, i, g, c);
    }
  free(got);
}

/* ---------------------------------------------------------------------- */
/* Asynchrony and order across devices                                       */

Test(order, submit_returns_before_the_work_ran) {
  /* INTRO-06, COPY-41, TL-17, TL-21, ORD-10 */
  rig_device_t *d = open_sim("SIM:20", SLOW);
  rig_buffer_t *b = create(d, 4096);
  rig_point_t p = submit_fill(b, 7);
  expect_device_point(p, d);
  cr_assert(!point_reached(p), "INTRO-06: the fill ran before submit_fill returned");
  cr_assert_lt(signaled(d), rig_point_value(p), "TL-17: signaled reports a value whose work has not run");
  CHECK_OK(rig_point_wait(p));
  cr_assert(point_reached(p));
  cr_assert_geq(signaled(d), rig_point_value(p), "TL-17: a reached value is reported");
  expect_bytes(b, 7, "ORD-10: bytes after the wait");
  rig_buffer_unref(b);
}

Test(order, a_copy_on_another_device_follows_the_fill_it_reads) {
  /* ORD-07, ORD-14, TL-09 (in the copying device's queue), COPY-10, COPY-42 */
  /* SIM:21 holds its fills until a commit; SIM:22 runs each copy as soon as
   * it is submitted.  Only the order rig gives (a queue wait, with SIM:21's
   * fill committed first) makes each copy see the fill before it. */
  rig_device_t *d0 = open_sim("SIM:21", LATENCY ",commit_every=1000");
  rig_device_t *d1 = open_sim("SIM:22", LATENCY ",commit_every=1");
  rig_buffer_t *a = create(d0, MIB);
  rig_buffer_t *b = create(d1, MIB);
  rig_buffer_t *back = create(d0, MIB);
  for (uint8_t round = 1; round <= 3; round++) {
    rig_point_t fill = submit_fill(a, round);
    expect_device_point(fill, d0);
    rig_point_t copy = submit_copy_all(a, b);
    cr_assert(rig_point_device(copy) == d0 || rig_point_device(copy) == d1,
              "COPY-10: a copy between two sim devices is run by one of them");
    /* And back again: SIM:21 reads what SIM:22 wrote. */
    submit_copy_all(b, back);
    expect_bytes(back, round, "ORD-07: the copy back sees the copy that saw the fill");
    expect_bytes(b, round, "ORD-07: the copy sees the fill");
  }
  rig_buffer_unref(a);
  rig_buffer_unref(b);
  rig_buffer_unref(back);
}

Test(order, host_reads_follow_the_device_writes) {
  /* ORD-11, ORD-13, ORD-14, TL-09 (host reads commit), COPY-41 */
  rig_device_t *d = open_sim("SIM:23", LATENCY ",commit_every=1000");
  rig_buffer_t *a = create(d, 64 * 1024);
  rig_buffer_t *pinned = create_kind(d, 64 * 1024, RIG_MEMORY_PINNED);
  cr_assert_null(rig_buffer_host(a), "the host does not address a sim device's own memory");
  cr_assert_not_null(rig_buffer_host(pinned), "the host addresses Pinned memory");

  uint8_t want = 0x5a;
  submit_fill(a, want);
  rig_point_t copy = submit_copy_all(a, pinned); /* the device writes host memory */
  expect_device_point(copy, d);
  CHECK_OK(rig_buffer_read(pinned, 1, all_bytes_are, &want),
           "ORD-11: rig_buffer_read sees the device's write");

  want = 0x6b;
  submit_fill(a, want);
  submit_copy_all(a, pinned);
  CHECK_OK(rig_buffer_wait(pinned, RIG_ACCESS_READ));
  cr_assert_eq(all_bytes_are(rig_buffer_host(pinned), 64 * 1024, &want), 0,
               "ORD-13: host code after rig_buffer_wait(Read) sees the device's write");
  expect_bytes(a, want, "ORD-14: rig_buffer_blit_to_bytes follows the fill");
  rig_buffer_unref(a);
  rig_buffer_unref(pinned);
}

Test(order, a_write_follows_every_use) {
  /* ORD-08, ORD-12, ORD-14 */
  /* The reader SIM:25 holds its copy until a commit; the writer SIM:24 runs
   * each fill as soon as it is submitted.  The fill must wait for the
   * reader's copy of the bytes it overwrites. */
  rig_device_t *writer = open_sim("SIM:24", LATENCY ",commit_every=1");
  rig_device_t *reader = open_sim("SIM:25", LATENCY ",commit_every=1000");
  rig_buffer_t *a = create(writer, MIB);
  rig_buffer_t *b = create(reader, MIB);
  CHECK_OK(rig_buffer_fill(a, 1));
  submit_copy_all(a, b);
  submit_fill(a, 2);
  expect_bytes(b, 1, "ORD-08: the copy read the bytes before the later fill");
  expect_bytes(a, 2, "ORD-08: the later fill's bytes");

  /* A host write follows a device's read of Pinned memory. */
  rig_device_t *held = open_sim("SIM:26", LATENCY ",commit_every=1000");
  rig_buffer_t *pinned = create_kind(held, 64 * 1024, RIG_MEMORY_PINNED);
  rig_buffer_t *c = create(held, 64 * 1024);
  CHECK_OK(rig_buffer_fill(pinned, 3));
  submit_copy_all(pinned, c);
  uint8_t later = 4;
  CHECK_OK(rig_buffer_write(pinned, 1, set_bytes, &later));
  expect_bytes(c, 3, "ORD-12: rig_buffer_write's function ran after the device's read");
  expect_bytes(pinned, 4, "the host's write");
  rig_buffer_unref(a);
  rig_buffer_unref(b);
  rig_buffer_unref(pinned);
  rig_buffer_unref(c);
}

/* A fill on dst's device that waits for a slow fill on src's device (waits),
 * and a copy of src's memory into dst's: where the devices wait in their
 * queues (the knob queue_waits), submit returns before the slow fill is
 * reached (SUB-24); otherwise the host waits in submit (SUB-25). */
static void expect_submit_waits_on_the_host(const char *src_name, const char *dst_name, bool queue_waits) {
  const bool host_waits = !queue_waits;
  char src_config[96], dst_config[96];
  snprintf(src_config, sizeof src_config, SLOW ",commit_every=1,queue_waits=%d", queue_waits);
  snprintf(dst_config, sizeof dst_config, "latency_us=0,commit_every=1,queue_waits=%d", queue_waits);
  rig_device_t *src = open_sim(src_name, src_config);
  rig_device_t *dst = open_sim(dst_name, dst_config);
  rig_buffer_t *a = create(src, 64 * 1024);
  rig_buffer_t *b = create(dst, 64 * 1024);

  rig_point_t slow = submit_fill(a, 9);
  rig_point_t fill = submit_fill_after(b, 8, &slow, 1);
  expect_device_point(fill, dst);
  const char *rule = host_waits ? "SUB-25: without queue waits, submit returned before the point it follows"
                                : "SUB-24: with queue waits, submit waited on the host";
  cr_assert_eq(point_reached(slow), host_waits, "%s (the fill)", rule);
  expect_bytes(b, 8, "ORD-09: the fill that waited");

  slow = submit_fill(a, 10);
  rig_point_t copy = submit_copy_all(a, b);
  /* The copy waits for src's fill where dst runs it; on src, device order
   * covers it and nothing waits. */
  if (rig_point_device(copy) == dst)
    cr_assert_eq(point_reached(slow), host_waits, "%s (the copy)", rule);
  CHECK_OK(rig_point_wait(copy));
  expect_bytes(b, 10, "ORD-07: the copy after the fill");
  rig_buffer_unref(a);
  rig_buffer_unref(b);
}

Test(order, queue_waits_wait_on_the_device_not_the_host) {
  /* SUB-24, ORD-09, COPY-91 */
  expect_submit_waits_on_the_host("SIM:27", "SIM:28", true);
}

Test(order, without_queue_waits_submit_waits_on_the_host) {
  /* SUB-25, ORD-09 */
  expect_submit_waits_on_the_host("SIM:29", "SIM:30", false);
}

/* ---------------------------------------------------------------------- */
/* Commits                                                                  */

Test(order, signaled_commits_nothing_and_reached_commits) {
  /* TL-08, TL-12, TL-13, TL-21 */
  rig_device_t *d = open_sim("SIM:31", "latency_us=0,commit_every=1000");
  rig_buffer_t *b = create(d, 4096);
  rig_point_t p = submit_fill(b, 5);
  uint64_t v = rig_point_value(p);
  cr_assert_lt(signaled(d), v, "TL-08: held work ran before a commit");
  nap_ms(100);
  cr_assert_lt(signaled(d), v, "TL-12: signaled committed the held work");
  /* The first rig_point_reached commits; a loop on it ends once the work
   * has run (bounded, so a reached that never commits fails the test). */
  bool reached = false;
  for (int i = 0; i < 5000 && !reached; i++) {
    reached = point_reached(p);
    if (!reached) nap_ms(1);
  }
  cr_assert(reached, "TL-13: a loop on rig_point_reached never ended");
  cr_assert_geq(signaled(d), v);
  expect_bytes(b, 5, "the committed fill's bytes");
  rig_buffer_unref(b);
}

Test(order, waits_commit_first, .timeout = 20) {
  /* TL-09 (a host wait, and a wait in another device's queue) */
  rig_device_t *d0 = open_sim("SIM:32", "latency_us=0,commit_every=1000");
  rig_device_t *d1 = open_sim("SIM:33", "latency_us=0,commit_every=1000");
  rig_buffer_t *a = create(d0, 4096);
  rig_buffer_t *b = create(d1, 4096);
  rig_point_t p = submit_fill(a, 1);
  CHECK_OK(rig_point_wait(p), "TL-09: a wait on held work");

  /* d1's fill waits in d1's queue for d0's held fill: waiting on d1's point
   * alone must end, so rig committed d0's fill for the queue wait. */
  rig_point_t held = submit_fill(a, 2);
  rig_point_t after = submit_fill_after(b, 3, &held, 1);
  CHECK_OK(rig_point_wait(after), "TL-09: a wait on work whose queue waits on held work");
  cr_assert_geq(signaled(d0), rig_point_value(held), "d0's fill ran before d1's queue went on");
  expect_bytes(a, 2, "d0's committed fill");
  rig_buffer_unref(a);
  rig_buffer_unref(b);
}

/* ---------------------------------------------------------------------- */
/* Hangs                                                                    */

Test(order, a_wait_loses_a_device_without_progress) {
  /* HANG-06, ERR-27, ERR-33, LOSS-03 */
  rig_device_t *d = open_sim("SIM:34", "latency_us=0,hang_ms=200");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *b = create(d, 4096);
  inj->hang_at(inj->device, rig_submitted(d) + 1);
  rig_point_t p = submit_fill(b, 1);
  CHECK_LOST(d, rig_point_wait(p), "a wait on hung work");
  cr_assert_str_eq(rig_lost(d), "no progress for 200 ms", "HANG-06");
  cr_assert_str_eq(rig_last_error(), "SIM:34 lost: no progress for 200 ms", "ERR-33");
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
}

Test(order, nothing_is_lost_to_a_hang_while_no_wait_watches) {
  /* HANG-07, HANG-05 */
  /* Hung work that nothing waits for loses nothing. */
  rig_device_t *hung = open_sim("SIM:35", "latency_us=0,hang_ms=50");
  const rig_sim_inject_t *inj = sim_inject(hung);
  rig_buffer_t *b = create(hung, 4096);
  inj->hang_at(inj->device, rig_submitted(hung) + 1);
  rig_point_t p = submit_fill(b, 1);
  cr_assert(!point_reached(p)); /* commits it */
  nap_ms(300);
  cr_assert_null(rig_lost(hung), "HANG-07: lost while nothing waited: %s", rig_lost(hung));

  /* An idle device, all of its work reached, outlives its bound. */
  rig_device_t *idle = open_sim("SIM:36", "latency_us=0,hang_ms=50");
  rig_buffer_t *c = create(idle, 4096);
  CHECK_OK(rig_buffer_fill(c, 2));
  nap_ms(200);
  CHECK_OK(rig_buffer_fill(c, 3), "HANG-05: a fill on an idle device after its bound");
  cr_assert_null(rig_lost(idle));

  /* A queue that waits for another device's unreached point is idle: its
   * wait outlasts its bound (latency 400 ms, bound 100 ms). */
  rig_device_t *slow = open_sim("SIM:37", "latency_us=400000,commit_every=1");
  rig_device_t *waiting = open_sim("SIM:38", "latency_us=0,hang_ms=100,queue_waits=1");
  rig_buffer_t *s = create(slow, 4096);
  rig_buffer_t *w = create(waiting, 4096);
  rig_point_t slow_fill = submit_fill(s, 4);
  rig_point_t after = submit_fill_after(w, 5, &slow_fill, 1);
  CHECK_OK(rig_point_wait(after), "HANG-05: a queue waiting on another device");
  cr_assert_null(rig_lost(waiting));
  expect_bytes(w, 5, "the fill after the wait");
  rig_buffer_unref(b);
  rig_buffer_unref(c);
  rig_buffer_unref(s);
  rig_buffer_unref(w);
  /* Cleanup only: the close's wait watches the hung work, and loses it. */
  (void)rig_close(hung);
}

/* ---------------------------------------------------------------------- */
/* Staging memory                                                           */

static uint8_t pattern(int64_t i, unsigned seed) { return (uint8_t)(i * 131 + (i >> 9) + seed); }

static void fill_pattern(uint8_t *p, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) p[i] = pattern(i, seed);
}

/* The first byte where got and want differ, or -1. */
static int64_t first_difference(const uint8_t *got, const uint8_t *want, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (got[i] != want[i]) return i;
  return -1;
}

static void expect_same(const uint8_t *got, const uint8_t *want, int64_t n, const char *what) {
  int64_t at = first_difference(got, want, n);
  cr_assert_eq(at, -1, "%s: byte %" PRId64 " is %u, want %u", what, at, at >= 0 ? got[at] : 0,
               at >= 0 ? want[at] : 0);
}

Test(order, copies_of_more_than_32_mib_through_staging, .timeout = 30) {
  /* COPY-15, COPY-17, COPY-18, COPY-19, COPY-24, COPY-28, COPY-31, COPY-56 */
  const int64_t n = 36 * MIB;
  rig_device_t *d = open_sim("SIM:39", LATENCY);
  rig_buffer_t *dev = create(d, n);
  uint8_t *src = malloc((size_t)n), *want = malloc((size_t)n), *dst = malloc((size_t)n);
  cr_assert(src && want && dst);
  fill_pattern(src, n, 1);
  memcpy(want, src, (size_t)n);
  rig_buffer_t *src_buffer = of_memory(src, n);
  rig_buffer_t *dst_buffer = of_memory(dst, n);

  int64_t host_before = rig_allocated(rig_host());
  rig_point_t in = submit_copy_all(src_buffer, dev);
  expect_device_point(in, d);
  /* COPY-17: the host moved the source into staging before the return. */
  memset(src, 0xee, (size_t)n);
  int64_t staged = rig_allocated(rig_host()) - host_before;
  cr_assert_geq(staged, 2 * 32 * MIB,
                "COPY-19: a copy of more than 32 MiB holds two 32 MiB staging allocations "
                "(the host holds %" PRId64 " bytes more)", staged);
  cr_assert_leq(staged, 2 * 32 * MIB,
                "COPY-24: staging grew by more than 64 MiB for one copy (%" PRId64 " bytes)", staged);

  memset(dst, 0, (size_t)n);
  submit_copy_all(dev, dst_buffer);
  /* COPY-18: the bytes are in the destination when the call returns. */
  expect_same(dst, want, n, "COPY-18: host <- device through staging");

  /* COPY-28, COPY-31: staging memory that no copy holds returns at
   * free_cache of the host, once its work is done. */
  CHECK_OK(rig_point_wait(in));
  CHECK_OK(rig_free_cache(rig_host()));
  cr_assert_leq(rig_allocated(rig_host()), host_before,
                "COPY-28: staging memory stayed after free_cache of the host");

  rig_buffer_unref(src_buffer);
  rig_buffer_unref(dst_buffer);
  rig_buffer_unref(dev);
  free(src);
  free(want);
  free(dst);
}

/* The bytes of dst after copying src's boxes into it, box after box. */
static void apply_boxes(const uint8_t *src, uint8_t *dst, const rig_box_t *boxes, size_t n) {
  for (size_t k = 0; k < n; k++)
    for (int64_t r = 0; r < boxes[k].rows; r++)
      memmove(dst + boxes[k].dst_offset + r * boxes[k].dst_pitch,
              src + boxes[k].src_offset + r * boxes[k].src_pitch, (size_t)boxes[k].width);
}

Test(order, boxes_through_staging) {
  /* COPY-45, COPY-51, COPY-52, COPY-15, ORD-14 */
  const int64_t n = 64 * 1024;
  rig_device_t *d = open_sim("SIM:40", LATENCY);
  rig_buffer_t *dev = create(d, n);
  uint8_t *src = malloc((size_t)n), *model = malloc((size_t)n), *got = malloc((size_t)n);
  cr_assert(src && model && got);
  fill_pattern(src, n, 3);
  rig_buffer_t *src_buffer = of_memory(src, n);

  /* Into the device: pitched rows, and a later box over part of them. */
  submit_fill(dev, 0xee);
  memset(model, 0xee, (size_t)n);
  const rig_box_t in[] = {
      {.src_offset = 100, .dst_offset = 5000, .width = 300, .rows = 7, .src_pitch = 1000, .dst_pitch = 512},
      {.src_offset = 40000, .dst_offset = 5100, .width = 50, .rows = 2, .src_pitch = 64, .dst_pitch = 512},
      {.src_offset = 7, .dst_offset = 60000, .width = 1001, .rows = 1, .src_pitch = 1001, .dst_pitch = 1001},
  };
  submit_copy(src_buffer, dev, in, 3);
  apply_boxes(src, model, in, 3);
  CHECK_OK(rig_buffer_blit_to_bytes(dev, 0, got, n, 0, n));
  expect_same(got, model, n, "boxes host -> device");

  /* Out of the device: pitched rows into caller memory. */
  uint8_t *out = calloc(1, (size_t)n), *out_model = calloc(1, (size_t)n);
  cr_assert(out && out_model);
  rig_buffer_t *out_buffer = of_memory(out, n);
  const rig_box_t back[] = {
      {.src_offset = 4990, .dst_offset = 3, .width = 333, .rows = 9, .src_pitch = 512, .dst_pitch = 4000},
      {.src_offset = 59990, .dst_offset = 50000, .width = 1100, .rows = 1, .src_pitch = 1100, .dst_pitch = 1100},
  };
  submit_copy(dev, out_buffer, back, 2);
  apply_boxes(model, out_model, back, 2);
  expect_same(out, out_model, n, "boxes device -> host");

  rig_buffer_unref(src_buffer);
  rig_buffer_unref(out_buffer);
  rig_buffer_unref(dev);
  free(src);
  free(model);
  free(got);
  free(out);
  free(out_model);
}
