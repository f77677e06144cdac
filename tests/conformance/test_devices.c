/* Conformance: rig.txt's Devices, Opening and closing, Properties, Machines
 * (reaches), the devices' budgets (Reclamation) and the reason of a closed
 * device (Errors and failure), on the host, memory devices and the devices
 * RIG_TEST_DEVICES names.
 *
 * Asserts: DEV-01, DEV-02, DEV-03, DEV-04, DEV-06, DEV-16, DEV-17, DEV-26,
 *   DEV-33, DEV-34, DEV-36, DEV-39, DEV-40, DEV-41, DEV-42, DEV-43, DEV-44,
 *   DEV-45, DEV-46, DEV-49, DEV-52, DEV-53; PROP-01, PROP-02, PROP-03
 *   (points of values a device was given), PROP-04, PROP-06, PROP-07, PROP-08,
 *   PROP-10, PROP-12, PROP-13, PROP-15, PROP-18, PROP-19 (the format of a
 *   bus where a test device states one), PROP-20, PROP-21, PROP-22, PROP-23,
 *   PROP-24, PROP-25, PROP-28, PROP-31 (no record under an unknown key);
 *   MACH-07, MACH-08, MACH-09, MACH-10, MACH-11, MACH-18; RECL-43, RECL-44,
 *   RECL-46, RECL-47, RECL-48, RECL-49, RECL-50; LOSS-05, LOSS-06, LOSS-08,
 *   LOSS-09, LOSS-10; ERR-29, ERR-30, ERR-33, ERR-34; TL-15 (where a later
 *   device is seen to take a closed device's slot), TL-16, TL-19/TL-20
 *   (signaled of a closed device).
 *
 * Not reached here:
 *   DEV-05, DEV-07, DEV-22: need a device lost, with its stop owed, in a
 *     process that has not failed (a fault or a hang): the sim suite.
 *   DEV-14: which slot the process's first failure holds is not observable.
 *   DEV-08, DEV-47, DEV-48, DEV-54, PROP-17, PROP-26, PROP-30: rig.h has no
 *     machines (open_host, open_ ~machine).
 *   DEV-09..13: the slots are not observable but through opens; DEV-09
 *     (every slot held) would need 65,534 devices open at once.
 *   DEV-15: a timeline past 2^46 values is out of reach of a test.
 *   DEV-18: what an open costs a driver is not observable through rig.h.
 *   DEV-19..21: queue waits through mapped words: the sim and GPU suites.
 *   DEV-23..25, DEV-27, DEV-28, DEV-30, DEV-31: need an opener of the test's
 *     own (errors raised inside make, facts that fault or break their rules,
 *     an open from inside an open); rig.h registers no driver.
 *   DEV-29: a name's prefix chooses its driver, so no name can be open with
 *     another driver's device.
 *   DEV-32, DEV-50, PROP-16, PROP-29, RECL-45: rig.h has no io devices.
 *   DEV-35, DEV-37, DEV-38: a memory device's timeline never moves through
 *     rig.h (its fills and copies are host-run), and rig.h has no images or
 *     timing.
 *   DEV-51: an interrupted close needs a close that blocks on unfinished work
 *     (an asynchronous device), and rig.h does not say rig_close answers
 *     RIG_EINTR.
 *   PROP-05: what a driver's stop releases is not observable through rig.h.
 *   PROP-09, PROP-27: a driver's name of its processor and its cache size are
 *     the driver's to state; only their consistency is checked.
 *   PROP-11, PROP-14: running code of a lower level needs images: the
 *     Running work suite.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
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

/* Devices this file closes are numbers 41.. of test device 0's driver
 * (open_closable), so that the rules are asserted on the suite's kind of
 * device, and closing them leaves the suite's devices open. */

static bool is_memory_device_name(const char *name) {
  return strncmp(name, "MEM:", 4) == 0 && strchr(name, '@') == NULL;
}

/* Fills b with c and waits for the fill; returns its point. */
static rig_point_t fill_and_wait(rig_buffer_t *b, uint8_t c) {
  rig_point_t p = submit_fill(b, c);
  CHECK_OK(rig_point_wait(p), "rig_point_wait of a fill");
  return p;
}

static bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* ---------------------------------------------------------------------- */
/* Devices and opening                                                      */

Test(devices, host_is_cpu_and_open_cpu_returns_it) { /* DEV-02, DEV-01 */
  rig_device_t *host = rig_host();
  cr_assert(host != NULL);
  cr_assert_str_eq(rig_device_name(host), "CPU");
  cr_assert(rig_host() == host, "rig_host is one device for the process");
  rig_device_t *opened = open_named("CPU");
  cr_assert(opened == host && rig_device_equal(opened, host),
            "rig_open(\"CPU\") is the host");
  cr_assert_null(rig_lost(host));
}

Test(devices, one_open_device_per_name) { /* DEV-01, DEV-26, DEV-33, PROP-07 */
  for (int i = 0; i < test_device_count(); i++) {
    rig_device_t *first = test_device(i);
    rig_device_t *again = test_device(i);
    cr_assert(first == again && rig_device_equal(first, again),
              "a second open of %s answers the open device", test_device_name(i));
  }
  rig_device_t *m = open_named("MEM:20");
  rig_device_t *same = NULL;
  CHECK_OK(rig_memory_device("MEM:20", &same));
  cr_assert(same == m, "rig_memory_device answers the device rig_open opened");
  rig_device_t *other = open_named("MEM:21");
  cr_assert(other != m && !rig_device_equal(m, other), "two names, two devices");
  cr_assert(!rig_device_equal(m, rig_host()));
}

