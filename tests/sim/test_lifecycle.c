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
 *   LMEM-12; STOP-02, STOP-04, STOP-05, STOP-08, STOP-09, STOP-10, STOP-11,
 *   STOP-12, STOP-14, STOP-16, STOP-18, STOP-20, STOP-21, STOP-22, STOP-30; DEV-05, DEV-16,
 *   DEV-12 (a stopped device leaves its slot), PROP-03, TL-15, TL-19
 *   (signaled of a lost, stopped device reads its word); LOCAL-04 (also
 *   against a get racing the stop's drops),
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
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "devices.h"
#include "helpers.h"

#define KIB ((int64_t)1 << 10)
#define MIB ((int64_t)1 << 20)

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */

/* A host buffer that starts on a page, so that sim devices borrow it. */
static rig_buffer_t *create_host(void) { return create(rig_host(), 64 * KIB); }

/* Waits on p, a point of faulting work: d is lost with the fault's why. */
static void expect_fault_loses(rig_device_t *d, rig_point_t p, const char *why) {
  CHECK_LOST(d, rig_point_wait(p), "a wait on faulting work");
  cr_assert_str_eq(rig_lost(d), why, "LOSS-01, ERR-25: the driver's message is the reason");
}

/* Asserts a point the lost device never reached stays unreached. */
static void expect_never_reached(rig_point_t p, const rig_device_t *d) {
  CHECK_LOST(d, rig_point_wait(p), "LMEM-09: a wait on a value the lost device never reached");
  bool reached = true;
  rig_status_t s = rig_point_reached(p, &reached);
  cr_assert(s == RIG_ELOST || (s == RIG_OK && !reached),
            "LMEM-09: rig_point_reached answers %s, reached %d", rig_status_name(s), reached);
}

/* Asserts that a use named call answered Lost for d, as rule says. */
static void expect_use_lost(rig_status_t got, const rig_device_t *d, const char *rule, const char *call) {
  CHECK_LOST(d, got, "%s: %s", rule, call);
}

/* Asserts every use of memory (through b) that reads it answers Lost for d. */
static void expect_reads_lost(rig_buffer_t *b, const rig_device_t *d, const char *rule) {
  uint8_t byte;
  rig_buffer_t *scratch = create(rig_host(), rig_buffer_bytes(b));
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
  rig_device_t *a = open_with("SIM:60", cfg);
  rig_device_t *b = open_with("SIM:61", cfg);
  rig_device_t *c = open_with("SIM:62", cfg);
  rig_device_t *e = open_with("SIM:63", cfg);
  rig_device_t *idle = open_with("SIM:64", cfg);
  rig_buffer_t *x = create(a, 4096), *y = create(a, 4096);
  rig_buffer_t *bb = create(b, 4096), *cc = create(c, 4096);
  rig_buffer_t *ee = create(e, 4096), *ii = create(idle, 4096);

  /* e's queue waits for a value a reaches; then a faults. */
  rig_point_t reached_fill = submit_fill(x, 1);
  rig_point_t e_fill = submit_fill_after(ee, 2, &reached_fill, 1);
  CHECK_OK(rig_point_wait(e_fill), "a fill after a's reached value");
  sim_fault_next(a, "injected: SIM:60 faulted");
  rig_point_t faulting = submit_fill(y, 3);
  /* b waits for a's faulting fill, c for b's work: a chain of queue waits. */
  rig_point_t b_fill = submit_fill_after(bb, 4, &faulting, 1);
  rig_point_t c_fill = submit_fill_after(cc, 5, &b_fill, 1);
  /* e and idle submit more after a's fault, waiting on nothing of a's. */
  rig_point_t e_later = submit_fill(ee, 6);
  rig_point_t idle_fill = submit_fill(ii, 7);

  expect_fault_loses(a, faulting, "injected: SIM:60 faulted");
  CHECK_LOST(c, rig_point_wait(c_fill),
             "LOSS-15: a wait on c, whose queue waits on b's, which waits on a's");
  cr_assert_str_eq(rig_lost(b), "SIM:60 lost", "LOSS-04, ERR-28: b waited for a value a never reached");
  cr_assert_str_eq(rig_lost(c), "SIM:61 lost", "LOSS-15: the loss spreads along the chain");
  CHECK_LOST(b, rig_point_wait(b_fill), "a wait on b's work");

  /* LOSS-11: no other device is lost, also e whose queue waited on a value a
   * reached (LOSS-13: it stays reached). */
  CHECK_OK(rig_point_wait(reached_fill), "LOSS-13: a's value reached before the loss");
  CHECK_OK(rig_point_wait(e_later), "LOSS-11: e goes on");
  CHECK_OK(rig_point_wait(idle_fill), "LOSS-11: idle goes on");
  cr_assert_null(rig_lost(e), "LOSS-11: e is lost: %s", rig_lost(e));
  cr_assert_null(rig_lost(idle), "LOSS-11: idle is lost: %s", rig_lost(idle));
  /* A later use of a's unreached write answers Lost without losing the
   * device that tried it. */
  rig_point_t p;
  CHECK_LOST(a, rig_buffer_submit_fill(ee, 8, &faulting, 1, &p),
             "a fill waiting on a's unreached value");
  cr_assert_null(rig_lost(e), "LOSS-11: a refused submit lost e: %s", rig_lost(e));
  CHECK_OK(rig_buffer_fill(ee, 9), "e after the refused submit");

  rig_buffer_t *bufs[] = {x, y, bb, cc, ee, ii};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) rig_buffer_unref(bufs[i]);
  rig_device_t *devs[] = {a, b, c, e, idle};
  for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) CHECK_OK(rig_close(devs[i]));
}

