/* Conformance: rig.txt's Timelines and points (Intro, Properties, Order's
 * host access rule, Domains' interrupted waits), on the host, memory
 * devices and the devices RIG_TEST_DEVICES names.
 *
 * The C API assigns values through copies and fills (rig.h has no submit
 * yet).  A fill the host runs (where it addresses the buffer, as on a
 * memory device) answers an already reached host point and moves no device
 * timeline; a fill a device runs (a sim or GPU device) moves that device's
 * timeline.  Each test asserts what holds for both, and the timeline rules
 * on every device-run point.
 *
 * Asserts: INTRO-07, INTRO-08, INTRO-09, TL-01/TL-02 (values of device-run
 *   fills), TL-05, TL-06, TL-14, TL-16, TL-17, TL-21 (signaled reports no
 *   value past what was submitted), ORD-10, PROP-03, PROP-04, DEV-36,
 *   DOM-07, DOM-08 (where a wait finds its point unreached), COPY-91.
 * A point past the device's submitted value: no work will ever reach it, so
 *   a wait on it is a misuse (RIG_EINVAL), and it is never reached.
 *
 * Not reached here:
 *   TL-01 through rig_submit and TL-03 (Image.load): rig.h has no submit or
 *     images; TL-01 is asserted through fills.
 *   TL-04: whether a host-run fill assigns a host value is not asserted
 *     beyond its point being reached and at most the host's submitted value.
 *   TL-07, TL-18..20, TL-22, TL-23: a lost device reporting dropped values
 *     and reads that lose a device need a faulting device: the sim suite
 *     (test_devices asserts signaled of a closed device).
 *   TL-08..13: commits are not observable on a device whose work runs before
 *     submit returns; the sim suite.
 *   TL-15: test_devices (reopen).
 *   DOM-07 on a memory device: its points are reached when submit returns,
 *     so no wait on one blocks; the interrupted branch runs on asynchronous
 *     devices (sim, GPU).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "devices.h"
#include "helpers.h"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */

/* True iff p is a value of d's own timeline, not a host point of work the
 * host ran for d's memory. */
static bool device_run(rig_point_t p, const rig_device_t *d) {
  return d != rig_host() && rig_point_device(p) == d;
}

/* Asserts the point is reached, through wait and reached. */
static void expect_reached(rig_point_t p) {
  CHECK_OK(rig_point_wait(p));
  cr_assert(point_reached(p), "a point is reached once its wait returned");
}

/* Asserts that a point past its device's submitted value is refused by a
 * wait (no work will reach it) and is not reached. */
static void expect_never_reached(rig_point_t p) {
  CHECK_FAILS(RIG_EINVAL, rig_point_wait(p), "wait on a value never submitted");
  bool reached = true;
  rig_status_t s = rig_point_reached(p, &reached);
  cr_assert(s == RIG_EINVAL || s == RIG_OK, "reached on a value never submitted: %s", rig_status_name(s));
  cr_assert_not(reached, "reached on a value never submitted answered %s with true", rig_status_name(s));
  if (s != RIG_OK) cr_assert(rig_last_error()[0] != '\0');
}

/* Asserts every byte at bytes is c. */
static void expect_bytes(const uint8_t *bytes, int64_t n, uint8_t c) {
  for (int64_t i = 0; i < n; i++)
    if (bytes[i] != c) cr_assert_fail("byte %" PRId64 " is %d, want %d", i, bytes[i], c);
}

static rig_device_t *devices_under_test(int i) {
  return i == 0 ? rig_host() : test_device(i - 1);
}
/* The host, then each test device. */
#define FOR_EACH_DEVICE(i) for (int i = 0; i <= test_device_count(); i++)

/* ---------------------------------------------------------------------- */
/* Points                                                                   */