Test(devices, open_with_config_of_an_open_name_does_not_ask_the_driver) { /* DEV-01, RECL-44 */
  rig_device_t *m = open_named("MEM:22");
  rig_open_options_t opts = {.size = sizeof opts, .config = "budget=4096"};
  rig_device_t *again = NULL;
  CHECK_OK(rig_open("MEM:22", &opts, &again), "reopen with config");
  cr_assert(again == m);
  cr_assert_eq(rig_budget(m), INT64_MAX,
               "the driver is not asked again, so its budget stays the default");
}

Test(devices, open_misuse_and_refusal) { /* DEV-04, DEV-39 */
  rig_device_t *d = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_open(NULL, NULL, &d));
  CHECK_FAILS(RIG_EINVAL, rig_open("NOSUCHDRIVER:0", NULL, &d),
              "rig_open of an unknown driver prefix");
  CHECK_FAILS(RIG_EINVAL, rig_open("nosuchdriver", NULL, &d),
              "rig_open of a name that names no driver");
  CHECK_FAILS(RIG_EINVAL, rig_memory_device(NULL, &d));
  /* The memory driver refuses a budget that is no byte count: the open is
   * RIG_EINVAL naming the knob, and leaves the name unopened. */
  rig_open_options_t bad = {.size = sizeof bad, .config = "budget=lots"};
  CHECK_FAILS(RIG_EINVAL, rig_open("MEM:34", &bad, &d), "open with a bad budget");
  cr_assert(strstr(rig_last_error(), "MEM:34: the configuration's budget=lots") != NULL, "reason: %s",
            rig_last_error());
  rig_device_t *m = open_named("MEM:34");
  cr_assert_eq(rig_budget(m), INT64_MAX, "the refused open left no device");
}

Test(devices, a_malformed_name_opens_nothing) { /* DEV-01 DEV-04 */
  static const char *const malformed[] = {"MEM:0 ", " MEM:0", "MEM:", "MEM:0\n", "MEM::0", "MEM:0~",
                                          "MEM:0@",  "MEM 0",  "",     "MEM:0~a b", ":0", "MEM:0@rigd~a"};
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
    rig_device_t *d = (rig_device_t *)1;
    CHECK_FAILS(RIG_EINVAL, rig_open(malformed[i], NULL, &d), "\"%s\"", malformed[i]);
    cr_assert_null(d);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", malformed[i]);
    cr_assert(strstr(rig_last_error(), quoted) != NULL, "the message names %s: %s", quoted, rig_last_error());
  }
  /* Names of every part still open. */
  rig_device_t *m = open_named("MEM:0"), *tagged = open_named("MEM:0~a.b-c_1");
  cr_assert(!rig_device_equal(m, tagged), "an instance is a device of its own");
}

/* What rig_probe reported of the names a test looks for. */
struct probed {
  int calls, cpu, mem0, mem1; /* each: times listed as openable (why NULL) */
};

static void note_probed(const char *name, const char *why, void *context) {
  struct probed *seen = context;
  seen->calls++;
  if (name == NULL || why != NULL) return;
  if (strcmp(name, "CPU") == 0) seen->cpu++;
  if (strcmp(name, "MEM:0") == 0) seen->mem0++;
  if (strcmp(name, "MEM:1") == 0) seen->mem1++;
}

Test(devices, probe_lists_host_and_memory_devices) { /* rig_probe */
  struct probed seen = {0};
  CHECK_OK(rig_probe(note_probed, &seen));
  cr_assert_geq(seen.calls, 3, "probe calls f once per name");
  cr_assert_eq(seen.cpu, 1, "probe lists \"CPU\" once, openable");
  cr_assert_eq(seen.mem0, 1, "probe lists \"MEM:0\" once, openable");
  cr_assert_eq(seen.mem1, 1, "probe lists \"MEM:1\" once, openable");
  CHECK_FAILS(RIG_EINVAL, rig_probe(NULL, NULL));
}

/* ---------------------------------------------------------------------- */
/* Closing                                                                  */

Test(devices, close_of_host_or_null_is_invalid) { /* DEV-53 */
  rig_device_t *host = rig_host();
  CHECK_FAILS(RIG_EINVAL, rig_close(host));
  CHECK_FAILS(RIG_EINVAL, rig_close(NULL));
  cr_assert_null(rig_lost(host), "the host stays live");
  rig_buffer_t *b = create(host, 64);
  fill_and_wait(b, 7);
  uint8_t bytes[64];
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, bytes, 64, 0, 64), "host memory after a refused close");
  cr_assert_eq(bytes[63], 7);
  rig_buffer_unref(b);
}

