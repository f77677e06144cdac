/* Lifetime: the records of closed devices.
 *
 * A closed device's record is retired once the device has stopped and
 * nothing names it (rig.h, Handles): its name and slot are free, a pointer
 * the program kept answers as the closed device, and its points answer for
 * good; the record itself is released once 4096 later records were
 * retired, so that a process opening and closing devices without end
 * (rigd's instances) keeps its memory flat, and a pointer kept past that
 * answers Lost, "the device was closed and its record retired", until
 * 4096 more were released and its memory may hold a new device.  Sim devices, whose work moves their
 * timelines, under names of this file's own ("SIM:9~recN"); memory
 * devices cycle ("MEM:9~cycleN").
 *
 * A device lost by a fault is retired so too, once closed and stopped;
 * the values its loss dropped keep a tombstone in their slot.
 *
 * Asserts:
 *   Devices:    DEV-41 DEV-43 (a kept pointer of a retired record answers
 *               Lost, "NAME lost: closed"), DEV-11 (memory of it, its own
 *               or another's its work stamped, keeps it),
 *               DEV-16 (the slot's values go on), DEV-22 (a faulted
 *               device's dropped points answer Lost with its name and
 *               reason, also once its record is freed and its slot reused)
 *   Loss:       LOSS-13 LOSS-14 (its reached points stay reached, its
 *               dropped ones are never reached), STOP-09
 *   Properties: PROP-02 (name, submitted and reason of a retired record),
 *               PROP-03 (its points name it while it is kept), PROP-04
 *               (its points answer wait and reached, also once freed),
 *               PROP-08 (its name opens another device)
 *   Errors:     ERR-29
 *   Values per device: LOCAL-04 LOCAL-06 (a reopened name's values are its
 *               own; the retired one's get answers Lost)
 *
 * The heap bound holds in release builds: ASan and TSan keep freed memory
 * in quarantines of their own, so there the cycles run (every retirement
 * and free under the sanitizer) without the bound.
 */
#define _GNU_SOURCE

#include <criterion/criterion.h>
#include <malloc.h>
#include <pthread.h>
#include <rig/rig.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "helpers.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HEAP_BOUND_HOLDS 0
#else
#define HEAP_BOUND_HOLDS 1
#endif

/* The records rig keeps retired before it releases the oldest, and the
 * released ones kept before one's memory may hold a new device (rig.h). */
#define RETIRED_KEPT 4096
#define RELEASED_KEPT 4096
#define RETIRED_REASON "the device was closed and its record retired"

/* Opens and closes n memory devices of names no other open uses. */
static void cycle_devices(int n) {
  static int next;
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "MEM:9~cycle%d", next++);
    rig_device_t *d = NULL;
    rig_status_t s = rig_open(name, NULL, &d);
    if (s != RIG_OK) cr_assert_fail("open of %s: %s: %s", name, rig_status_name(s), rig_last_error());
    s = rig_close(d);
    if (s != RIG_OK) cr_assert_fail("close of %s: %s", name, rig_last_error());
  }
}

/* A sim device whose work runs at once. */
static rig_device_t *open_sim(const char *name) { return open_with(name, "latency_us=0"); }

/* A closed sim device whose fill ran: the fill's point, on its timeline,
 * in *p. */
static rig_device_t *closed_after_a_fill(const char *name, rig_point_t *p) {
  rig_device_t *d = open_sim(name);
  rig_buffer_t *b = create(d, 4096);
  *p = submit_fill(b, 7);
  CHECK_OK(rig_point_wait(*p));
  cr_assert(rig_point_device(*p) == d, "the fill ran on %s", rig_device_name(d));
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
  return d;
}

static int made;
static void *make_value(rig_device_t *d, void *context) {
  (void)d;
  (void)context;
  made++;
  return &made;
}
static void drop_value(void *value, void *context) {
  (void)value;
  (void)context;
}