/* ---------------------------------------------------------------------- */
/* Memory after a loss                                                      */

Test(lifecycle, uses_of_the_lost_device_and_its_memory_answer_lost) {
  /* LMEM-05, LMEM-06, LMEM-07, ERR-24 */
  rig_device_t *d = open_with("SIM:65", "latency_us=0");
  rig_device_t *other = open_with("SIM:66", "latency_us=0");
  rig_buffer_t *mem = create(d, 4096);
  rig_buffer_t *mem_on_other = borrow(other, mem);
  rig_buffer_t *host = create_host();
  rig_buffer_t *host_on_d = borrow(d, host);
  CHECK_OK(rig_buffer_fill(mem, 1));

  sim_fault_next(d, "injected fault");
  rig_buffer_t *scratch = create(d, 4096);
  expect_fault_loses(d, submit_fill(scratch, 2), "injected fault");

  /* LMEM-05: uses of the device. */
  rig_buffer_t *out = NULL;
  CHECK_LOST(d, rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &out),
             "LMEM-05: create on the lost device");
  cr_assert_null(out);
  CHECK_LOST(d, rig_buffer_borrow(d, host, &out), "LMEM-05: borrow on the lost device");
  cr_assert_null(out);

  /* LMEM-06: uses of its memory, through its own buffers and a borrow on
   * another device, reads included (its last write was reached). */
  expect_reads_lost(mem, d, "LMEM-06: a read of the lost device's memory");
  expect_writes_lost(mem, d, other, "LMEM-06: a write of the lost device's memory");
  rig_point_t p;
  CHECK_LOST(d, rig_buffer_submit_fill(mem_on_other, 3, NULL, 0, &p),
             "LMEM-06: a fill through a borrow on another device");
  rig_buffer_t *elsewhere = create(other, 4096);
  rig_box_t row = rig_row(0, 0, 4096);
  CHECK_LOST(d, rig_buffer_submit_copy(mem_on_other, elsewhere, &row, 1, NULL, 0, &p),
             "LMEM-06: a copy from a borrow on another device");

  /* LMEM-07: uses of a borrow on the lost device; the memory it borrows
   * stays usable otherwise (d's work never used it). */
  CHECK_LOST(d, rig_buffer_submit_fill(host_on_d, 4, NULL, 0, &p),
             "LMEM-07: a fill of a borrow on d");
  CHECK_LOST(d, rig_buffer_wait(host_on_d, RIG_ACCESS_READ), "LMEM-07: a wait on a borrow on d");
  CHECK_LOST(d, rig_buffer_borrow(other, host_on_d, &out), "LMEM-07: a borrow of a borrow on d");
  cr_assert_null(out);
  CHECK_LOST(d, rig_buffer_borrow(rig_host(), host_on_d, &out),
             "LMEM-07: a borrow of a borrow on d back on its memory's device");
  cr_assert_null(out);
  rig_buffer_t *on_other = create(other, 4096);
  CHECK_LOST(d, rig_buffer_submit_copy(host_on_d, on_other, &row, 1, NULL, 0, &p),
             "LMEM-07: a copy from a borrow on d");
  uint8_t byte;
  CHECK_LOST(d, rig_buffer_blit_to_bytes(host_on_d, 0, &byte, 1, 0, 1), "LMEM-07: a blit from a borrow on d");
  rig_export_t *exported = NULL;
  CHECK_LOST(d, rig_buffer_export(host_on_d, 1, &exported), "LMEM-07: an export of a borrow on d");
  cr_assert_null(exported);
  rig_buffer_unref(on_other);
  CHECK_OK(rig_buffer_fill(host, 5), "the host's own buffer is not d's");
  cr_assert_null(rig_lost(other), "LOSS-11: other is lost: %s", rig_lost(other));

  rig_buffer_t *bufs[] = {mem, mem_on_other, host, host_on_d, scratch, elsewhere};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) rig_buffer_unref(bufs[i]);
  CHECK_OK(rig_close(d));
}