Test(devices, close_waits_for_work_then_loses_the_device) {
  /* DEV-40, DEV-41, DEV-42, DEV-43, DEV-46, LOSS-05, ERR-29, ERR-33, ERR-34 */
  char name[32];
  rig_device_t *d = open_closable(41, name);
  rig_device_t *shared = open_named(name);
  cr_assert(shared == d);
  cr_assert_null(rig_lost(d), "a live device has no reason");
  rig_buffer_t *b = create(d, 1 << 20);
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_fill(b, 0x5a, NULL, 0, &p));

  CHECK_OK(rig_close(d));
  /* DEV-40: the fill submitted before the close is done. */
  bool reached = false;
  CHECK_OK(rig_point_reached(p, &reached), "reached after close");
  cr_assert(reached, "close waited for the work submitted before it");
  /* DEV-41, ERR-29, ERR-34; DEV-46: the other opener's handle is the same. */
  cr_assert(rig_lost(d) != NULL && strcmp(rig_lost(d), "closed") == 0,
            "lost reason is \"closed\", got %s", rig_lost(d) ? rig_lost(d) : "NULL");
  cr_assert_str_eq(rig_lost(shared), "closed");
  /* DEV-43, ERR-33: every use answers RIG_ELOST "NAME lost: closed". */
  rig_buffer_t *nb = NULL;
  CHECK_LOST(d, rig_buffer_create(d, 64, RIG_MEMORY_DEVICE, &nb), "create on a closed device");
  cr_assert_null(nb);
  CHECK_LOST(d, rig_buffer_submit_fill(b, 1, NULL, 0, &p), "fill of a closed device's memory");
  CHECK_LOST(d, rig_buffer_wait(b, RIG_ACCESS_READ_WRITE), "wait on a closed device's memory");
  /* DEV-42: the stop returned, so the name opens again at once. */
  rig_device_t *next = open_named(name);
  cr_assert(next != d);
  rig_buffer_unref(b);
}

Test(devices, close_of_a_closed_device_keeps_its_reason) { /* DEV-49, LOSS-08 */
  char name[32];
  rig_device_t *d = open_closable(42, name);
  CHECK_OK(rig_close(d), "first close");
  CHECK_OK(rig_close(d), "close of a closed device");
  cr_assert(rig_lost(d) && strcmp(rig_lost(d), "closed") == 0);
  rig_buffer_t *b = NULL;
  CHECK_LOST(d, rig_buffer_create(d, 4, RIG_MEMORY_DEVICE, &b), "create after two closes");
}

Test(devices, closed_memory_device_returns_its_memory) { /* DEV-44, DEV-43 */
  rig_device_t *d = open_named("MEM:43");
  int64_t before = rig_allocated(d);
  rig_buffer_t *b = create(d, 4096);
  cr_assert_eq(rig_allocated(d), before + 4096);
  CHECK_OK(rig_close(d));
  uint8_t bytes[16];
  CHECK_LOST(d, rig_buffer_blit_to_bytes(b, 0, bytes, 16, 0, 16),
             "blit from a closed device's buffer");
  assert_lost_with(d, "closed");
  rig_buffer_unref(b);
  /* A closed memory device has stopped: its collected memory returns at the
   * next call that moves it, such as its free_cache (RECL-52). */
  CHECK_OK(rig_free_cache(d), "free_cache of a closed device");
  cr_assert_eq(rig_allocated(d), before, "the buffer's memory returned, %" PRId64
               " bytes still held", rig_allocated(d));
}

Test(devices, close_after_fail_keeps_the_fail_reason) {
  /* DEV-06, DEV-49, DEV-52, ERR-30, ERR-33.  rig_fail is for good: this
   * relies on Criterion running each test in a process of its own. */
  rig_device_t *closed = open_named("MEM:35");
  rig_device_t *d = open_named("MEM:36");
  CHECK_OK(rig_close(closed));
  cr_assert_null(rig_failure(), "a close is never the process's failure");

  const char *why = "conformance: failed on purpose";
  CHECK_OK(rig_fail(why));
  cr_assert(rig_failure() && strcmp(rig_failure(), why) == 0);
  cr_assert(rig_lost(d) && strcmp(rig_lost(d), why) == 0, "fail lost MEM:36");
  cr_assert_str_eq(rig_lost(closed), "closed", "a lost device keeps its reason");
  cr_assert_null(rig_lost(rig_host()), "fail loses every device but the host");

  /* Every open from then on answers RIG_EOPEN with the failure's reason,
   * of a new name and of a lost one alike. */
  const char *names[] = {"MEM:37", "MEM:36"};
  for (int i = 0; i < 2; i++) {
    rig_device_t *none = NULL;
    CHECK_FAILS(RIG_EOPEN, rig_open(names[i], NULL, &none), "%s", names[i]);
    cr_assert(strstr(rig_last_error(), why) != NULL, "open after fail: %s", rig_last_error());
  }
  /* The close of a lost device runs its owed stop and keeps its reason. */
  CHECK_OK(rig_close(d), "close of a device fail lost");
  cr_assert_str_eq(rig_lost(d), why);
  rig_buffer_t *b = NULL;
  CHECK_LOST(d, rig_buffer_create(d, 64, RIG_MEMORY_DEVICE, &b), "create on a device fail lost");
}

struct submitter {
  rig_buffer_t *buffer;
  atomic_int fills;
  rig_status_t last;
  rig_device_t *error_device;
  char message[256];
  rig_point_t points[256];
};

/* Fills its buffer until a fill fails, keeping the last points. */
static void *submit_until_refused(void *arg) {
  struct submitter *s = arg;
  for (long i = 0; i < 10 * 1000 * 1000; i++) {
    rig_point_t p;
    rig_status_t st = rig_buffer_submit_fill(s->buffer, (uint8_t)i, NULL, 0, &p);
    if (st != RIG_OK) {
      s->last = st;
      s->error_device = rig_error_device();
      snprintf(s->message, sizeof s->message, "%s", rig_last_error());
      return NULL;
    }
    s->points[i % 256] = p;
    atomic_fetch_add(&s->fills, 1);
  }
  s->last = RIG_OK;
  return NULL;
}