Test(points, a_point_is_a_device_and_a_value) { /* INTRO-09, PROP-03 */
  const uint64_t values[] = {0, 1, 2, 12345, UINT64_C(1) << 40, RIG_POINT_VALUE_MAX};
  FOR_EACH_DEVICE(i) {
    rig_device_t *d = devices_under_test(i);
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
      rig_point_t p = rig_point_make(d, values[k]);
      cr_assert_eq(rig_point_value(p), values[k]);
      cr_assert(rig_point_device(p) == d, "%s's point names it, no later device took its slot",
                rig_device_name(d));
      rig_point_t copy = p;
      cr_assert_eq(rig_point_value(copy), values[k], "a point is plain data");
    }
  }
  cr_assert_eq(RIG_POINT_VALUE_MAX, (UINT64_C(1) << 47) - 1);
}

Test(points, fresh_timelines_start_at_zero) { /* TL-14, TL-17 */
  /* Nothing in this process has closed a device, so each device takes a
   * slot no device took before. */
  rig_device_t *m = open_named("MEM:50");
  rig_device_t *d = test_device(0);
  rig_device_t *fresh[] = {m, d};
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(rig_submitted(fresh[k]), 0, "%s: submitted of a fresh slot",
                 rig_device_name(fresh[k]));
    uint64_t signaled = 1;
    CHECK_OK(rig_signaled(fresh[k], &signaled));
    cr_assert_eq(signaled, 0, "nothing was reported");
    expect_reached(rig_point_make(fresh[k], 0));
  }
}

Test(points, values_of_one_submitter_are_consecutive) {
  /* INTRO-07, INTRO-08, TL-01, TL-02, TL-06, TL-16, TL-17, TL-21, DEV-36,
   * COPY-91 */
  enum { FILLS = 20 };
  FOR_EACH_DEVICE(i) {
    rig_device_t *d = devices_under_test(i);
    rig_buffer_t *b = create(d, 4096);
    uint64_t start = rig_submitted(d), last = start;
    rig_point_t points[FILLS];
    for (int k = 0; k < FILLS; k++) {
      points[k] = submit_fill(b, (uint8_t)k);
      uint64_t now = rig_submitted(d);
      cr_assert_geq(now, last, "submitted never decreases");
      if (device_run(points[k], d)) {
        cr_assert_eq(rig_point_value(points[k]), last + 1, "%s: the next value",
                     rig_device_name(d));
        cr_assert_eq(now, rig_point_value(points[k]), "submitted is the last value assigned");
      } else {
        cr_assert(rig_point_device(points[k]) == rig_host(),
                  "a fill not run by %s is the host's", rig_device_name(d));
        cr_assert(point_reached(points[k]), "the host ran the fill before it returned");
        cr_assert_leq(rig_point_value(points[k]), rig_submitted(rig_host()));
        if (d != rig_host())
          cr_assert_eq(now, last, "a host-run fill moves no value of %s", rig_device_name(d));
      }
      uint64_t signaled = 0;
      CHECK_OK(rig_signaled(d, &signaled));
      cr_assert_leq(signaled, rig_submitted(d), "signaled reports only values submitted");
      last = now;
    }
    /* INTRO-08: once the last is reached, every earlier one is. */
    expect_reached(points[FILLS - 1]);
    for (int k = 0; k < FILLS; k++) cr_assert(point_reached(points[k]));
    if (device_run(points[FILLS - 1], d)) {
      for (uint64_t v = start; v <= last; v++) cr_assert(point_reached(rig_point_make(d, v)));
      uint64_t signaled = 0;
      CHECK_OK(rig_signaled(d, &signaled));
      cr_assert_geq(signaled, rig_point_value(points[FILLS - 1]),
                    "a wait's value is reported");
      cr_assert_leq(signaled, rig_submitted(d));
    }
    rig_buffer_unref(b);
  }
}

Test(points, host_code_after_a_wait_follows_the_work) { /* ORD-10, TL-17 */
  FOR_EACH_DEVICE(i) {
    rig_device_t *d = devices_under_test(i);
    rig_buffer_t *b = create(d, 65536);
    const uint8_t *bytes = rig_buffer_host(b);
    if (bytes == NULL) { /* the host reads this memory only through rig */
      rig_buffer_unref(b);
      continue;
    }
    rig_point_t p = submit_fill(b, 0xa5);
    CHECK_OK(rig_point_wait(p));
    expect_bytes(bytes, 65536, 0xa5);
    p = submit_fill(b, 0x5a);
    while (!point_reached(p)) { /* reached commits, so this loop ends */
    }
    expect_bytes(bytes, 65536, 0x5a);
    rig_buffer_unref(b);
  }
}