Test(records, a_kept_pointer_of_a_retired_record_answers_as_the_closed_device) {
  /* DEV-41 DEV-43 ERR-29 PROP-02 PROP-03 PROP-04 PROP-08 LOCAL-06 */
  rig_point_t p;
  rig_device_t *old = closed_after_a_fill("SIM:9~rec1", &p);
  uint64_t last = rig_submitted(old);
  cycle_devices(16); /* their closes retire old's record, and keep it */

  cr_assert_str_eq(rig_lost(old), "closed");
  cr_assert_str_eq(rig_device_name(old), "SIM:9~rec1", "PROP-02: the name stays readable");
  cr_assert_eq(rig_submitted(old), last, "PROP-02: the timeline stays readable");
  rig_buffer_t *b = NULL;
  CHECK_FAILS(RIG_ELOST, rig_buffer_create(old, 64, RIG_MEMORY_DEVICE, &b), "DEV-43: a use of the retired device");
  cr_assert_str_eq(rig_last_error(), "SIM:9~rec1 lost: closed", "ERR-29: the message names it and why");
  cr_assert_null(b);
  CHECK_OK(rig_close(old), "a second close of a retired device runs nothing");

  cr_assert(rig_point_device(p) == old, "PROP-03: its point names it while no later device took its slot");
  bool reached = false;
  CHECK_OK(rig_point_wait(p));
  CHECK_OK(rig_point_reached(p, &reached));
  cr_assert(reached, "PROP-04: its point stays reached");

  rig_local_key_t *key = rig_local_new_key(make_value, drop_value, NULL);
  void *value = NULL;
  CHECK_FAILS(RIG_ELOST, rig_local_get(key, old, &value), "a value of the retired device");
  rig_device_t *fresh = open_sim("SIM:9~rec1");
  cr_assert(fresh != old && !rig_device_equal(fresh, old), "PROP-08: the freed name opens another device");
  cr_assert_null(rig_lost(fresh));
  int before = made;
  CHECK_OK(rig_local_get(key, fresh, &value));
  cr_assert_eq(made, before + 1, "LOCAL-06: the new device's value is made anew");
  cr_assert_str_eq(rig_lost(old), "closed", "the old pointer still answers as the closed device");
  CHECK_OK(rig_close(fresh));
}

Test(records, points_of_a_freed_record_stay_reached_and_name_no_device, .timeout = 60) {
  /* PROP-03 PROP-04 DEV-16 */
  rig_point_t p;
  closed_after_a_fill("SIM:9~rec2", &p);
  cycle_devices(RETIRED_KEPT + 64); /* past the records kept: rec2's is freed */

  cr_assert_null(rig_point_device(p), "a freed record's point names no device");
  bool reached = false;
  CHECK_OK(rig_point_wait(p), "PROP-04: the wait answers for good");
  CHECK_OK(rig_point_reached(p, &reached));
  cr_assert(reached, "PROP-04: the point stays reached after its record is freed");
  rig_point_t past = {p.bits + 1};
  CHECK_FAILS(RIG_EINVAL, rig_point_reached(past, &reached), "a value past the freed record's last was never given");
}

/* Asserts that each call given the released d answers Lost with the
 * retired record's reason (a call that answers no status: as for NULL,
 * with that reason as the last error). */
static void assert_answers_released(rig_device_t *d) {
  rig_buffer_t *b = NULL;
  CHECK_FAILS(RIG_ELOST, rig_buffer_create(d, 64, RIG_MEMORY_DEVICE, &b), "DEV-43: a buffer of the released record");
  cr_assert_str_eq(rig_last_error(), RETIRED_REASON, "ERR-29: the message says why");
  cr_assert_null(b);
  cr_assert_null(rig_error_device(), "no device answers for the released record");
  CHECK_FAILS(RIG_ELOST, rig_close(d), "a close of the released record");
  CHECK_FAILS(RIG_ELOST, rig_set_budget(d, 1 << 20), "a budget of the released record");
  CHECK_FAILS(RIG_ELOST, rig_free_cache(d));
  uint64_t v = 1;
  CHECK_FAILS(RIG_ELOST, rig_signaled(d, &v));
  rig_image_t *image = NULL;
  CHECK_FAILS(RIG_ELOST, rig_image_load(d, "x", 1, &image));
  rig_submission_t *sub = NULL;
  CHECK_FAILS(RIG_ELOST, rig_submission_make(d, NULL, 0, NULL, &sub));
  rig_local_key_t *key = rig_local_new_key(make_value, drop_value, NULL);
  void *value = NULL;
  CHECK_FAILS(RIG_ELOST, rig_local_get(key, d, &value));

  cr_assert_str_eq(rig_lost(d), RETIRED_REASON, "DEV-41: the released record answers lost");
  cr_assert_null(rig_device_name(d), "PROP-02: its name went with its record");
  cr_assert_str_eq(rig_last_error(), RETIRED_REASON);
  cr_assert_null(rig_device_arch(d));
  cr_assert_eq(rig_submitted(d), 0);
  cr_assert_eq(rig_budget(d), 0);
  cr_assert_not(rig_reaches(rig_host(), d));
  cr_assert_eq(rig_point_make(d, 0).bits, 0, "it makes no point");
}

Test(records, a_kept_pointer_of_a_released_record_answers_lost, .timeout = 60) {
  /* DEV-41 DEV-43 ERR-29 PROP-02 */
  rig_point_t p;
  rig_device_t *old = closed_after_a_fill("SIM:9~rec5", &p);
  cycle_devices(RETIRED_KEPT + 64); /* past the records kept: rec5's is released */
  assert_answers_released(old);
}