Test(devices, work_submitted_during_close) { /* DEV-45, DEV-43 */
  char name[32];
  rig_device_t *d = open_closable(43, name);
  struct submitter s = {.buffer = create(d, 4096), .last = RIG_OK};
  pthread_t thread;
  cr_assert_eq(pthread_create(&thread, NULL, submit_until_refused, &s), 0);
  while (atomic_load(&s.fills) < 16) sched_yield();
  rig_status_t closed = rig_close(d);
  pthread_join(thread, NULL);
  CHECK_OK(closed, "rig_close during submits");
  cr_assert_eq(s.last, RIG_ELOST, "a fill after the close answers RIG_ELOST, got %s",
               rig_status_name(s.last));
  cr_assert(s.error_device == d);
  cr_assert(strstr(s.message, "lost: closed") != NULL, "message: %s", s.message);
  /* Work submitted during the close may be lost with d: its points answer
   * either reached or RIG_ELOST, never anything else. */
  int kept = atomic_load(&s.fills) < 256 ? atomic_load(&s.fills) : 256;
  for (int i = 0; i < kept; i++) {
    rig_status_t w = rig_point_wait(s.points[i]);
    cr_assert(w == RIG_OK || w == RIG_ELOST, "wait answered %s", rig_status_name(w));
  }
  rig_buffer_unref(s.buffer);
}

Test(devices, reopen_makes_a_new_device_whose_timeline_continues) {
  /* DEV-16, LOSS-09, LOSS-10, PROP-03, PROP-04, PROP-08, TL-15, TL-16 */
  char name[32];
  rig_device_t *old = open_closable(44, name);
  rig_buffer_t *b = create(old, 4096);
  fill_and_wait(b, 1); /* moves old's timeline where old runs its fills */
  rig_buffer_unref(b);
  uint64_t old_last = rig_submitted(old);
  rig_point_t old_point = rig_point_make(old, old_last);
  CHECK_OK(rig_close(old));

  rig_device_t *fresh = open_named(name);
  cr_assert(fresh != old && !rig_device_equal(fresh, old), "a reopened name is another device");
  cr_assert_null(rig_lost(fresh));
  cr_assert_str_eq(rig_lost(old), "closed", "the old device stays lost");
  cr_assert_str_eq(rig_device_name(fresh), name);
  cr_assert_str_eq(rig_device_name(old), name, "old's properties keep their values");
  cr_assert_eq(rig_submitted(old), old_last, "old's timeline never decreases");

  /* The old device's points answer for good, also if its slot was reused. */
  bool reached = false;
  CHECK_OK(rig_point_wait(old_point), "wait on the closed device's point");
  CHECK_OK(rig_point_reached(old_point, &reached));
  cr_assert(reached);
  /* A point of a value old was given names old until a later device takes
   * old's slot, and never names that later device. */
  rig_device_t *named = rig_point_device(old_point);
  if (old_last > 0 && !same_slot(fresh, old))
    cr_assert(named == old, "a point of a value old was given names old");
  if (old_last > 0)
    cr_assert(named == old || named == NULL, "old's point names %s", rig_device_name(named));

  /* Where the new device took old's slot, its timeline starts after old's
   * last value (the next test makes a device take it). */
  if (same_slot(fresh, old)) {
    cr_assert_eq(rig_submitted(fresh), old_last, "TL-15: the slot's timeline continues");
    rig_buffer_t *nb = create(fresh, 4096);
    rig_point_t p = fill_and_wait(nb, 2);
    if (rig_point_device(p) == fresh)
      cr_assert_gt(rig_point_value(p), old_last, "DEV-16: values go on past old's");
    rig_buffer_unref(nb);
  }
}

Test(devices, open_and_close_more_times_than_slots, .timeout = 60) {
  /* DEV-16, DEV-17, PROP-03, PROP-04, PROP-08, TL-15 */
  /* A device whose timeline moved where its driver runs its fills, closed
   * so that its slot is free for a later device. */
  char name[32];
  rig_device_t *old = open_closable(46, name);
  rig_buffer_t *b = create(old, 4096);
  fill_and_wait(b, 1);
  rig_buffer_unref(b);
  uint64_t old_last = rig_submitted(old);
  rig_point_t old_point = rig_point_make(old, old_last), old_slot = rig_point_make(old, 0);
  CHECK_OK(rig_close(old));

  /* Each close stops a memory device that holds no memory, so its slot
   * frees: 70,000 opens exceed the 65,535 slots, and some later device
   * takes old's slot, where its timeline starts after old's values.  The
   * cycle retires and releases old's record (rig.h, Handles): old is
   * compared by its slot's point, and its kept pointer answers as a closed
   * device. */
  enum { OPENS = 70000 };
  rig_device_t *previous = old;
  for (int i = 0; i < OPENS; i++) {
    rig_device_t *d = NULL;
    rig_status_t s = rig_open("MEM:46", NULL, &d);
    if (s != RIG_OK)
      cr_assert_fail("open %d of MEM:46: %s: %s", i, rig_status_name(s), rig_last_error());
    if (d == previous || rig_device_equal(d, previous))
      cr_assert_fail("open %d returned the closed device", i);
    if (rig_point_make(d, 0).bits == old_slot.bits && rig_submitted(d) < old_last)
      cr_assert_fail("open %d took old's slot, but its timeline starts at %" PRIu64
                     ", before old's last value %" PRIu64, i, rig_submitted(d), old_last);
    s = rig_close(d);
    if (s != RIG_OK) cr_assert_fail("close %d: %s", i, rig_last_error());
    previous = d;
  }
  assert_kept_pointer_closed(old);
  /* The old device's point answers for good, also once its slot was reused.
   * A value old was given never names the device that took the slot (a
   * value 0 is also that device's start, so it may). */
  rig_device_t *named = rig_point_device(old_point);
  if (old_last > 0)
    cr_assert(named == old || named == NULL, "old's point names %s", rig_device_name(named));
  CHECK_OK(rig_point_wait(old_point), "wait on old's point");
  bool reached = false;
  CHECK_OK(rig_point_reached(old_point, &reached));
  cr_assert(reached);
}

