/* The sim suite: the life of asynchronous devices (rig.txt's Loss, Memory
 * after a loss, Stops and forks, Values per device, the slots and
 * timelines of Devices, and the end of a timeline in Running work).
 *
 * Devices are lost through the fault injection of sim_inject.h: fault_at
 * makes the work of a value (and every later one) never complete, and the
 * device faults when a wait watches it.  Work submitted at or after that
 * value is work the lost device never reached.  Each test opens sim names
 * of its own.
 *
 * Asserts: LOSS-01, LOSS-04, LOSS-07, LOSS-08, LOSS-09, LOSS-11, LOSS-13,
 *   LOSS-15; LMEM-05, LMEM-06, LMEM-07, LMEM-08, LMEM-09, LMEM-10, LMEM-11,
 *   LMEM-12; STOP-02, STOP-08, STOP-09, STOP-10, STOP-11, STOP-12, STOP-14,
 *   STOP-16, STOP-18, STOP-20, STOP-21, STOP-22, STOP-30; DEV-05, DEV-16,
 *   DEV-12 (a stopped device leaves its slot), PROP-03, TL-15, TL-19
 *   (signaled of a lost, stopped device reads its word); LOCAL-04,
 *   LOCAL-05; SUB-49; ERR-24, ERR-25, ERR-28, ERR-31, ERR-33.
 *
 * Not reached here:
 *   LOSS-02: needs a driver error other than a fault while memory changes
 *     (allocs_fail with raise, a later suite of fault injection).
 *   LOSS-03: test_order (hangs).  LOSS-05, LOSS-06, LOSS-10: test_devices.
 *   LOSS-12: needs a fault shared by several devices (CUDA).
 *   LOSS-14: dropped values count only for the return of memory, which
 *     STOP-02/STOP-16 observe; "never reached" is LMEM-09.
 *   LMEM-01..04: the conformance suite (which use depends on which points).
 *   LMEM-13: the sim device's memory is not the host's, so nothing of it
 *     can be exported (rig_buffer_export takes only host memory).
 *   LMEM-14: kernels writing outside their submission: rig.h has no
 *     submissions.
 *   STOP-01, STOP-07: observed through STOP-02/STOP-16 (memory returns once
 *     the stop returned and the word shows the last value), not apart.
 *   STOP-03, STOP-24..26: rig.h has no submissions that keep values.
 *   STOP-04, STOP-05: when a lost device's borrow mappings return is not
 *     observable but through the maps/frees counters, which count both
 *     mappings and memory; not asserted.
 *   STOP-06, STOP-15: "for the rest of the process" of a device that never
 *     stops is not testable in finite time beyond STOP-02.
 *   STOP-13: test of rig_fail (a process fails once: its own suite).
 *   STOP-17: PCI-driven GPUs.  STOP-19: needs a stop that raises (no such
 *     injection).  STOP-23: the child cannot observe whether rig calls the
 *     parent's driver objects; STOP-27..29: io devices and host staging at
 *     the moment of a fork are out of reach of a deterministic test.
 *   LOCAL-01..03, LOCAL-06: the conformance suite (values per device do not
 *     depend on asynchrony).
 *   DEV-07: an open while the name's stop has not returned needs a stop
 *     that blocks; the sim driver's returns at once.
 *   TL-18: the sim driver reports no dropped value past the stop's last.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "devices.h"
#include "sim_inject.h"

#define KIB ((int64_t)1 << 10)
#define MIB ((int64_t)1 << 20)

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */

static void expect_status(rig_status_t got, rig_status_t want, const char *what) {
  cr_assert_eq(got, want, "%s: got %s, want %s (%s)", what, rig_status_name(got),
               rig_status_name(want), rig_last_error());
  if (want != RIG_OK)
    cr_assert(rig_last_error()[0] != '\0', "%s: %s with an empty message", what,
              rig_status_name(got));
}

/* Asserts a call answered RIG_ELOST for device d, "NAME lost: why". */
static void expect_lost(rig_status_t got, const rig_device_t *d, const char *what) {
  expect_status(got, RIG_ELOST, what);
  cr_assert(rig_error_device() == d, "%s: the error names %s, not %s", what,
            rig_device_name(rig_error_device()), rig_device_name(d));
  char want[256];
  snprintf(want, sizeof want, "%s lost: %s", rig_device_name(d), rig_lost(d) ? rig_lost(d) : "?");
  cr_assert_str_eq(rig_last_error(), want, "ERR-33: %s", what);
}

static rig_device_t *open_sim(const char *name, const char *config) {
  rig_open_options_t opts = {sizeof opts, config};
  rig_device_t *d = NULL;
  expect_status(rig_open(name, &opts, &d), RIG_OK, name);
  cr_assert_not_null(d);
  return d;
}