Test(lifecycle, memory_written_at_an_unreached_point_is_lost_for_good) {
  /* LMEM-08, LMEM-09, LMEM-10, TL-19 */
  rig_device_t *d = open_with("SIM:67", "latency_us=0");
  rig_device_t *other = open_with("SIM:68", "latency_us=0");
  rig_device_t *third = open_with("SIM:69", "latency_us=0");
  rig_buffer_t *y = create(other, 4096);
  CHECK_OK(rig_buffer_fill(y, 1));
  rig_buffer_t *y_on_d = borrow(d, y);

  /* d's copy engine writes other's memory at a value d never reaches. */
  sim_fault_next(d, "injected fault");
  rig_point_t unreached = submit_fill(y_on_d, 2);
  cr_assert(rig_point_device(unreached) == d, "the fill of a borrow on d runs on d");
  expect_fault_loses(d, unreached, "injected fault");

  expect_never_reached(unreached, d);
  expect_reads_lost(y, d, "LMEM-08, LMEM-10: a read of memory whose last write d never reached");
  expect_writes_lost(y, d, third, "LMEM-08, LMEM-10: a write of memory whose last write d never reached");
  cr_assert_null(rig_lost(other), "the memory's own device stays live");

  /* For good: also once d has stopped and its word passed the value. */
  CHECK_OK(rig_close(d));
  await_stopped(d);
  uint64_t word = 0;
  CHECK_OK(rig_signaled(d, &word));
  cr_assert_geq(word, rig_point_value(unreached), "the stopped device's word passed the value");
  expect_never_reached(unreached, d);
  expect_reads_lost(y, d, "LMEM-10: a read after d stopped");
  expect_writes_lost(y, d, third, "LMEM-10: a write after d stopped");

  rig_buffer_unref(y_on_d);
  rig_buffer_unref(y);
}