/* ---------------------------------------------------------------------- */
/* Properties                                                               */

struct properties {
  const char *name, *arch, *instruction_set, *bus;
  bool runs_on_host;
  int64_t alignment, cache_bytes;
  const void *capability;
};

static struct properties properties_of(const rig_device_t *d) {
  return (struct properties){
      .name = rig_device_name(d),
      .arch = rig_device_arch(d),
      .instruction_set = rig_device_instruction_set(d),
      .bus = rig_device_bus(d),
      .runs_on_host = rig_device_runs_on_host(d),
      .alignment = rig_device_alignment(d),
      .cache_bytes = rig_device_cache_bytes(d),
      .capability = rig_device_capability(d, "conformance.no-such-key"),
  };
}

static bool same_string(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

#if defined(__x86_64__)
/* The highest x86-64 psABI level the compiler's runtime finds, which checks
 * the registers the system enables; NULL where the compiler cannot say. */
static const char *expected_x86_level(void) {
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
  if (__builtin_cpu_supports("x86-64-v2")) return "x86-64-v2";
  return "x86-64";
#else
  return NULL;
#endif
}
#endif

/* The largest cache of cpu0 that sysfs states, or 0. */
static int64_t largest_sysfs_cache(void) {
  int64_t largest = 0;
  for (int i = 0; i < 16; i++) {
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    long long n = 0;
    char unit = 0;
    if (fscanf(f, "%lld%c", &n, &unit) >= 1) {
      int64_t bytes = n * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
      if (bytes > largest) largest = bytes;
    }
    fclose(f);
  }
  return largest;
}

Test(devices, host_properties) {
  /* DEV-02, PROP-06, PROP-10, PROP-12, PROP-13, PROP-18, PROP-20, PROP-21,
   * PROP-24, PROP-28 */
  rig_device_t *host = rig_host();
  struct properties p = properties_of(host);
  cr_assert_str_eq(p.name, "CPU");
#if defined(__x86_64__)
  const char *levels[] = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  bool known = false;
  for (int i = 0; i < 4; i++) known |= strcmp(p.arch, levels[i]) == 0;
  cr_assert(known, "host arch %s is an x86-64 psABI level", p.arch);
  const char *expected = expected_x86_level();
  if (expected)
    cr_assert_str_eq(p.arch, expected, "the highest level the CPU and system enable");
  cr_assert_str_eq(p.instruction_set, "x86_64");
#elif defined(__aarch64__)
#if defined(__APPLE__)
  cr_assert(strcmp(p.arch, "arm64") == 0 || strcmp(p.arch, "arm64+fp16") == 0,
            "host arch %s", p.arch);
#else
  cr_assert_str_eq(p.arch, "arm64", "an arm64 host off macOS reads no features");
#endif
  cr_assert_str_eq(p.instruction_set, "arm64");
#endif
  cr_assert_null(p.bus);
  cr_assert(p.runs_on_host);
  cr_assert_eq(p.alignment, 16);
  cr_assert_geq(p.cache_bytes, 0);
  int64_t sysfs = largest_sysfs_cache();
  if (sysfs > 0)
    cr_assert_geq(p.cache_bytes, sysfs,
                  "the system states a cache of %" PRId64 " bytes, host says %" PRId64,
                  sysfs, p.cache_bytes);
  cr_assert_null(p.capability);
}

Test(devices, memory_device_properties) {
  /* PROP-06, PROP-15, PROP-18, PROP-20, PROP-21, PROP-24, PROP-28, PROP-31 */
  rig_device_t *m = open_named("MEM:23");
  struct properties p = properties_of(m);
  cr_assert_str_eq(p.name, "MEM:23");
  cr_assert_str_eq(p.arch, "memory");
  cr_assert_str_eq(p.instruction_set, "memory");
  cr_assert_null(p.bus);
  cr_assert(p.runs_on_host);
  cr_assert_eq(p.alignment, 64);
  cr_assert_eq(p.cache_bytes, rig_device_cache_bytes(rig_host()),
               "a memory device's cache is the host's");
  cr_assert_null(p.capability);
}

Test(devices, test_device_properties_are_consistent) {
  /* PROP-06, PROP-18, PROP-19, PROP-21, PROP-23 */
  for (int i = 0; i < test_device_count(); i++) {
    const char *name = test_device_name(i);
    struct properties p = properties_of(test_device(i));
    cr_assert_str_eq(p.name, name);
    cr_assert(p.arch != NULL && p.instruction_set != NULL);
    const char *set = strncmp(p.arch, "x86-64", 6) == 0  ? "x86_64"
                      : strncmp(p.arch, "arm64", 5) == 0 ? "arm64"
                                                         : p.arch;
    cr_assert_str_eq(p.instruction_set, set, "%s: instruction set of arch %s", name,
                     p.arch);
    bool on_host = strcmp(name, "CPU") == 0 || is_memory_device_name(name);
    cr_assert_eq(p.runs_on_host, on_host, "%s: runs_on_host", name);
    if (on_host) cr_assert_null(p.bus, "%s has no bus", name);
    if (p.bus) {
      unsigned domain, bus, slot, function;
      char end;
      cr_assert_eq(sscanf(p.bus, "%4x:%2x:%2x.%1x%c", &domain, &bus, &slot, &function, &end), 4,
                   "%s: bus \"%s\" is a PCI address", name, p.bus);
    }
    cr_assert(is_power_of_two(p.alignment), "%s: alignment %" PRId64, name, p.alignment);
    cr_assert_geq(p.cache_bytes, 0);
  }
}

/* Creates buffers of several sizes and kinds on d and asserts each starts on
 * d's alignment (PROP-23), and a host buffer of 128 bytes or more on 128
 * (PROP-25). */
static void assert_buffers_start_on_alignment(rig_device_t *d, bool host_addressed) {
  static const int64_t sizes[] = {1, 3, 64, 100, 128, 1000, 4096, 70000, 1 << 20};
  const rig_memory_t kinds[] = {RIG_MEMORY_DEVICE, RIG_MEMORY_MAPPED, RIG_MEMORY_PINNED};
  int64_t alignment = rig_device_alignment(d);
  for (size_t k = 0; k < 3; k++) {
    if (kinds[k] == RIG_MEMORY_PINNED && host_addressed) continue;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      rig_buffer_t *b = create_kind(d, sizes[i], kinds[k]);
      bool aligned = false;
      CHECK_OK(rig_buffer_aligned(b, 0, alignment, &aligned));
      cr_assert(aligned, "%s: a %" PRId64 "-byte buffer of kind %d starts on %" PRId64,
                rig_device_name(d), sizes[i], (int)kinds[k], alignment);
      uintptr_t at = (uintptr_t)rig_buffer_host(b);
      if (at) cr_assert_eq(at % (uintptr_t)alignment, 0);
      if (at && d == rig_host() && sizes[i] >= 128)
        cr_assert_eq(at % 128, 0, "a host buffer of %" PRId64 " bytes starts on 128",
                     sizes[i]);
      rig_buffer_unref(b);
    }
  }
}