static const rig_sim_inject_t *inject_of(rig_device_t *d) {
  const rig_sim_inject_t *inj = rig_device_capability(d, RIG_SIM_INJECT_KEY);
  cr_assert_not_null(inj, "%s declares no %s capability", rig_device_name(d), RIG_SIM_INJECT_KEY);
  return inj;
}

static int64_t stops_of(rig_device_t *d) {
  const rig_sim_inject_t *inj = inject_of(d);
  return inj->stops(inj->device);
}

static rig_buffer_t *create(rig_device_t *d, int64_t n, rig_memory_t kind) {
  rig_buffer_t *b = NULL;
  expect_status(rig_buffer_create(d, n, kind, &b), RIG_OK, "rig_buffer_create");
  cr_assert_not_null(b);
  return b;
}

/* A host buffer that starts on a page, so that sim devices borrow it. */
static rig_buffer_t *create_host(void) { return create(rig_host(), 64 * KIB, RIG_MEMORY_DEVICE); }

static rig_buffer_t *borrow(rig_device_t *d, rig_buffer_t *b) {
  rig_buffer_t *out = NULL;
  expect_status(rig_buffer_borrow(d, b, &out), RIG_OK, "rig_buffer_borrow");
  cr_assert_not_null(out, "%s does not borrow the buffer", rig_device_name(d));
  return out;
}

static rig_point_t submit_fill(rig_buffer_t *b, uint8_t c, const rig_point_t *waits, size_t nwaits) {
  rig_point_t p;
  expect_status(rig_buffer_submit_fill(b, c, waits, nwaits, &p), RIG_OK, "rig_buffer_submit_fill");
  return p;
}