Test(lifecycle, memory_only_read_is_lost_for_writes_until_the_stop) {
  /* LMEM-11, LMEM-12 */
  rig_device_t *d = open_with("SIM:70", "latency_us=0");
  rig_device_t *other = open_with("SIM:71", "latency_us=0");
  rig_buffer_t *host = create_host();
  uint8_t before = 0x33;
  CHECK_OK(rig_buffer_fill(host, before));
  rig_buffer_t *host_on_d = borrow(d, host);
  rig_buffer_t *dev = create(d, rig_buffer_bytes(host));

  /* d reads the host buffer at a value it never reaches. */
  sim_fault_next(d, "injected fault");
  rig_point_t unreached = submit_copy_all(host_on_d, dev);
  cr_assert(rig_point_device(unreached) == d, "the copy through d's borrow runs on d");
  expect_fault_loses(d, unreached, "injected fault");

  /* LMEM-11: reads succeed. */
  CHECK_OK(rig_buffer_wait(host, RIG_ACCESS_READ), "LMEM-11: wait for Read");
  CHECK_OK(rig_buffer_read(host, 1, all_bytes_are, &before), "LMEM-11: rig_buffer_read");
  uint8_t got[16];
  CHECK_OK(rig_buffer_blit_to_bytes(host, 0, got, 16, 0, 16), "LMEM-11: blit_to_bytes");
  cr_assert_eq(got[0], before);
  /* ... and uses that depend on every point answer Lost. */
  uint8_t after = 0x44;
  rig_export_t *exported = NULL;
  expect_writes_lost(host, d, other, "LMEM-11: a use of memory d only read");
  CHECK_LOST(d, rig_buffer_write(host, 1, set_bytes, &after), "LMEM-11: rig_buffer_write");
  CHECK_LOST(d, rig_buffer_export(host, 1, &exported), "LMEM-11: rig_buffer_export");
  cr_assert_null(exported);

  /* LMEM-12: once d has stopped, its unreached reads count as done. */
  CHECK_OK(rig_close(d));
  await_stopped(d);
  CHECK_OK(rig_buffer_wait(host, RIG_ACCESS_READ_WRITE), "LMEM-12: wait for Read_write");
  CHECK_OK(rig_buffer_write(host, 1, set_bytes, &after), "LMEM-12: rig_buffer_write");
  CHECK_OK(rig_buffer_read(host, 1, all_bytes_are, &after), "the write's bytes");
  rig_buffer_t *host_on_other = NULL;
  CHECK_OK(rig_buffer_borrow(other, host, &host_on_other), "LMEM-12: a borrow");
  rig_buffer_unref(host_on_other);
  CHECK_OK(rig_buffer_fill(host, 0x55), "LMEM-12: a fill");

  rig_buffer_unref(host_on_d);
  rig_buffer_unref(dev);
  rig_buffer_unref(host);
}

/* ---------------------------------------------------------------------- */
/* Stops                                                                    */

/* Opens name and loses it to a fault; its stop is owed. */
static rig_device_t *open_and_lose(const char *name) {
  rig_device_t *d = open_with(name, "latency_us=0");
  rig_buffer_t *b = create(d, 4096);
  sim_fault_next(d, "injected fault");
  expect_fault_loses(d, submit_fill(b, 1), "injected fault");
  rig_buffer_unref(b);
  return d;
}

Test(lifecycle, a_stop_is_owed_until_close_runs_it_once) {
  /* STOP-08, STOP-09, STOP-11, STOP-12, STOP-14, STOP-18 */
  rig_device_t *d = open_and_lose("SIM:72");
  cr_assert_eq(sim_stops(d), 0, "STOP-11: the call that lost the device ran its stop");
  rig_buffer_t *out = NULL;
  CHECK_LOST(d, rig_buffer_create(d, 64, RIG_MEMORY_DEVICE, &out), "a use of the lost device");
  CHECK_LOST(d, rig_point_wait(rig_point_make(d, rig_submitted(d))), "a wait on the lost device");
  cr_assert_eq(sim_stops(d), 0, "STOP-12: a use answering Lost ran the stop");
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(sim_stops(d), 0, "STOP-14: reclamation ran the stop");

  CHECK_OK(rig_close(d), "rig_close of a lost device");
  cr_assert_eq(sim_stops(d), 1, "STOP-09, STOP-18: close returned without running the owed stop");
  cr_assert_str_eq(rig_lost(d), "injected fault", "close keeps a lost device's reason");
  CHECK_OK(rig_close(d), "a second rig_close");
  rig_device_t *fresh = open_with("SIM:72", "latency_us=0");
  cr_assert(!rig_device_equal(fresh, d));
  cr_assert_eq(sim_stops(d), 1, "STOP-08: the driver's stop is called once");
  CHECK_OK(rig_close(fresh));
}