Test(devices, buffers_start_on_the_device_alignment) { /* PROP-23, PROP-24, PROP-25 */
  assert_buffers_start_on_alignment(rig_host(), true);
  assert_buffers_start_on_alignment(open_named("MEM:24"), true);
  for (int i = 0; i < test_device_count(); i++)
    assert_buffers_start_on_alignment(test_device(i), test_device_host_addressed(i));
}

Test(devices, host_computes_on_memory_device_memory) { /* DEV-03, DEV-34, DEV-36, PROP-22 */
  rig_device_t *devices[] = {rig_host(), open_named("MEM:25")};
  for (int k = 0; k < 2; k++) {
    rig_buffer_t *b = create(devices[k], 256);
    uint8_t *bytes = rig_buffer_host(b);
    cr_assert_not_null(bytes, "%s: the host addresses its memory",
                       rig_device_name(devices[k]));
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_fill(b, 0x33, NULL, 0, &p));
    bool reached = false;
    CHECK_OK(rig_point_reached(p, &reached));
    cr_assert(reached, "the host ran the fill before submit returned");
    for (int i = 0; i < 256; i++) bytes[i] = (uint8_t)(bytes[i] + i);
    uint8_t out[256];
    CHECK_OK(rig_buffer_blit_to_bytes(b, 0, out, 256, 0, 256));
    for (int i = 0; i < 256; i++) cr_assert_eq(out[i], (uint8_t)(0x33 + i));
    rig_buffer_unref(b);
  }
}

Test(devices, properties_keep_their_values_once_closed) {
  /* PROP-01, PROP-02, LOSS-10, TL-16, TL-19, TL-20 */
  char name[32];
  rig_device_t *d = open_closable(45, name);
  rig_buffer_t *b = create(d, 4096);
  fill_and_wait(b, 9);
  rig_buffer_unref(b);
  struct properties before = properties_of(d);
  uint64_t submitted = rig_submitted(d);
  CHECK_OK(rig_close(d));
  struct properties after = properties_of(d);
  cr_assert(same_string(before.name, after.name));
  cr_assert(same_string(before.arch, after.arch));
  cr_assert(same_string(before.instruction_set, after.instruction_set));
  cr_assert(same_string(before.bus, after.bus));
  cr_assert_eq(before.runs_on_host, after.runs_on_host);
  cr_assert_eq(before.alignment, after.alignment);
  cr_assert_eq(before.cache_bytes, after.cache_bytes);
  cr_assert(before.capability == after.capability);
  /* Its timeline stays readable: close waited for every value, so the last
   * value read, which signaled answers on a lost device, is the last one
   * submitted. */
  cr_assert_eq(rig_submitted(d), submitted);
  uint64_t signaled = 0;
  CHECK_OK(rig_signaled(d, &signaled), "signaled of a closed device");
  cr_assert_eq(signaled, submitted);
  cr_assert_str_eq(rig_lost(d), "closed");
}