Test(points, values_past_submitted_are_never_reached) { /* INTRO-08, TL-06 */
  rig_device_t *m = open_named("MEM:51");
  FOR_EACH_DEVICE(i) {
    rig_device_t *d = devices_under_test(i);
    rig_buffer_t *b = create(d, 4096);
    expect_reached(submit_fill(b, 1));
    expect_reached(rig_point_make(d, rig_submitted(d)));
    expect_never_reached(rig_point_make(d, rig_submitted(d) + 5));
    expect_never_reached(rig_point_make(d, rig_submitted(d) + 1));
    expect_never_reached(rig_point_make(d, RIG_POINT_VALUE_MAX));
    rig_buffer_unref(b);
  }
  expect_never_reached(rig_point_make(m, rig_submitted(m) + 5));
}

Test(points, points_of_a_closed_device_answer_for_good) { /* PROP-03, PROP-04, TL-16 */
  char name[32];
  rig_device_t *d = open_closable(61, name) /* a name of its own, as test_devices.c's 41.. */;
  rig_buffer_t *b = create(d, 1 << 20);
  rig_point_t p = submit_fill(b, 3);
  rig_point_t start = rig_point_make(d, 0);
  uint64_t submitted = rig_submitted(d);
  CHECK_OK(rig_close(d));

  cr_assert_eq(rig_submitted(d), submitted, "close assigns no value");
  rig_point_t points[] = {p, start, rig_point_make(d, submitted)};
  for (int k = 0; k < 3; k++) {
    expect_reached(points[k]); /* close waited for the work before it */
    if (device_run(points[k], d) || k > 0)
      cr_assert(rig_point_device(points[k]) == d, "no later device took the slot");
  }
  /* No work of the closed device will reach a later value. */
  rig_point_t never = rig_point_make(d, submitted + 5);
  rig_status_t s = rig_point_wait(never);
  cr_assert(s == RIG_EINVAL || s == RIG_ELOST, "wait past a closed device's values: %s",
            rig_status_name(s));
  cr_assert(rig_last_error()[0] != '\0');
  if (s == RIG_ELOST) cr_assert(rig_error_device() == d);
  bool reached = true;
  s = rig_point_reached(never, &reached);
  cr_assert(s != RIG_OK || !reached, "a value never submitted is never reached");
  rig_buffer_unref(b);
}

/* ---------------------------------------------------------------------- */
/* Concurrent submitters                                                    */

enum { SUBMITTERS = 4, FILLS_EACH = 1000 };

struct submitter {
  rig_buffer_t *buffer;
  rig_point_t points[FILLS_EACH];
  int done;
  rig_status_t failed; /* RIG_OK, or the status of the fill that failed */
  char message[256];
  atomic_int *running;
};

static void *fill_many(void *arg) {
  struct submitter *s = arg;
  for (s->done = 0; s->done < FILLS_EACH; s->done++) {
    rig_status_t st =
        rig_buffer_submit_fill(s->buffer, (uint8_t)s->done, NULL, 0, &s->points[s->done]);
    if (st != RIG_OK) {
      s->failed = st;
      snprintf(s->message, sizeof s->message, "%s", rig_last_error());
      break;
    }
  }
  atomic_fetch_sub(s->running, 1);
  return NULL;
}