Test(lifecycle, an_open_of_the_name_runs_the_owed_stop) {
  /* STOP-10, DEV-05, LOSS-09 */
  rig_device_t *d = open_and_lose("SIM:73");
  cr_assert_eq(sim_stops(d), 0);
  rig_device_t *fresh = open_with("SIM:73", "latency_us=0");
  cr_assert(fresh != d && !rig_device_equal(fresh, d), "LOSS-09: a reopened name is a new device");
  cr_assert_eq(sim_stops(d), 1, "STOP-10, DEV-05: the open ran the lost device's owed stop");
  cr_assert_eq(sim_stops(fresh), 0);
  cr_assert_null(rig_lost(fresh));
  cr_assert_str_eq(rig_lost(d), "injected fault");
  CHECK_OK(rig_close(d), "rig_close of the old device");
  cr_assert_eq(sim_stops(d), 1, "STOP-08: the stop ran once");
  rig_buffer_t *b = create(fresh, 4096);
  CHECK_OK(rig_buffer_fill(b, 1), "the new device runs work");
  rig_buffer_unref(b);
  CHECK_OK(rig_close(fresh));
}

Test(lifecycle, a_device_stopped_when_its_stop_returns_gives_its_mappings_back_then) {
  /* STOP-04: the faulted sim runs no work when close calls its stop, so
   * it writes its last value before the stop returns (DRV-92). */
  rig_device_t *d = open_with("SIM:76", "latency_us=0");
  rig_buffer_t *host = create_host(), *borrowed = NULL, *b = create(d, 4096);
  CHECK_OK(rig_buffer_borrow(d, host, &borrowed));
  cr_assert_eq(sim_live_mappings(d), 1, "the borrow maps the host buffer once");
  sim_fault_next(d, "injected fault");
  expect_fault_loses(d, submit_fill(b, 2), "injected fault");
  CHECK_OK(rig_close(d));
  cr_assert_eq(sim_stops(d), 1);
  cr_assert_eq(sim_live_mappings(d), 0, "STOP-04: the lost device's mapping outlived its stop, the borrow still held");
  rig_buffer_unref(borrowed);
  rig_buffer_unref(b);
  rig_buffer_unref(host);
}

Test(lifecycle, a_device_stopped_after_its_stop_gives_its_mappings_back_at_the_next_reclaim) {
  /* STOP-05: a fill of 1.5 s outlasts the hang bound of 100 ms, so the
   * wait loses the device while the fill still runs, and the device stops
   * after close's stop returns; its mapping must stay while the work may
   * run, and go back at the first reclamation once it stopped. */
  rig_device_t *d = open_with("SIM:84", "latency_us=0,hang_ms=100");
  rig_buffer_t *host = create_host(), *borrowed = NULL, *b = create(d, 4096);
  CHECK_OK(rig_buffer_borrow(d, host, &borrowed));
  const rig_sim_inject_t *inj = sim_inject(d);
  inj->set_latency_us(inj->device, 1500000);
  CHECK_LOST(d, rig_point_wait(submit_fill(b, 3)), "a wait past the hang bound");
  CHECK_OK(rig_close(d));
  cr_assert_eq(sim_live_mappings(d), 1, "the mapping went back while the lost device's work may still run");
  await_stopped(d);
  cr_assert_eq(sim_live_mappings(d), 1, "the mapping went back before any call that returns it");
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(sim_live_mappings(d), 0, "STOP-05: the first free_cache after the stop kept the mapping");
  rig_buffer_unref(borrowed);
  rig_buffer_unref(b);
  rig_buffer_unref(host);
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
  rig_device_t *d = open_with("SIM:74", "latency_us=0");
  struct local_probe probe = {d, sim_inject(d), 0, 0, -1};
  rig_local_key_t *key = rig_local_new_key(probe_init, probe_drop, &probe);
  cr_assert_not_null(key);
  void *value = NULL;
  CHECK_OK(rig_local_get(key, d, &value));
  cr_assert(value == d && probe.inits == 1);

  int64_t start = rig_allocated(d);
  rig_buffer_t *b = create(d, MIB);
  CHECK_OK(rig_buffer_fill(b, 1));
  int64_t held = rig_allocated(d);
  cr_assert_geq(held - start, MIB);
  sim_fault_next(d, "injected fault");
  expect_fault_loses(d, submit_fill(b, 2), "injected fault");
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), held, "STOP-02: collected memory returned before the stop");
  cr_assert_eq(probe.drops, 0, "LOCAL-04: the value dropped before the stop");

  CHECK_OK(rig_close(d));
  cr_assert_eq(probe.drops, 1, "LOCAL-05: close returned before the value was dropped");
  cr_assert_eq(probe.stops_at_drop, 1, "LOCAL-04: the value dropped before the driver's stop returned");

  /* STOP-16: once stopped, the collected memory returns (at the latest at
   * the next call that moves it). */
  await_stopped(d);
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), start, "STOP-16: a stopped device's memory did not return");
}