static rig_point_t copy_all(rig_buffer_t *src, rig_buffer_t *dst) {
  rig_box_t row = rig_row(0, 0, rig_buffer_bytes(src));
  rig_point_t p;
  expect_status(rig_buffer_submit_copy(src, dst, &row, 1, NULL, 0, &p), RIG_OK, "rig_buffer_submit_copy");
  return p;
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* Makes the work of d's next value, and every later value's, fault with
 * why: work submitted from now on is work d never reaches. */
static void fault_next(rig_device_t *d, const char *why) {
  const rig_sim_inject_t *inj = inject_of(d);
  inj->fault_at(inj->device, rig_submitted(d) + 1, why);
}

/* Waits on p, a point of faulting work: d is lost with the fault's why. */
static void expect_fault_loses(rig_device_t *d, rig_point_t p, const char *why) {
  expect_lost(rig_point_wait(p), d, "a wait on faulting work");
  cr_assert_str_eq(rig_lost(d), why, "LOSS-01, ERR-25: the driver's message is the reason");
}

/* Waits (at most 5 s) until the lost device d reports its last submitted
 * value after its stop, so that it has stopped (STOP-01). */
static void await_stopped(rig_device_t *d) {
  uint64_t v = 0;
  for (int i = 0; i < 5000; i++) {
    expect_status(rig_signaled(d, &v), RIG_OK, "rig_signaled of a lost device");
    if (v >= rig_submitted(d)) return;
    sleep_ms(1);
  }
  cr_assert_fail("TL-19: %s's word shows %" PRIu64 " after its stop, not its last value %" PRIu64,
                 rig_device_name(d), v, rig_submitted(d));
}

/* Asserts a point the lost device never reached stays unreached. */
static void expect_never_reached(rig_point_t p, const rig_device_t *d) {
  expect_lost(rig_point_wait(p), d, "LMEM-09: a wait on a value the lost device never reached");
  bool reached = true;
  rig_status_t s = rig_point_reached(p, &reached);
  cr_assert(s == RIG_ELOST || (s == RIG_OK && !reached),
            "LMEM-09: rig_point_reached answers %s, reached %d", rig_status_name(s), reached);
}

static int all_bytes_are(void *bytes, int64_t n, void *context) {
  uint8_t want = *(const uint8_t *)context;
  const uint8_t *p = bytes;
  for (int64_t i = 0; i < n; i++)
    if (p[i] != want) return (int)i + 1;
  return 0;
}

static int set_bytes(void *bytes, int64_t n, void *context) {
  memset(bytes, *(const uint8_t *)context, (size_t)n);
  return 0;
}

/* Asserts that a use named call answered Lost for d, as rule says. */
static void expect_use_lost(rig_status_t got, const rig_device_t *d, const char *rule, const char *call) {
  char what[256];
  snprintf(what, sizeof what, "%s: %s", rule, call);
  expect_lost(got, d, what);
}

/* Asserts every use of memory (through b) that reads it answers Lost for d. */
static void expect_reads_lost(rig_buffer_t *b, const rig_device_t *d, const char *rule) {
  uint8_t byte;
  rig_buffer_t *scratch = create(rig_host(), rig_buffer_bytes(b), RIG_MEMORY_DEVICE);
  expect_use_lost(rig_buffer_wait(b, RIG_ACCESS_READ), d, rule, "rig_buffer_wait(Read)");
  expect_use_lost(rig_buffer_blit_to_bytes(b, 0, &byte, 1, 0, 1), d, rule, "rig_buffer_blit_to_bytes");
  expect_use_lost(rig_buffer_copy(b, scratch), d, rule, "rig_buffer_copy from it");
  rig_buffer_unref(scratch);
}

/* Asserts every use of memory (through b) that depends on every point of
 * its stamps answers Lost for d: writes, borrows, waits for Read_write,
 * holds. */
static void expect_writes_lost(rig_buffer_t *b, const rig_device_t *d, rig_device_t *other,
                               const char *rule) {
  rig_point_t p;
  rig_buffer_t *out = NULL;
  bool exclusive;
  expect_use_lost(rig_buffer_wait(b, RIG_ACCESS_READ_WRITE), d, rule, "rig_buffer_wait(Read_write)");
  expect_use_lost(rig_buffer_submit_fill(b, 1, NULL, 0, &p), d, rule, "rig_buffer_submit_fill");
  expect_use_lost(rig_claim_begin(b, &exclusive), d, rule, "rig_claim_begin");
  expect_use_lost(rig_buffer_borrow(other, b, &out), d, rule, "rig_buffer_borrow");
  rig_buffer_unref(out); /* NULL unless the borrow wrongly succeeded */
}

/* ---------------------------------------------------------------------- */
/* Loss                                                                     */

Test(lifecycle, a_loss_spreads_along_queue_waits_and_stops_there) {
  /* LOSS-01, LOSS-04, LOSS-11, LOSS-13, LOSS-15, ERR-25, ERR-28, ERR-33 */
  const char *cfg = "latency_us=20000,queue_waits=1";
  rig_device_t *a = open_sim("SIM:60", cfg);
  rig_device_t *b = open_sim("SIM:61", cfg);
  rig_device_t *c = open_sim("SIM:62", cfg);
  rig_device_t *e = open_sim("SIM:63", cfg);
  rig_device_t *idle = open_sim("SIM:64", cfg);
  rig_buffer_t *x = create(a, 4096, RIG_MEMORY_DEVICE), *y = create(a, 4096, RIG_MEMORY_DEVICE);
  rig_buffer_t *bb = create(b, 4096, RIG_MEMORY_DEVICE), *cc = create(c, 4096, RIG_MEMORY_DEVICE);
  rig_buffer_t *ee = create(e, 4096, RIG_MEMORY_DEVICE), *ii = create(idle, 4096, RIG_MEMORY_DEVICE);

  /* e's queue waits for a value a reaches; then a faults. */
  rig_point_t reached_fill = submit_fill(x, 1, NULL, 0);
  rig_point_t e_fill = submit_fill(ee, 2, &reached_fill, 1);
  expect_status(rig_point_wait(e_fill), RIG_OK, "a fill after a's reached value");
  fault_next(a, "injected: SIM:60 faulted");
  rig_point_t faulting = submit_fill(y, 3, NULL, 0);
  /* b waits for a's faulting fill, c for b's work: a chain of queue waits. */
  rig_point_t b_fill = submit_fill(bb, 4, &faulting, 1);
  rig_point_t c_fill = submit_fill(cc, 5, &b_fill, 1);
  /* e and idle submit more after a's fault, waiting on nothing of a's. */
  rig_point_t e_later = submit_fill(ee, 6, NULL, 0);
  rig_point_t idle_fill = submit_fill(ii, 7, NULL, 0);

  expect_fault_loses(a, faulting, "injected: SIM:60 faulted");
  expect_lost(rig_point_wait(c_fill), c, "LOSS-15: a wait on c, whose queue waits on b's, which waits on a's");
  cr_assert_str_eq(rig_lost(b), "SIM:60 lost", "LOSS-04, ERR-28: b waited for a value a never reached");
  cr_assert_str_eq(rig_lost(c), "SIM:61 lost", "LOSS-15: the loss spreads along the chain");
  expect_lost(rig_point_wait(b_fill), b, "a wait on b's work");

  /* LOSS-11: no other device is lost, also e whose queue waited on a value a
   * reached (LOSS-13: it stays reached). */
  expect_status(rig_point_wait(reached_fill), RIG_OK, "LOSS-13: a's value reached before the loss");
  expect_status(rig_point_wait(e_later), RIG_OK, "LOSS-11: e goes on");
  expect_status(rig_point_wait(idle_fill), RIG_OK, "LOSS-11: idle goes on");
  cr_assert_null(rig_lost(e), "LOSS-11: e is lost: %s", rig_lost(e));
  cr_assert_null(rig_lost(idle), "LOSS-11: idle is lost: %s", rig_lost(idle));
  /* A later use of a's unreached write answers Lost without losing the
   * device that tried it. */
  rig_point_t p;
  expect_lost(rig_buffer_submit_fill(ee, 8, &faulting, 1, &p), a, "a fill waiting on a's unreached value");
  cr_assert_null(rig_lost(e), "LOSS-11: a refused submit lost e: %s", rig_lost(e));
  expect_status(rig_buffer_fill(ee, 9), RIG_OK, "e after the refused submit");

  rig_buffer_t *bufs[] = {x, y, bb, cc, ee, ii};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) rig_buffer_unref(bufs[i]);
  rig_device_t *devs[] = {a, b, c, e, idle};
  for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) expect_status(rig_close(devs[i]), RIG_OK, "rig_close");
}