Test(records, a_kept_pointer_past_the_pool_names_a_closed_device, .timeout = 60) {
  /* DEV-41: past the released records kept, the memory may hold a later
   * device, every one of which this file's cycle closed: the pointer
   * answers lost either way and is never a use after free. */
  rig_device_t *old = NULL;
  CHECK_OK(rig_open("MEM:9~rec6", NULL, &old));
  CHECK_OK(rig_close(old));
  cycle_devices(RETIRED_KEPT + RELEASED_KEPT + 64);
  const char *why = rig_lost(old);
  cr_assert(why != NULL && (strcmp(why, RETIRED_REASON) == 0 || strcmp(why, "closed") == 0),
            "the kept pointer answers %s", why ? why : "(not lost)");
  rig_status_t s = rig_close(old);
  cr_assert(s == RIG_OK || s == RIG_ELOST, "its close answered %s", rig_status_name(s));
}

/* Asserts that the point p, whose value a loss of the device named name,
 * with why, dropped, answers Lost with that name and why for good, and
 * names no device once the record is freed (device NULL). */
static void assert_dropped(rig_point_t p, const char *lost, const rig_device_t *device) {
  bool reached = true;
  CHECK_FAILS(RIG_ELOST, rig_point_wait(p), "DEV-22 LOSS-14: a wait on the dropped value");
  cr_assert_str_eq(rig_last_error(), lost, "DEV-22: the device's name and reason");
  cr_assert(rig_error_device() == device, "the device answering is %p, want %p", (void *)rig_error_device(),
            (const void *)device);
  CHECK_FAILS(RIG_ELOST, rig_point_reached(p, &reached), "LOSS-14: the dropped value is never reached");
  cr_assert_not(reached);
  cr_assert_str_eq(rig_last_error(), lost);
  rig_buffer_t *b = create(rig_host(), 64);
  rig_point_t after = {0};
  CHECK_FAILS(RIG_ELOST, rig_buffer_submit_fill(b, 1, &p, 1, &after), "work after the dropped value");
  cr_assert_str_eq(rig_last_error(), lost);
  rig_buffer_unref(b);
}

Test(records, a_faulted_device_s_record_is_freed_and_its_points_answer_for_good, .timeout = 60) {
  /* DEV-22 (its dropped points answer Lost with its name and reason, also
   * after its record is freed and its slot reused), LOSS-13, LOSS-14,
   * DEV-41 DEV-43 (its kept pointer answers Lost), DEV-16.  The record
   * of a device whose loss dropped points was kept for good: the process
   * grew by kilobytes per faulted device. */
  rig_device_t *d = open_sim("SIM:9~faulted");
  rig_buffer_t *b = create(d, 4096);
  rig_point_t done = submit_fill(b, 1);
  CHECK_OK(rig_point_wait(done));
  rig_point_t dropped = lose_by_fault(d, b, "the injected fault");
  rig_point_t never = {dropped.bits + 1};
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d), "STOP-09: the close runs the owed stop");
  const char *lost = "SIM:9~faulted lost: the injected fault";
  assert_dropped(dropped, lost, d); /* retired: the record answers */
  cycle_devices(RETIRED_KEPT + 64); /* past the records kept: its record is freed */

  assert_answers_released(d);
  cr_assert_null(rig_point_device(dropped), "a freed record's point names no device");
  assert_dropped(dropped, lost, NULL);
  bool reached = false;
  CHECK_OK(rig_point_wait(done), "LOSS-13: a value reached before the loss stays reached");
  CHECK_OK(rig_point_reached(done, &reached));
  cr_assert(reached);
  CHECK_FAILS(RIG_EINVAL, rig_point_reached(never, &reached), "a value past the device's last was never given");

  /* Memory devices cycle through the slots until one takes d's slot. */
  bool reused = false;
  for (int i = 0; i < 70000 && !reused; i++) {
    rig_device_t *m = NULL;
    CHECK_OK(rig_open("MEM:9~slots", NULL, &m));
    reused = rig_point_make(m, 0).bits >> 47 == dropped.bits >> 47;
    if (reused) cr_assert_geq(rig_submitted(m), rig_point_value(dropped), "DEV-16: the slot's values go on");
    CHECK_OK(rig_close(m));
  }
  cr_assert(reused, "no open took the faulted device's slot again");
  assert_dropped(dropped, lost, NULL);
  CHECK_OK(rig_point_wait(done), "LOSS-13, after the slot's reuse");
}