static int compare_values(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

Test(points, concurrent_submitters_get_distinct_consecutive_values) {
  /* TL-05, TL-06, TL-16, INTRO-07 */
  rig_device_t *d = test_device(0);
  static struct submitter submitters[SUBMITTERS];
  atomic_int running = SUBMITTERS;
  for (int t = 0; t < SUBMITTERS; t++)
    submitters[t] = (struct submitter){.buffer = create(d, 256), .running = &running};
  uint64_t start = rig_submitted(d);

  pthread_t threads[SUBMITTERS];
  for (int t = 0; t < SUBMITTERS; t++)
    cr_assert_eq(pthread_create(&threads[t], NULL, fill_many, &submitters[t]), 0);
  /* TL-16: submitted never decreases while the values are assigned. */
  uint64_t seen = start;
  bool decreased = false;
  while (atomic_load(&running) > 0) {
    uint64_t now = rig_submitted(d);
    decreased |= now < seen;
    seen = now;
  }
  for (int t = 0; t < SUBMITTERS; t++) pthread_join(threads[t], NULL);
  cr_assert(!decreased, "rig_submitted decreased");

  static uint64_t values[SUBMITTERS * FILLS_EACH];
  size_t device_values = 0;
  for (int t = 0; t < SUBMITTERS; t++) {
    struct submitter *s = &submitters[t];
    cr_assert_eq(s->failed, RIG_OK, "thread %d, fill %d: %s: %s", t, s->done,
                 rig_status_name(s->failed), s->message);
    uint64_t previous = 0;
    for (int k = 0; k < FILLS_EACH; k++) {
      rig_point_t p = s->points[k];
      expect_reached(p);
      if (device_run(p, d)) {
        /* One thread's submits come one after another. */
        cr_assert_gt(rig_point_value(p), previous);
        previous = rig_point_value(p);
        values[device_values++] = rig_point_value(p);
      } else {
        cr_assert(rig_point_device(p) == rig_host(), "a fill of %s's memory is %s's or the host's",
                  rig_device_name(d), rig_device_name(d));
        cr_assert_leq(rig_point_value(p), rig_submitted(rig_host()));
      }
    }
    rig_buffer_unref(s->buffer);
  }
  /* The device-run values are exactly start + 1 ... start + n. */
  cr_assert_eq(rig_submitted(d), start + device_values,
               "submitted moved by the %zu device-run fills", device_values);
  qsort(values, device_values, sizeof values[0], compare_values);
  for (size_t k = 0; k < device_values; k++)
    cr_assert_eq(values[k], start + 1 + k, "value %zu of the device-run fills", k);
}

/* ---------------------------------------------------------------------- */
/* Interrupted waits                                                        */

static volatile sig_atomic_t interrupt_raised;

/* Waits on p with the interrupt flag raised: a wait that finds p reached
 * returns RIG_OK; one that blocks answers RIG_EINTR, having lost no device
 * and assigned no value, and a wait after the flag falls returns.  Answers
 * whether the wait was interrupted. */
static bool wait_with_flag_raised(rig_point_t p, rig_device_t *d) {
  uint64_t submitted = rig_submitted(d);
  rig_status_t s = rig_point_wait(p);
  if (s == RIG_OK) {
    cr_assert(point_reached(p));
    return false;
  }
  CHECK_FAILS(RIG_EINTR, s, "wait with the interrupt flag raised");
  cr_assert_null(rig_lost(d), "an interrupted wait loses no device");
  cr_assert_eq(rig_submitted(d), submitted, "an interrupted wait assigns no value");
  interrupt_raised = 0;
  expect_reached(p);
  interrupt_raised = 1;
  return true;
}

Test(points, interrupt_flag_ends_only_waits_that_block) { /* DOM-07, DOM-08 */
  interrupt_raised = 1;
  rig_set_interrupt_flag(&interrupt_raised);
  /* Reached points: the wait does not block, so it returns RIG_OK. */
  FOR_EACH_DEVICE(i) {
    rig_device_t *d = devices_under_test(i);
    cr_assert(!wait_with_flag_raised(rig_point_make(d, rig_submitted(d)), d),
              "%s: a wait on a reached point was interrupted", rig_device_name(d));
  }
  /* Fresh large fills, which an asynchronous device may not have run when
   * the wait starts. */
  for (int i = 0; i < test_device_count(); i++) {
    rig_device_t *d = test_device(i);
    for (int k = 0; k < 4; k++) {
      rig_buffer_t *b = create(d, 16 << 20);
      rig_point_t p = submit_fill(b, (uint8_t)k);
      bool interrupted = wait_with_flag_raised(p, d);
      if (!device_run(p, d))
        cr_assert(!interrupted, "a host-run fill's point is reached when submit returns");
      rig_buffer_unref(b);
    }
  }
  rig_set_interrupt_flag(NULL);
  interrupt_raised = 0;
}