Test(devices, null_device_properties) { /* rig.h: NULL d answers NULL/0/false */
  cr_assert_null(rig_device_name(NULL));
  cr_assert_null(rig_device_arch(NULL));
  cr_assert_null(rig_device_instruction_set(NULL));
  cr_assert_null(rig_device_bus(NULL));
  cr_assert(!rig_device_runs_on_host(NULL));
  cr_assert_eq(rig_device_alignment(NULL), 0);
  cr_assert_eq(rig_device_cache_bytes(NULL), 0);
  cr_assert_null(rig_device_capability(NULL, "x"));
  cr_assert(!rig_device_equal(NULL, rig_host()));
}

/* ---------------------------------------------------------------------- */
/* Machines: reaches                                                        */

/* A buffer of other's own memory that a borrow can map from any device that
 * reaches it: 256 KiB, so a host buffer starts on a page (MACH-17). */
static rig_buffer_t *own_memory(rig_device_t *other) {
  return create(other, 256 * 1024);
}

/* MACH-07: d reaches other iff a borrow on d maps other's own memory. */
static void assert_reaches_matches_borrow(rig_device_t *d, rig_device_t *other) {
  bool reaches = rig_reaches(d, other);
  rig_buffer_t *b = own_memory(other);
  rig_buffer_t *borrow = NULL;
  CHECK_OK(rig_buffer_borrow(d, b, &borrow));
  cr_assert_eq(borrow != NULL, reaches, "%s %s %s, but its borrow %s",
               rig_device_name(d), reaches ? "reaches" : "does not reach",
               rig_device_name(other), borrow ? "maps it" : "is NULL");
  if (borrow) cr_assert(rig_buffer_device(borrow) == d);
  rig_buffer_unref(borrow);
  rig_buffer_unref(b);
}

Test(devices, reaches_of_host_and_memory_devices) { /* MACH-08, MACH-09, MACH-10, MACH-11 */
  rig_device_t *host = rig_host();
  rig_device_t *m = open_named("MEM:26"), *m2 = open_named("MEM:27");
  /* Asked before any buffer exists (MACH-07). */
  cr_assert(rig_reaches(host, host) && rig_reaches(m, m), "a device reaches its own memory");
  cr_assert(rig_reaches(host, m), "host reaches a memory device");
  cr_assert(rig_reaches(m, host), "a memory device maps host memory");
  cr_assert(rig_reaches(m, m2) && rig_reaches(m2, m), "memory devices reach each other");
  rig_device_t *all[] = {host, m, m2};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) assert_reaches_matches_borrow(all[i], all[j]);
}

Test(devices, reaches_of_test_devices) { /* MACH-07, MACH-08, MACH-09, MACH-11 */
  rig_device_t *host = rig_host(), *m = open_named("MEM:28");
  for (int i = 0; i < test_device_count(); i++) {
    rig_device_t *d = test_device(i);
    cr_assert(rig_reaches(d, d), "%s reaches its own memory", test_device_name(i));
    if (test_device_host_addressed(i))
      cr_assert(rig_reaches(host, d), "host reaches %s, whose memory it addresses",
                test_device_name(i));
    if (rig_reaches(d, host))
      cr_assert(rig_reaches(d, m), "%s maps host memory, so memory devices' too",
                test_device_name(i));
    assert_reaches_matches_borrow(d, host);
    assert_reaches_matches_borrow(host, d);
    assert_reaches_matches_borrow(d, m);
    assert_reaches_matches_borrow(m, d);
    for (int j = 0; j < test_device_count(); j++)
      assert_reaches_matches_borrow(d, test_device(j));
  }
}

Test(devices, memory_devices_map_host_memory_off_a_page) { /* MACH-18 */
  rig_device_t *m = open_named("MEM:29");
  /* A small host buffer, which starts on 128 bytes rather than a page, and
   * caller memory that starts off any alignment. */
  rig_buffer_t *small = create(rig_host(), 300);
  static uint8_t caller_bytes[1000];
  rig_buffer_t *caller = NULL;
  CHECK_OK(rig_buffer_of_memory(caller_bytes + 3, 500, NULL, NULL, &caller));
  rig_buffer_t *sources[] = {small, caller};
  for (int i = 0; i < 2; i++) {
    rig_buffer_t *borrow = NULL;
    CHECK_OK(rig_buffer_borrow(m, sources[i], &borrow), "borrow on MEM:29");
    cr_assert_not_null(borrow, "a memory device maps host memory that starts off a page");
    cr_assert(rig_buffer_device(borrow) == m);
    cr_assert_eq(rig_buffer_host(borrow), rig_buffer_host(sources[i]),
                 "the borrow lies over the same bytes");
    rig_buffer_unref(borrow);
    rig_buffer_unref(sources[i]);
  }
}

/* ---------------------------------------------------------------------- */
/* Budgets                                                                  */