Test(records, memory_another_allocation_names_it_by_keeps_the_record, .timeout = 60) {
  /* DEV-11 PROP-03: a fill the device runs through a borrow of another
   * device's memory stamps that allocation with the device's point; the
   * record stays (a free would leave that stamp dangling) until that
   * memory goes. */
  rig_device_t *owner = open_sim("SIM:9~rec3owner");
  rig_device_t *d = open_sim("SIM:9~rec3");
  rig_buffer_t *theirs = create(owner, 4096);
  rig_buffer_t *on_d = borrow(d, theirs);
  rig_point_t p = submit_fill(on_d, 3);
  CHECK_OK(rig_point_wait(p));
  cr_assert(rig_point_device(p) == d, "the fill ran on %s", rig_device_name(d));
  rig_buffer_unref(on_d);
  CHECK_OK(rig_close(d));
  cycle_devices(RETIRED_KEPT + 64);
  cr_assert(rig_point_device(p) == d, "the record a stamp names is neither retired nor freed");
  cr_assert_str_eq(rig_device_name(d), "SIM:9~rec3");

  rig_buffer_unref(theirs);
  CHECK_OK(rig_free_cache(owner));
  cycle_devices(RETIRED_KEPT + 64);
  cr_assert_null(rig_point_device(p), "once the memory went, the record was retired and freed");
  bool reached = false;
  CHECK_OK(rig_point_reached(p, &reached));
  cr_assert(reached);
  CHECK_OK(rig_close(owner));
}

Test(records, a_buffer_of_the_closed_device_keeps_its_record_and_slot, .timeout = 60) {
  /* DEV-11 DEV-43: the device's own memory, still held after the close,
   * keeps its slot and record; a copy into it answers Lost; once the
   * buffer goes, the record is retired and, past the kept ones, freed. */
  rig_device_t *d = open_sim("SIM:9~rec5");
  rig_buffer_t *b = create(d, 4096);
  rig_point_t p = submit_fill(b, 4);
  CHECK_OK(rig_point_wait(p));
  CHECK_OK(rig_close(d));
  cycle_devices(RETIRED_KEPT + 64);
  cr_assert(rig_point_device(p) == d, "the record its memory holds is neither retired nor freed");
  rig_buffer_t *host = create(rig_host(), 4096);
  CHECK_LOST(d, rig_buffer_copy(host, b), "a copy into the closed device's memory");
  rig_buffer_unref(host);
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(d), "the closed device's memory returns");
  cycle_devices(RETIRED_KEPT + 64);
  cr_assert_null(rig_point_device(p), "once its memory went, the record was retired and freed");
  bool reached = false;
  CHECK_OK(rig_point_reached(p, &reached));
  cr_assert(reached);
}

Test(records, opening_and_closing_keeps_the_heap_flat, .timeout = 60) {
  /* 1.1 KB and more stayed per device before records were retired: 10,000
   * cycles grew the heap by over 11 MB.  Past the records kept and the
   * released ones the device pool keeps, the heap stays within 1 MB. */
  cycle_devices(RETIRED_KEPT + RELEASED_KEPT + 1000);
  size_t before = mallinfo2().uordblks;
  int cycles = HEAP_BOUND_HOLDS ? 10000 : 1000;
  cycle_devices(cycles);
  size_t after = mallinfo2().uordblks;
  long long growth = (long long)after - (long long)before;
  if (HEAP_BOUND_HOLDS)
    cr_assert_lt(growth, 1 << 20, "%d opens and closes grew the heap by %lld bytes", cycles, growth);
}

/* ---- A close racing uses ------------------------------------------------- */

struct race {
  rig_device_t *d;
  atomic_bool stop;
};

/* Uses d until told: each use answers OK while d is open, Lost after. */
static void *use_device(void *arg) {
  struct race *r = arg;
  while (!atomic_load(&r->stop)) {
    rig_buffer_t *b = NULL;
    rig_status_t s = rig_buffer_create(r->d, 64, RIG_MEMORY_DEVICE, &b);
    cr_assert(s == RIG_OK || s == RIG_ELOST, "a use racing the close answered %s", rig_status_name(s));
    if (b) rig_buffer_unref(b);
    const char *why = rig_lost(r->d);
    cr_assert(why == NULL || strcmp(why, "closed") == 0);
    cr_assert_str_eq(rig_device_name(r->d), "SIM:9~rec4");
  }
  return NULL;
}

Test(records, uses_racing_a_close_and_the_retirement_answer_lost, .timeout = 60) {
  /* DEV-43 under threads (run under TSan) */
  struct race r = {open_sim("SIM:9~rec4"), false};
  pthread_t users[3];
  for (int i = 0; i < 3; i++) cr_assert_eq(pthread_create(&users[i], NULL, use_device, &r), 0);
  nap_ms(20);
  CHECK_OK(rig_close(r.d));
  cycle_devices(64); /* retires it while the users go on */
  atomic_store(&r.stop, true);
  for (int i = 0; i < 3; i++) pthread_join(users[i], NULL);
  cr_assert_str_eq(rig_lost(r.d), "closed");
}