/* ---------------------------------------------------------------------- */
/* Memory after a loss                                                      */

Test(lifecycle, uses_of_the_lost_device_and_its_memory_answer_lost) {
  /* LMEM-05, LMEM-06, LMEM-07, ERR-24 */
  rig_device_t *d = open_sim("SIM:65", "latency_us=0");
  rig_device_t *other = open_sim("SIM:66", "latency_us=0");
  rig_buffer_t *mem = create(d, 4096, RIG_MEMORY_DEVICE);
  rig_buffer_t *mem_on_other = borrow(other, mem);
  rig_buffer_t *host = create_host();
  rig_buffer_t *host_on_d = borrow(d, host);
  expect_status(rig_buffer_fill(mem, 1), RIG_OK, "rig_buffer_fill");

  fault_next(d, "injected fault");
  rig_buffer_t *scratch = create(d, 4096, RIG_MEMORY_DEVICE);
  expect_fault_loses(d, submit_fill(scratch, 2, NULL, 0), "injected fault");

  /* LMEM-05: uses of the device. */
  rig_buffer_t *out = NULL;
  expect_lost(rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &out), d, "LMEM-05: create on the lost device");
  cr_assert_null(out);
  expect_lost(rig_buffer_borrow(d, host, &out), d, "LMEM-05: borrow on the lost device");
  cr_assert_null(out);

  /* LMEM-06: uses of its memory, through its own buffers and a borrow on
   * another device, reads included (its last write was reached). */
  expect_reads_lost(mem, d, "LMEM-06: a read of the lost device's memory");
  expect_writes_lost(mem, d, other, "LMEM-06: a write of the lost device's memory");
  rig_point_t p;
  expect_lost(rig_buffer_submit_fill(mem_on_other, 3, NULL, 0, &p), d,
              "LMEM-06: a fill through a borrow on another device");
  rig_buffer_t *elsewhere = create(other, 4096, RIG_MEMORY_DEVICE);
  rig_box_t row = rig_row(0, 0, 4096);
  expect_lost(rig_buffer_submit_copy(mem_on_other, elsewhere, &row, 1, NULL, 0, &p), d,
              "LMEM-06: a copy from a borrow on another device");

  /* LMEM-07: uses of a borrow on the lost device; the memory it borrows
   * stays usable otherwise (d's work never used it). */
  expect_lost(rig_buffer_submit_fill(host_on_d, 4, NULL, 0, &p), d, "LMEM-07: a fill of a borrow on d");
  expect_lost(rig_buffer_wait(host_on_d, RIG_ACCESS_READ), d, "LMEM-07: a wait on a borrow on d");
  expect_status(rig_buffer_fill(host, 5), RIG_OK, "the host's own buffer is not d's");
  cr_assert_null(rig_lost(other), "LOSS-11: other is lost: %s", rig_lost(other));

  rig_buffer_t *bufs[] = {mem, mem_on_other, host, host_on_d, scratch, elsewhere};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) rig_buffer_unref(bufs[i]);
  expect_status(rig_close(d), RIG_OK, "rig_close");
}