Test(devices, initial_budgets) { /* RECL-43, RECL-44 */
  cr_assert_eq(rig_budget(rig_host()), INT64_MAX);
  cr_assert_eq(rig_budget(open_named("MEM:30")), INT64_MAX,
               "a memory device's default budget");
  rig_open_options_t opts = {.size = sizeof opts, .config = "budget=1048576"};
  rig_device_t *m = NULL;
  CHECK_OK(rig_open("MEM:31", &opts, &m), "open with a budget");
  cr_assert_eq(rig_budget(m), 1048576, "the driver's budget");
  cr_assert_eq(rig_allocated(m), 0, "a new memory device holds nothing");
}

Test(devices, allocated_counts_whole_words) { /* RECL-46 */
  rig_device_t *m = open_named("MEM:32");
  int64_t base = rig_allocated(m);
  rig_buffer_t *a = create(m, 1000);
  cr_assert_eq(rig_allocated(m), base + 1000);
  rig_buffer_t *b = create(m, 1001);
  cr_assert_eq(rig_allocated(m), base + 1000 + whole_words(1001),
               "an allocation counts by whole words");
  rig_buffer_t *empty = create(m, 0);
  cr_assert_eq(rig_allocated(m), base + 1000 + whole_words(1001),
               "an empty buffer allocates nothing");
  rig_buffer_unref(empty);
  rig_buffer_unref(b);
  cr_assert_eq(rig_allocated(m), base + 1000 + whole_words(1001),
               "collected memory counts until its cache is freed");
  CHECK_OK(rig_free_cache(m));
  cr_assert_eq(rig_allocated(m), base + 1000);
  rig_buffer_unref(a);
  CHECK_OK(rig_free_cache(m));
  cr_assert_eq(rig_allocated(m), base);

  /* A host buffer counts its whole words, and up to 112 more bytes where it
   * starts on 128. */
  rig_device_t *host = rig_host();
  int64_t host_base = rig_allocated(host);
  rig_buffer_t *h = create(host, 1000);
  int64_t grew = rig_allocated(host) - host_base;
  cr_assert(grew >= 1000 && grew <= 1000 + 112, "a 1000-byte host buffer counts %" PRId64,
            grew);
  rig_buffer_unref(h);
}

Test(devices, a_cache_limit_bounds_the_cache_but_never_live_buffers) {
  /* rig_set_cache_limit: RECL-07's cache, held to the limit as RECL-13
   * holds it to the budget, and trimmed as RECL-48 and RECL-49 trim to a
   * budget. */
  rig_device_t *m = open_named("MEM:38");
  cr_assert_eq(rig_cache_limit(m), INT64_MAX, "a memory device states no cache limit");
  CHECK_OK(rig_set_cache_limit(m, 4096));
  cr_assert_eq(rig_cache_limit(m), 4096);
  rig_buffer_t *kept = create(m, 3000), *over = create(m, 3000), *live = create(m, 64);
  rig_buffer_unref(kept);
  cr_assert_eq(rig_allocated(m), 6064, "3000 bytes within the limit stay cached");
  rig_buffer_unref(over);
  cr_assert_eq(rig_allocated(m), 3064, "3000 bytes more would pass the limit: they return to the driver");
  rig_buffer_t *again = create(m, 3000);
  cr_assert_eq(rig_allocated(m), 3064, "the cached memory is reused: no more is allocated");
  rig_buffer_unref(again);
  CHECK_OK(rig_set_cache_limit(m, 0));
  cr_assert_eq(rig_allocated(m), 64, "a lowered limit returns the cache, not a live buffer");
  cr_assert_null(rig_buffer_dead(live));
  CHECK_FAILS(RIG_EINVAL, rig_set_cache_limit(m, -1), "set_cache_limit(-1)");
  cr_assert(strstr(rig_last_error(), "-1") != NULL, "the message names the limit: %s", rig_last_error());
  CHECK_FAILS(RIG_EINVAL, rig_set_cache_limit(NULL, 0), "set_cache_limit(NULL)");
  cr_assert_eq(rig_cache_limit(m), 0, "a refused call changes nothing");
  rig_buffer_unref(live);
}

Test(devices, set_budget_frees_cache_but_never_live_buffers) {
  /* RECL-47, RECL-48, RECL-49, RECL-50 */
  rig_device_t *m = open_named("MEM:33");
  rig_buffer_t *live = create(m, 4096);
  rig_buffer_t *dropped = create(m, 4096);
  cr_assert_eq(rig_allocated(m), 8192);
  rig_buffer_unref(dropped);

  CHECK_OK(rig_set_budget(m, 4096));
  cr_assert_eq(rig_budget(m), 4096);
  cr_assert_eq(rig_allocated(m), 4096, "the dropped buffer's cached memory was freed");

  CHECK_OK(rig_set_budget(m, 0), "set_budget below the live bytes");
  cr_assert_eq(rig_budget(m), 0);
  cr_assert_eq(rig_allocated(m), 4096, "a live buffer is never freed");
  cr_assert_null(rig_buffer_dead(live));
  fill_and_wait(live, 4);

  CHECK_FAILS(RIG_EINVAL, rig_set_budget(m, -1), "set_budget(-1)");
  cr_assert_eq(rig_budget(m), 0, "a refused set_budget changes nothing");
  CHECK_OK(rig_set_budget(m, INT64_MAX), "set_budget(INT64_MAX)");
  cr_assert_eq(rig_budget(m), INT64_MAX);
  rig_buffer_unref(live);
}