/* A get whose init is still running when the stop's drops begin: the
 * first key's drop lets the init end and waits for the get to return, so
 * the value lands while the drops run, before the stop is marked done. */
struct racing_get {
  rig_device_t *device;
  rig_local_key_t *late_key;
  sem_t in_init, init_may_end, get_returned;
  rig_status_t status;
  int late_drops;
};

static int wait_5s(sem_t *s) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  while (sem_timedwait(s, &until) != 0)
    if (errno != EINTR) return -1;
  return 0;
}

static void *early_init(rig_device_t *d, void *context) {
  (void)context;
  return d;
}

static void early_drop(void *value, void *context) {
  (void)value;
  struct racing_get *race = context;
  sem_post(&race->init_may_end);
  wait_5s(&race->get_returned);
}

static void *late_init(rig_device_t *d, void *context) {
  struct racing_get *race = context;
  sem_post(&race->in_init);
  wait_5s(&race->init_may_end);
  return d;
}

static void late_drop(void *value, void *context) {
  struct racing_get *race = context;
  if (value == race->device) race->late_drops++;
}

static void *late_get(void *arg) {
  struct racing_get *race = arg;
  void *value = NULL;
  race->status = rig_local_get(race->late_key, race->device, &value);
  sem_post(&race->get_returned);
  return NULL;
}

Test(lifecycle, a_value_made_while_the_drops_run_is_dropped) {
  /* LOCAL-04 */
  struct racing_get race = {0};
  race.device = open_with("SIM:83", "latency_us=0");
  sem_init(&race.in_init, 0, 0);
  sem_init(&race.init_may_end, 0, 0);
  sem_init(&race.get_returned, 0, 0);
  rig_local_key_t *early = rig_local_new_key(early_init, early_drop, &race);
  race.late_key = rig_local_new_key(late_init, late_drop, &race);
  cr_assert(early && race.late_key);
  void *value = NULL;
  CHECK_OK(rig_local_get(early, race.device, &value));

  pthread_t getter;
  cr_assert_eq(pthread_create(&getter, NULL, late_get, &race), 0);
  cr_assert_eq(wait_5s(&race.in_init), 0, "the late get never ran its init");
  rig_buffer_t *b = create(race.device, 4096);
  sim_fault_next(race.device, "injected fault");
  expect_fault_loses(race.device, submit_fill(b, 1), "injected fault");
  rig_buffer_unref(b);
  CHECK_OK(rig_close(race.device));
  pthread_join(getter, NULL);

  cr_assert_eq(race.late_drops, 1, "LOCAL-04: a value whose init ended while the stop's drops ran was dropped %d times",
               race.late_drops);
  cr_assert_eq(race.status, RIG_ELOST, "the late get answered %d, not Lost, for a value it could not keep",
               (int)race.status);
}

/* ---------------------------------------------------------------------- */
/* Slots and timelines                                                      */