Test(lifecycle, memory_written_at_an_unreached_point_is_lost_for_good) {
  /* LMEM-08, LMEM-09, LMEM-10, TL-19 */
  rig_device_t *d = open_sim("SIM:67", "latency_us=0");
  rig_device_t *other = open_sim("SIM:68", "latency_us=0");
  rig_device_t *third = open_sim("SIM:69", "latency_us=0");
  rig_buffer_t *y = create(other, 4096, RIG_MEMORY_DEVICE);
  expect_status(rig_buffer_fill(y, 1), RIG_OK, "rig_buffer_fill");
  rig_buffer_t *y_on_d = borrow(d, y);

  /* d's copy engine writes other's memory at a value d never reaches. */
  fault_next(d, "injected fault");
  rig_point_t unreached = submit_fill(y_on_d, 2, NULL, 0);
  cr_assert(rig_point_device(unreached) == d, "the fill of a borrow on d runs on d");
  expect_fault_loses(d, unreached, "injected fault");

  expect_never_reached(unreached, d);
  expect_reads_lost(y, d, "LMEM-08, LMEM-10: a read of memory whose last write d never reached");
  expect_writes_lost(y, d, third, "LMEM-08, LMEM-10: a write of memory whose last write d never reached");
  cr_assert_null(rig_lost(other), "the memory's own device stays live");

  /* For good: also once d has stopped and its word passed the value. */
  expect_status(rig_close(d), RIG_OK, "rig_close");
  await_stopped(d);
  uint64_t word = 0;
  expect_status(rig_signaled(d, &word), RIG_OK, "rig_signaled");
  cr_assert_geq(word, rig_point_value(unreached), "the stopped device's word passed the value");
  expect_never_reached(unreached, d);
  expect_reads_lost(y, d, "LMEM-10: a read after d stopped");
  expect_writes_lost(y, d, third, "LMEM-10: a write after d stopped");

  rig_buffer_unref(y_on_d);
  rig_buffer_unref(y);
}

Test(lifecycle, memory_only_read_is_lost_for_writes_until_the_stop) {
  /* LMEM-11, LMEM-12 */
  rig_device_t *d = open_sim("SIM:70", "latency_us=0");
  rig_device_t *other = open_sim("SIM:71", "latency_us=0");
  rig_buffer_t *host = create_host();
  uint8_t before = 0x33;
  expect_status(rig_buffer_fill(host, before), RIG_OK, "rig_buffer_fill");
  rig_buffer_t *host_on_d = borrow(d, host);
  rig_buffer_t *dev = create(d, rig_buffer_bytes(host), RIG_MEMORY_DEVICE);

  /* d reads the host buffer at a value it never reaches. */
  fault_next(d, "injected fault");
  rig_point_t unreached = copy_all(host_on_d, dev);
  cr_assert(rig_point_device(unreached) == d, "the copy through d's borrow runs on d");
  expect_fault_loses(d, unreached, "injected fault");

  /* LMEM-11: reads succeed. */
  expect_status(rig_buffer_wait(host, RIG_ACCESS_READ), RIG_OK, "LMEM-11: wait for Read");
  expect_status(rig_buffer_read(host, 1, all_bytes_are, &before), RIG_OK, "LMEM-11: rig_buffer_read");
  uint8_t got[16];
  expect_status(rig_buffer_blit_to_bytes(host, 0, got, 16, 0, 16), RIG_OK, "LMEM-11: blit_to_bytes");
  cr_assert_eq(got[0], before);
  /* ... and uses that depend on every point answer Lost. */
  uint8_t after = 0x44;
  rig_export_t *exported = NULL;
  expect_writes_lost(host, d, other, "LMEM-11: a use of memory d only read");
  expect_lost(rig_buffer_write(host, 1, set_bytes, &after), d, "LMEM-11: rig_buffer_write");
  expect_lost(rig_buffer_export(host, 1, &exported), d, "LMEM-11: rig_buffer_export");
  cr_assert_null(exported);

  /* LMEM-12: once d has stopped, its unreached reads count as done. */
  expect_status(rig_close(d), RIG_OK, "rig_close");
  await_stopped(d);
  expect_status(rig_buffer_wait(host, RIG_ACCESS_READ_WRITE), RIG_OK, "LMEM-12: wait for Read_write");
  expect_status(rig_buffer_write(host, 1, set_bytes, &after), RIG_OK, "LMEM-12: rig_buffer_write");
  expect_status(rig_buffer_read(host, 1, all_bytes_are, &after), RIG_OK, "the write's bytes");
  rig_buffer_t *host_on_other = NULL;
  expect_status(rig_buffer_borrow(other, host, &host_on_other), RIG_OK, "LMEM-12: a borrow");
  rig_buffer_unref(host_on_other);
  expect_status(rig_buffer_fill(host, 0x55), RIG_OK, "LMEM-12: a fill");

  rig_buffer_unref(host_on_d);
  rig_buffer_unref(dev);
  rig_buffer_unref(host);
}

/* ---------------------------------------------------------------------- */
/* Stops                                                                    */

/* Opens name and loses it to a fault; its stop is owed. */
static rig_device_t *open_and_lose(const char *name) {
  rig_device_t *d = open_sim(name, "latency_us=0");
  rig_buffer_t *b = create(d, 4096, RIG_MEMORY_DEVICE);
  fault_next(d, "injected fault");
  expect_fault_loses(d, submit_fill(b, 1, NULL, 0), "injected fault");
  rig_buffer_unref(b);
  return d;
}

Test(lifecycle, a_stop_is_owed_until_close_runs_it_once) {
  /* STOP-08, STOP-09, STOP-11, STOP-12, STOP-14, STOP-18 */
  rig_device_t *d = open_and_lose("SIM:72");
  cr_assert_eq(stops_of(d), 0, "STOP-11: the call that lost the device ran its stop");
  rig_buffer_t *out = NULL;
  expect_lost(rig_buffer_create(d, 64, RIG_MEMORY_DEVICE, &out), d, "a use of the lost device");
  expect_lost(rig_point_wait(rig_point_make(d, rig_submitted(d))), d, "a wait on the lost device");
  cr_assert_eq(stops_of(d), 0, "STOP-12: a use answering Lost ran the stop");
  expect_status(rig_free_cache(d), RIG_OK, "rig_free_cache");
  cr_assert_eq(stops_of(d), 0, "STOP-14: reclamation ran the stop");

  expect_status(rig_close(d), RIG_OK, "rig_close of a lost device");
  cr_assert_eq(stops_of(d), 1, "STOP-09, STOP-18: close returned without running the owed stop");
  cr_assert_str_eq(rig_lost(d), "injected fault", "close keeps a lost device's reason");
  expect_status(rig_close(d), RIG_OK, "a second rig_close");
  rig_device_t *fresh = open_sim("SIM:72", "latency_us=0");
  cr_assert(!rig_device_equal(fresh, d));
  cr_assert_eq(stops_of(d), 1, "STOP-08: the driver's stop is called once");
  expect_status(rig_close(fresh), RIG_OK, "rig_close");
}

Test(lifecycle, an_open_of_the_name_runs_the_owed_stop) {
  /* STOP-10, DEV-05, LOSS-09 */
  rig_device_t *d = open_and_lose("SIM:73");
  cr_assert_eq(stops_of(d), 0);
  rig_device_t *fresh = open_sim("SIM:73", "latency_us=0");
  cr_assert(fresh != d && !rig_device_equal(fresh, d), "LOSS-09: a reopened name is a new device");
  cr_assert_eq(stops_of(d), 1, "STOP-10, DEV-05: the open ran the lost device's owed stop");
  cr_assert_eq(stops_of(fresh), 0);
  cr_assert_null(rig_lost(fresh));
  cr_assert_str_eq(rig_lost(d), "injected fault");
  expect_status(rig_close(d), RIG_OK, "rig_close of the old device");
  cr_assert_eq(stops_of(d), 1, "STOP-08: the stop ran once");
  rig_buffer_t *b = create(fresh, 4096, RIG_MEMORY_DEVICE);
  expect_status(rig_buffer_fill(b, 1), RIG_OK, "the new device runs work");
  rig_buffer_unref(b);
  expect_status(rig_close(fresh), RIG_OK, "rig_close");
}

/* Values per device: counts the drops, and the stops the device's driver
 * had run when its value was dropped. */
struct local_probe {
  rig_device_t *device;
  const rig_sim_inject_t *inj;
  int inits, drops;
  int64_t stops_at_drop;
};

static void *probe_init(rig_device_t *d, void *context) {
  struct local_probe *probe = context;
  probe->inits++;
  return d;
}

static void probe_drop(void *value, void *context) {
  struct local_probe *probe = context;
  if (value == probe->device) {
    probe->drops++;
    probe->stops_at_drop = probe->inj->stops(probe->inj->device);
  }
}