Test(lifecycle, a_reopened_name_takes_a_slot_whose_values_continue, .timeout = 60) {
  /* DEV-16, TL-15, DEV-12, PROP-03, DEV-41 */
  /* Slots are taken round-robin: a marker device holds the slot before the
   * sim device's.  Once a later open takes the marker's slot again and is
   * closed, the next open takes the sim device's old slot. */
  /* The closed devices are compared by their points' slots: the cycle
   * below retires and releases their records (rig.h, Handles), and their
   * kept pointers answer as closed devices (DEV-41). */
  rig_device_t *marker = NULL;
  CHECK_OK(rig_open("MEM:75", NULL, &marker));
  rig_device_t *old = open_with("SIM:75", "latency_us=0");
  rig_point_t marker_slot = rig_point_make(marker, 0), old_slot = rig_point_make(old, 0);
  CHECK_OK(rig_close(marker));

  rig_buffer_t *b = create(old, 4096);
  for (int i = 0; i < 5; i++) CHECK_OK(rig_buffer_fill(b, (uint8_t)i));
  rig_buffer_unref(b);
  uint64_t old_last = rig_submitted(old);
  cr_assert_geq(old_last, 5, "the sim device's fills moved its timeline");
  rig_point_t old_point = rig_point_make(old, old_last);
  CHECK_OK(rig_close(old));
  await_stopped(old);

  /* Memory devices cycle through the slots until one takes the marker's. */
  bool found = false;
  for (int i = 0; i < 70000 && !found; i++) {
    rig_device_t *m = NULL;
    rig_status_t s = rig_open("MEM:76", NULL, &m);
    if (s != RIG_OK) cr_assert_fail("open %d: %s: %s", i, rig_status_name(s), rig_last_error());
    found = rig_point_make(m, 0).bits == marker_slot.bits;
    if (!found && rig_point_make(m, 0).bits == old_slot.bits)
      cr_assert_fail("open %d took the old device's slot before the marker's", i);
    s = rig_close(m);
    if (s != RIG_OK) cr_assert_fail("close %d: %s", i, rig_last_error());
  }
  cr_assert(found, "no open took the marker's slot again");
  assert_kept_pointer_closed(marker);
  assert_kept_pointer_closed(old);

  rig_device_t *fresh = open_with("SIM:75", "latency_us=0");
  cr_assert(rig_point_make(fresh, 0).bits == old_slot.bits, "DEV-12: the stopped device that holds no memory kept its slot "
                                   "(or slots are no longer taken round-robin)");
  cr_assert_eq(rig_submitted(fresh), old_last, "TL-15: the reused slot's timeline continues");
  cr_assert_null(rig_point_device(old_point), "PROP-03: a point of the old device names the slot's new device");
  rig_buffer_t *nb = create(fresh, 4096);
  rig_point_t p = submit_fill(nb, 9);
  cr_assert(rig_point_device(p) == fresh);
  cr_assert_gt(rig_point_value(p), old_last, "DEV-16: values go on past the old device's");
  CHECK_OK(rig_point_wait(p));
  rig_buffer_unref(nb);
  CHECK_OK(rig_close(fresh));
}

Test(lifecycle, a_submit_past_the_last_value_loses_the_device) {
  /* SUB-49 */
  const uint64_t first_after = RIG_POINT_VALUE_MAX - 7; /* 140737488355320 */
  rig_device_t *d = open_with("SIM:77", "latency_us=0,first_after=140737488355320");
  cr_assert_eq(rig_submitted(d), first_after, "the timeline starts after first_after");
  rig_buffer_t *b = create(d, 4096);
  rig_point_t p = {0};
  for (int i = 0; i < 7; i++) p = submit_fill(b, (uint8_t)i);
  cr_assert_eq(rig_point_value(p), RIG_POINT_VALUE_MAX);
  CHECK_OK(rig_point_wait(p), "a wait on the last value");
  cr_assert_eq(rig_submitted(d), RIG_POINT_VALUE_MAX);

  rig_point_t past;
  CHECK_LOST(d, rig_buffer_submit_fill(b, 9, NULL, 0, &past), "SUB-49: a submit past 2^47 - 1");
  cr_assert_not_null(rig_lost(d), "SUB-49: the device is lost");
  cr_assert(rig_lost(d)[0] != '\0', "SUB-49: the loss has a reason");
  cr_assert_eq(rig_submitted(d), RIG_POINT_VALUE_MAX, "SUB-49: the submit assigned a value");
  CHECK_OK(rig_point_wait(p), "LOSS-13: the last value stays reached");
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
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
  rig_device_t *live = open_with("SIM:78", "latency_us=0");
  rig_device_t *closed = open_with("SIM:79", "latency_us=0");
  CHECK_OK(rig_close(closed));
  rig_buffer_t *b = create(live, 4096);
  rig_point_t p = submit_fill(b, 1);
  CHECK_OK(rig_point_wait(p));

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
  CHECK_OK(rig_buffer_fill(b, 4), "the parent's device after the fork");
  rig_buffer_unref(b);
  CHECK_OK(rig_close(live));
}