Test(lifecycle, memory_and_values_return_only_after_the_stop) {
  /* STOP-02, STOP-16, LOCAL-04, LOCAL-05 */
  rig_device_t *d = open_sim("SIM:74", "latency_us=0");
  struct local_probe probe = {d, inject_of(d), 0, 0, -1};
  rig_local_key_t *key = rig_local_new_key(probe_init, probe_drop, &probe);
  cr_assert_not_null(key);
  void *value = NULL;
  expect_status(rig_local_get(key, d, &value), RIG_OK, "rig_local_get");
  cr_assert(value == d && probe.inits == 1);

  int64_t start = rig_allocated(d);
  rig_buffer_t *b = create(d, MIB, RIG_MEMORY_DEVICE);
  expect_status(rig_buffer_fill(b, 1), RIG_OK, "rig_buffer_fill");
  int64_t held = rig_allocated(d);
  cr_assert_geq(held - start, MIB);
  fault_next(d, "injected fault");
  expect_fault_loses(d, submit_fill(b, 2, NULL, 0), "injected fault");
  rig_buffer_unref(b);
  expect_status(rig_free_cache(d), RIG_OK, "rig_free_cache");
  cr_assert_eq(rig_allocated(d), held, "STOP-02: collected memory returned before the stop");
  cr_assert_eq(probe.drops, 0, "LOCAL-04: the value dropped before the stop");

  expect_status(rig_close(d), RIG_OK, "rig_close");
  cr_assert_eq(probe.drops, 1, "LOCAL-05: close returned before the value was dropped");
  cr_assert_eq(probe.stops_at_drop, 1, "LOCAL-04: the value dropped before the driver's stop returned");

  /* STOP-16: once stopped, the collected memory returns (at the latest at
   * the next call that moves it). */
  await_stopped(d);
  expect_status(rig_free_cache(d), RIG_OK, "rig_free_cache");
  cr_assert_eq(rig_allocated(d), start, "STOP-16: a stopped device's memory did not return");
}

/* ---------------------------------------------------------------------- */
/* Slots and timelines                                                      */

static bool same_slot(const rig_device_t *a, const rig_device_t *b) {
  return rig_point_make(a, 0).bits == rig_point_make(b, 0).bits;
}

Test(lifecycle, a_reopened_name_takes_a_slot_whose_values_continue, .timeout = 60) {
  /* DEV-16, TL-15, DEV-12, PROP-03 */
  /* Slots are taken round-robin: a marker device holds the slot before the
   * sim device's.  Once a later open takes the marker's slot again and is
   * closed, the next open takes the sim device's old slot. */
  rig_device_t *marker = NULL;
  expect_status(rig_open("MEM:75", NULL, &marker), RIG_OK, "rig_open");
  rig_device_t *old = open_sim("SIM:75", "latency_us=0");
  expect_status(rig_close(marker), RIG_OK, "rig_close");

  rig_buffer_t *b = create(old, 4096, RIG_MEMORY_DEVICE);
  for (int i = 0; i < 5; i++) expect_status(rig_buffer_fill(b, (uint8_t)i), RIG_OK, "rig_buffer_fill");
  rig_buffer_unref(b);
  uint64_t old_last = rig_submitted(old);
  cr_assert_geq(old_last, 5, "the sim device's fills moved its timeline");
  rig_point_t old_point = rig_point_make(old, old_last);
  expect_status(rig_close(old), RIG_OK, "rig_close");
  await_stopped(old);

  /* Memory devices cycle through the slots until one takes the marker's. */
  bool found = false;
  for (int i = 0; i < 70000 && !found; i++) {
    rig_device_t *m = NULL;
    rig_status_t s = rig_open("MEM:76", NULL, &m);
    if (s != RIG_OK) cr_assert_fail("open %d: %s: %s", i, rig_status_name(s), rig_last_error());
    found = same_slot(m, marker);
    if (!found && same_slot(m, old))
      cr_assert_fail("open %d took the old device's slot before the marker's", i);
    s = rig_close(m);
    if (s != RIG_OK) cr_assert_fail("close %d: %s", i, rig_last_error());
  }
  cr_assert(found, "no open took the marker's slot again");

  rig_device_t *fresh = open_sim("SIM:75", "latency_us=0");
  cr_assert(!rig_device_equal(fresh, old));
  cr_assert(same_slot(fresh, old), "DEV-12: the stopped device that holds no memory kept its slot "
                                   "(or slots are no longer taken round-robin)");
  cr_assert_eq(rig_submitted(fresh), old_last, "TL-15: the reused slot's timeline continues");
  cr_assert_null(rig_point_device(old_point), "PROP-03: a point of the old device names the slot's new device");
  rig_buffer_t *nb = create(fresh, 4096, RIG_MEMORY_DEVICE);
  rig_point_t p = submit_fill(nb, 9, NULL, 0);
  cr_assert(rig_point_device(p) == fresh);
  cr_assert_gt(rig_point_value(p), old_last, "DEV-16: values go on past the old device's");
  expect_status(rig_point_wait(p), RIG_OK, "rig_point_wait");
  rig_buffer_unref(nb);
  expect_status(rig_close(fresh), RIG_OK, "rig_close");
}

Test(lifecycle, a_submit_past_the_last_value_loses_the_device) {
  /* SUB-49 */
  const uint64_t first_after = RIG_POINT_VALUE_MAX - 7; /* 140737488355320 */
  rig_device_t *d = open_sim("SIM:77", "latency_us=0,first_after=140737488355320");
  cr_assert_eq(rig_submitted(d), first_after, "the timeline starts after first_after");
  rig_buffer_t *b = create(d, 4096, RIG_MEMORY_DEVICE);
  rig_point_t p = {0};
  for (int i = 0; i < 7; i++) p = submit_fill(b, (uint8_t)i, NULL, 0);
  cr_assert_eq(rig_point_value(p), RIG_POINT_VALUE_MAX);
  expect_status(rig_point_wait(p), RIG_OK, "a wait on the last value");
  cr_assert_eq(rig_submitted(d), RIG_POINT_VALUE_MAX);

  rig_point_t past;
  expect_lost(rig_buffer_submit_fill(b, 9, NULL, 0, &past), d, "SUB-49: a submit past 2^47 - 1");
  cr_assert_not_null(rig_lost(d), "SUB-49: the device is lost");
  cr_assert(rig_lost(d)[0] != '\0', "SUB-49: the loss has a reason");
  cr_assert_eq(rig_submitted(d), RIG_POINT_VALUE_MAX, "SUB-49: the submit assigned a value");
  expect_status(rig_point_wait(p), RIG_OK, "LOSS-13: the last value stays reached");
  rig_buffer_unref(b);
  expect_status(rig_close(d), RIG_OK, "rig_close");
}

/* ---------------------------------------------------------------------- */
/* Fork                                                                     */

/* What the child of a fork checks; returns the number of the first check
 * that failed (0 if none), after printing it. */
static int child_checks(rig_device_t *live, rig_device_t *closed, rig_buffer_t *b, rig_point_t reached) {
#define CHILD_CHECK(n, cond)                                                     \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "child check %d failed: %s (%s)\n", n, #cond, rig_last_error()); \
      return n;                                                                   \
    }                                                                             \
  } while (0)
  CHILD_CHECK(1, rig_lost(live) && strcmp(rig_lost(live), "forked") == 0);   /* LOSS-07, STOP-20, ERR-31 */
  CHILD_CHECK(2, rig_lost(closed) && strcmp(rig_lost(closed), "closed") == 0); /* STOP-21 */
  CHILD_CHECK(3, rig_point_wait(reached) == RIG_ELOST);                        /* STOP-22 */
  CHILD_CHECK(4, rig_error_device() == live);
  CHILD_CHECK(5, rig_buffer_fill(b, 2) == RIG_ELOST);                          /* STOP-22 */
  rig_device_t *own = NULL;
  rig_open_options_t opts = {sizeof opts, "latency_us=0"};
  CHILD_CHECK(6, rig_open("SIM:80", &opts, &own) == RIG_OK);                   /* STOP-30 */
  CHILD_CHECK(7, rig_lost(own) == NULL);
  rig_buffer_t *mine = NULL;
  CHILD_CHECK(8, rig_buffer_create(own, 4096, RIG_MEMORY_DEVICE, &mine) == RIG_OK);
  CHILD_CHECK(9, rig_buffer_fill(mine, 3) == RIG_OK);
  uint8_t byte = 0;
  CHILD_CHECK(10, rig_buffer_blit_to_bytes(mine, 100, &byte, 1, 0, 1) == RIG_OK && byte == 3);
  rig_buffer_unref(mine);
  CHILD_CHECK(11, rig_close(own) == RIG_OK);
  return 0;
#undef CHILD_CHECK
}

Test(lifecycle, a_child_of_fork_sees_sim_devices_lost) {
  /* LOSS-07, STOP-20, STOP-21, STOP-22, STOP-30, ERR-31 */
  rig_device_t *live = open_sim("SIM:78", "latency_us=0");
  rig_device_t *closed = open_sim("SIM:79", "latency_us=0");
  expect_status(rig_close(closed), RIG_OK, "rig_close");
  rig_buffer_t *b = create(live, 4096, RIG_MEMORY_DEVICE);
  rig_point_t p = submit_fill(b, 1, NULL, 0);
  expect_status(rig_point_wait(p), RIG_OK, "rig_point_wait");

  fflush(NULL);
  pid_t pid = fork();
  cr_assert_neq(pid, -1, "fork failed");
  if (pid == 0) _exit(child_checks(live, closed, b, p));
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status), "the child did not exit (status %d)", status);
  cr_assert_eq(WEXITSTATUS(status), 0, "the child's check %d failed (see its stderr)", WEXITSTATUS(status));

  /* The parent's device goes on. */
  cr_assert_null(rig_lost(live));
  expect_status(rig_buffer_fill(b, 4), RIG_OK, "the parent's device after the fork");
  rig_buffer_unref(b);
  expect_status(rig_close(live), RIG_OK, "rig_close");
}
