/* Lifetime: loss, memory after a loss, hangs, errors and failure, forks.
 *
 * Sim devices (SIM:40..) lose themselves through the faults their
 * injection capability (sim_inject.h) injects: a fault at a value, a hang,
 * failed submits and commits, sleeps and allocations that raise.  Their
 * driver holds submitted work until commit_every values or a wait commits
 * it, so work submitted and not waited on has not run.  Every test opens
 * names of its own; fail and fork tests rely on Criterion running each
 * test in a process of its own.
 *
 * Asserts:
 *   Loss:         LOSS-01 LOSS-02 LOSS-03 LOSS-04 LOSS-06 LOSS-07 LOSS-08
 *                 LOSS-10 LOSS-11 LOSS-13 LOSS-15
 *   Memory after a loss: LMEM-01 LMEM-03 LMEM-04 LMEM-05 LMEM-06 LMEM-07
 *                 LMEM-08 LMEM-09 LMEM-10 LMEM-11 LMEM-12
 *   Hangs:        HANG-06 HANG-07
 *   Stops and forks: STOP-20 STOP-21 STOP-22 STOP-23 STOP-30
 *   Errors:       ERR-01 ERR-16 ERR-17 ERR-24 ERR-25 ERR-27 ERR-28 ERR-30
 *                 ERR-31 ERR-33 ERR-34 ERR-36 ERR-37 ERR-38 ERR-39
 *                 ERR-42
 *   Devices:      DEV-06
 *   Order:        ORD-18
 *   Copying:      COPY-26 (staging a lost device wrote serves later copies)
 *   Drivers:      DRV-08 DRV-16 DRV-84
 *   Reclamation:  RECL-54 (an allocation the driver answers with none)
 *
 * Not reached here, and why:
 *   LOSS-05 ERR-29: close's loss is test_stops.c's.  LOSS-09: reopening,
 *     test_stops.c.  LOSS-12: needs a fault shared by several devices of
 *     one driver (CUDA); the sim has none.  LOSS-14: dropped values count
 *     for memory only: test_stops.c asserts memory returns after the stop.
 *   LMEM-02: unordered refs need Submission, which rig.h lacks.
 *   LMEM-13: reads and writes through an exported array are the caller's
 *     own loads and stores of rig_export_bytes's memory: no rig call runs
 *     that could check a loss, so no test can see one not made.
 *   LMEM-14: a kernel writing outside its submission needs Submission.
 *   HANG-01..05: when the clock starts and restarts is timing no test
 *     observes without racing the bound; the loss to the bound (HANG-06)
 *     and the absence of loss without a wait (HANG-07) are asserted.
 *   STOP-24..29: submissions (Submission.make's keep), io devices and
 *     staging memory a parent thread copies through at the fork need
 *     Submission, io devices or a racing thread.
 *   ERR-02..15 ERR-18..23 ERR-32: interruptions, signal masks, reclamation
 *     errors and a C heap with no room are not injected by the sim; some
 *     are the sim suite's.  ERR-26: C has no exception constructors; the
 *     reason is the driver error's text (asserted under DRV-16).
 *   ERR-40: an open racing fail is a race no test orders.
 *   ERR-41 STOP-13: fail runs no stop: test_stops.c.  ERR-35: lost
 *     answering while a wait is in flight: test_claims.c.
 */
#define _GNU_SOURCE

#include <criterion/criterion.h>
#include <rig/rig.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "helpers.h"

#define KIB ((int64_t)1024)

/* ---- Sim devices ------------------------------------------------------- */

/* A sim whose work waits for a commit (a wait) before it runs. */
static rig_device_t *open_sim(const char *name) { return open_with(name, "commit_every=8"); }

/* Closes the lost device d and returns once it has stopped: its stop has
 * returned and it reports its last submitted value (STOP-01). */
static void close_until_stopped(rig_device_t *d) {
  CHECK_OK(rig_close(d));
  await_stopped(d);
}

/* ---- Loss by a fault --------------------------------------------------- */

Test(loss, a_fault_loses_the_device_with_the_drivers_message) {
  /* LOSS-01 LOSS-08 LOSS-10 LOSS-13 ERR-24 ERR-25 ERR-33 ERR-34 LMEM-05 LMEM-06 LMEM-09 */
  rig_device_t *d = open_sim("SIM:40");
  rig_buffer_t *b = create(d, 4 * KIB);
  rig_point_t done = submit_fill(b, 1);
  CHECK_OK(rig_point_wait(done));
  char arch[64];
  snprintf(arch, sizeof arch, "%s", rig_device_arch(d));
  int64_t alignment = rig_device_alignment(d), budget = rig_budget(d);

  sim_fault_next(d, "ECC error");
  rig_point_t faulted = submit_fill(b, 2);
  cr_assert_null(rig_lost(d), "nothing has found the fault yet");
  CHECK_LOST(d, rig_point_wait(faulted));
  assert_lost_with(d, "ECC error");

  /* Reached values stay reached; the others are never reached. */
  bool reached = false;
  CHECK_OK(rig_point_reached(done, &reached));
  cr_assert(reached, "a value reached before the loss stays reached");
  CHECK_OK(rig_point_wait(done));
  CHECK_LOST(d, rig_point_reached(faulted, &reached));
  CHECK_LOST(d, rig_point_wait(faulted));

  /* Every use of the device and of its memory. */
  rig_buffer_t *none = NULL;
  CHECK_LOST(d, rig_buffer_create(d, 64, RIG_MEMORY_DEVICE, &none));
  cr_assert_null(none);
  CHECK_LOST(d, rig_buffer_fill(b, 3));
  CHECK_LOST(d, rig_buffer_wait(b, RIG_ACCESS_READ));
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  CHECK_LOST(d, rig_buffer_borrow(d, h, &none));

  /* Properties keep their values; the loss is final. */
  cr_assert_str_eq(rig_device_name(d), "SIM:40");
  cr_assert_str_eq(rig_device_arch(d), arch);
  cr_assert_eq(rig_device_alignment(d), alignment);
  cr_assert_eq(rig_budget(d), budget);
  close_until_stopped(d);
  assert_lost_with(d, "ECC error");
  CHECK_LOST(d, rig_point_reached(faulted, &reached));  /* even with the word past it */
  CHECK_LOST(d, rig_point_wait(faulted));
  rig_buffer_unref(h);
  rig_buffer_unref(b);
}

/* Asserts that reached answers Lost for p of the lost device d, its answer
 * false: an error writes no true (LMEM-09). */
static void expect_lost_unreached(rig_device_t *d, rig_point_t p) {
  bool reached = true;
  CHECK_LOST(d, rig_point_reached(p, &reached));
  cr_assert_not(reached, "reached answered Lost with true for a value %s never reached", rig_device_name(d));
}

Test(loss, an_unreached_point_of_a_lost_device_stays_unreached) { /* LMEM-09 */
  rig_device_t *d = open_sim("SIM:39");
  rig_buffer_t *b = create(d, 4 * KIB);
  rig_point_t faulted = lose_by_fault(d, b, "ECC error");
  expect_lost_unreached(d, faulted);
  close_until_stopped(d);
  cr_assert_geq(rig_submitted(d), rig_point_value(faulted));
  expect_lost_unreached(d, faulted); /* with the word past it */
  CHECK_LOST(d, rig_point_wait(faulted));
  rig_buffer_unref(b);
}

Test(loss, memory_whose_last_write_was_lost_answers_lost_for_every_use) { /* LMEM-01 LMEM-08 LMEM-10 */
  rig_device_t *d = open_sim("SIM:41");
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  rig_buffer_t *other = create(rig_host(), 64 * KIB);
  rig_buffer_t *on_sim = borrow(d, h);
  rig_buffer_t *s = create(d, 64 * KIB);
  sim_fault_next(d, "page fault");
  /* The sim writes the host's memory through the borrow at a value it never
   * reaches. */
  rig_point_t copy = submit_copy_all(s, on_sim);
  cr_assert(rig_device_equal(rig_point_device(copy), d), "the sim copies into its borrow");
  CHECK_LOST(d, rig_point_wait(copy));

  for (int stopped = 0; stopped < 2; stopped++) {
    char bytes[16];
    CHECK_LOST(d, rig_buffer_read(h, 1, read_nothing, NULL));
    CHECK_LOST(d, rig_buffer_wait(h, RIG_ACCESS_READ));
    bool reached = true;
    CHECK_LOST(d, rig_buffer_reached(h, RIG_ACCESS_READ, &reached));
    CHECK_LOST(d, rig_buffer_blit_to_bytes(h, 0, bytes, sizeof bytes, 0, sizeof bytes));
    CHECK_LOST(d, rig_buffer_copy(h, other));
    CHECK_LOST(d, rig_buffer_write(h, 1, read_nothing, NULL));
    CHECK_LOST(d, rig_buffer_wait(h, RIG_ACCESS_READ_WRITE));
    CHECK_LOST(d, rig_buffer_fill(h, 0));
    CHECK_LOST(d, rig_buffer_blit_from_bytes(bytes, sizeof bytes, 0, h, 0, sizeof bytes));
    bool exclusive = false;
    CHECK_LOST(d, rig_claim_begin(h, &exclusive));
    /* A Read claim: rig_buffer_wait under it answers the loss. */
    rig_claim_t c = rig_buffer_claim(h, RIG_ACCESS_READ);
    cr_assert_eq(c, RIG_CLAIM_WAIT, "a claim on memory a lost device wrote: %d", (int)c);
    CHECK_LOST(d, rig_buffer_wait(h, RIG_ACCESS_READ));
    rig_buffer_release(h);
    /* For the rest of the process: also once the device has stopped. */
    if (!stopped) close_until_stopped(d);
  }
  cr_assert_null(rig_lost(rig_host()));
  CHECK_OK(rig_buffer_fill(other, 1));
  rig_buffer_unref(s);
  rig_buffer_unref(on_sim);
  rig_buffer_unref(other);
  rig_buffer_unref(h);
}

Test(loss, memory_only_read_by_the_lost_device_refuses_writes_until_it_stopped) {
  /* LMEM-01 LMEM-03 LMEM-04 LMEM-07 LMEM-11 LMEM-12 */
  rig_device_t *d = open_sim("SIM:42");
  rig_device_t *mem = NULL;
  CHECK_OK(rig_memory_device("MEM:80", &mem));
  rig_buffer_t *r = create(rig_host(), 64 * KIB);
  rig_buffer_t *other = create(rig_host(), 64 * KIB);
  rig_buffer_t *on_sim = borrow(d, r);
  rig_buffer_t *s = create(d, 64 * KIB);
  CHECK_OK(rig_buffer_fill(r, 0x5a));
  sim_fault_next(d, "engine reset");
  rig_point_t copy = submit_copy_all(on_sim, s);  /* the sim reads r */
  CHECK_LOST(d, rig_point_wait(copy));

  /* Reads depend on last writes only: r's was the host's. */
  char bytes[16];
  CHECK_OK(rig_buffer_read(r, 1, read_nothing, NULL));
  CHECK_OK(rig_buffer_wait(r, RIG_ACCESS_READ));
  CHECK_OK(rig_buffer_blit_to_bytes(r, 0, bytes, sizeof bytes, 0, sizeof bytes));
  cr_assert_eq(bytes[0], 0x5a);
  CHECK_OK(rig_buffer_copy(r, other));
  cr_assert_eq(rig_buffer_claim(r, RIG_ACCESS_READ), RIG_CLAIMED);
  rig_buffer_release(r);
  /* A borrow on the lost device answers the loss for any use. */
  CHECK_LOST(d, rig_buffer_wait(on_sim, RIG_ACCESS_READ));

  /* Uses that depend on every point answer the loss until the stop. */
  for (int stopped = 0; stopped < 2; stopped++) {
    rig_status_t want = stopped ? RIG_OK : RIG_ELOST;
    rig_export_t *e = NULL;
    rig_buffer_t *b = NULL;
    bool exclusive = false;
    rig_status_t got[7];
    const char *what[] = {"write", "wait Read_write", "fill", "copy into it", "claim_begin", "borrow", "export"};
    got[0] = rig_buffer_write(r, 1, read_nothing, NULL);
    got[1] = rig_buffer_wait(r, RIG_ACCESS_READ_WRITE);
    got[2] = rig_buffer_fill(r, 1);
    got[3] = rig_buffer_copy(other, r);
    got[4] = rig_claim_begin(r, &exclusive);
    if (got[4] == RIG_OK) CHECK_OK(rig_claim_end(r));
    got[5] = rig_buffer_borrow(mem, r, &b);
    rig_buffer_unref(b);
    got[6] = rig_buffer_export(r, 1, &e);  /* last: takes the memory out of the claims */
    rig_export_unref(e);
    for (size_t k = 0; k < sizeof got / sizeof got[0]; k++)
      cr_expect_eq(got[k], want, "%s of memory the lost device read, %s its stop: %s, want %s", what[k],
                   stopped ? "after" : "before", rig_status_name(got[k]), rig_status_name(want));
    if (!stopped) {
      CHECK_LOST(d, rig_buffer_wait(r, RIG_ACCESS_READ_WRITE));
      close_until_stopped(d);
    }
  }
  rig_buffer_unref(s);
  rig_buffer_unref(on_sim);
  rig_buffer_unref(other);
  rig_buffer_unref(r);
}

/* Staging memory (COPY-19..COPY-29) is rig's own: a copy writes its bytes
 * there before anything reads them.  A lost device's write into it that
 * the device never reached (a blit it ran to the host) leaves no copy of
 * another device failing: staging serves other copies while the lost
 * device may still run work (with other allocations) and, once it has
 * stopped, that allocation again (LOSS-11: a device that does not wait on
 * the lost device's unreached values stays live). */
Test(loss, staging_a_lost_device_wrote_serves_other_devices_copies) { /* LOSS-11 COPY-26 */
  rig_device_t *d = open_sim("SIM:46"), *other = open_sim("SIM:47");
  enum { n = 64 * 1024 };
  static char from[n], to[n];
  for (int i = 0; i < n; i++) from[i] = (char)(i * 7 + 1);
  rig_buffer_t *s = create(d, n), *t = create(other, n);
  sim_fault_next(d, "page fault");
  /* The sim copies s into staging at a value it never reaches. */
  CHECK_LOST(d, rig_buffer_blit_to_bytes(s, 0, to, n, 0, n));
  for (int stopped = 0; stopped < 2; stopped++) {
    for (int round = 0; round < 3; round++) {
      CHECK_OK(rig_buffer_blit_from_bytes(from, n, 0, t, 0, n), "into the other device, round %d", round);
      memset(to, 0, n);
      CHECK_OK(rig_buffer_blit_to_bytes(t, 0, to, n, 0, n), "out of the other device, round %d", round);
      cr_assert(memcmp(from, to, n) == 0, "the other device's copies move every byte");
    }
    if (!stopped) close_until_stopped(d);
  }
  cr_assert_null(rig_lost(other));
  rig_buffer_unref(s);
  rig_buffer_unref(t);
  CHECK_OK(rig_close(other));
}

/* ---- Spread along queue waits -------------------------------------------- */

Test(loss, a_loss_spreads_along_queue_waits) { /* LOSS-04 LOSS-15 ERR-28 */
  rig_device_t *a = open_sim("SIM:43"), *b = open_sim("SIM:44"), *c = open_sim("SIM:45");
  rig_buffer_t *sa = create(a, 4 * KIB), *sb = create(b, 4 * KIB), *sc = create(c, 4 * KIB);
  sim_fault_next(a, "bus error");
  rig_point_t pa = submit_fill(sa, 1);
  /* b's copy reads a's unreached write: its queue waits on a's word; c's
   * copy waits on b's in turn. */
  rig_point_t pb = submit_copy_all(sa, sb);
  cr_assert(rig_device_equal(rig_point_device(pb), b), "SIM:44 copies from its peer");
  rig_point_t pc = submit_copy_all(sb, sc);
  cr_assert(rig_device_equal(rig_point_device(pc), c), "SIM:45 copies from its peer");

  CHECK_LOST(a, rig_point_wait(pa));
  assert_lost_with(a, "bus error");
  CHECK_LOST(c, rig_point_wait(pc));
  assert_lost_with(b, "SIM:43 lost");
  assert_lost_with(c, "SIM:44 lost");
  CHECK_LOST(b, rig_point_wait(pb));
  rig_buffer_unref(sc);
  rig_buffer_unref(sb);
  rig_buffer_unref(sa);
}

Test(loss, a_loss_spreads_to_no_device_that_does_not_wait_for_it) { /* LOSS-11 LOSS-13 */
  rig_device_t *a = open_sim("SIM:46"), *e = open_sim("SIM:47"), *f = open_sim("SIM:48");
  rig_buffer_t *sa = create(a, 4 * KIB), *se = create(e, 4 * KIB), *sf = create(f, 4 * KIB);
  /* e's queue waits on a value a reaches before its loss. */
  submit_fill(sa, 4);
  rig_point_t pe = submit_copy_all(sa, se);
  CHECK_OK(rig_point_wait(pe));
  CHECK_OK(rig_buffer_fill(sf, 6));
  lose_by_fault(a, sa, "overheated");

  cr_assert_null(rig_lost(e), "e waited only on a value a reached");
  cr_assert_null(rig_lost(f), "f never waited on a");
  CHECK_OK(rig_point_wait(pe));
  CHECK_OK(rig_buffer_fill(se, 7));
  CHECK_OK(rig_buffer_copy(se, sf));
  char bytes[4];
  CHECK_OK(rig_buffer_blit_to_bytes(sf, 0, bytes, sizeof bytes, 0, sizeof bytes));
  cr_assert_eq(bytes[0], 7);
  rig_buffer_unref(sf);
  rig_buffer_unref(se);
  rig_buffer_unref(sa);
}

/* ---- Hangs ------------------------------------------------------------- */

Test(loss, a_hang_loses_the_device_only_while_a_wait_watches) { /* HANG-06 HANG-07 LOSS-03 ERR-27 */
  rig_device_t *d = open_with("SIM:49", "hang_ms=200,commit_every=8");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *b = create(d, 4 * KIB);
  inj->hang_at(inj->device, rig_submitted(d) + 1);
  rig_point_t p = submit_fill(b, 1);
  bool reached = true;
  CHECK_OK(rig_point_reached(p, &reached));  /* commits the work; checks no clock */
  cr_assert_not(reached);
  nap_ms(400);
  cr_assert_null(rig_lost(d), "no device is lost to a hang while nothing waits for it");
  CHECK_OK(rig_point_reached(p, &reached));
  cr_assert_not(reached);
  cr_assert_null(rig_lost(d));
  CHECK_LOST(d, rig_point_wait(p));
  assert_lost_with(d, "no progress for 200 ms");
  rig_buffer_unref(b);
}

/* ---- Driver errors --------------------------------------------------------- */

Test(loss, a_failed_submit_loses_the_device_and_its_stamps_take_the_point) { /* DRV-08 LOSS-01 ORD-18 ERR-25 */
  rig_device_t *d = open_sim("SIM:50");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  rig_buffer_t *on_sim = borrow(d, h);
  rig_buffer_t *s = create(d, 64 * KIB);
  uint64_t before = rig_submitted(d);
  inj->fail_submits(inj->device, 1);
  rig_box_t row = rig_row(0, 0, 64 * KIB);
  rig_point_t p;
  CHECK_LOST(d, rig_buffer_submit_copy(s, on_sim, &row, 1, NULL, 0, &p));
  assert_lost_with(d, "injected: submit failed");
  cr_assert_eq(rig_submitted(d), before + 1, "the value was assigned");
  CHECK_LOST(d, rig_point_wait(rig_point_make(d, before + 1)));
  /* The host's memory took the point as its last write. */
  CHECK_LOST(d, rig_buffer_read(h, 1, read_nothing, NULL));
  rig_buffer_unref(s);
  rig_buffer_unref(on_sim);
  rig_buffer_unref(h);
}

Test(loss, a_failed_commit_loses_the_device) { /* DRV-08 LOSS-01 ERR-25 */
  rig_device_t *d = open_sim("SIM:51");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *b = create(d, 4 * KIB);
  rig_point_t p = submit_fill(b, 1);
  inj->fail_commits(inj->device, 1);
  CHECK_LOST(d, rig_point_wait(p));
  assert_lost_with(d, "injected: commit failed");
  rig_buffer_unref(b);
}

Test(loss, a_sleep_that_raises_another_error_loses_nothing) { /* DRV-84 ERR-01 */
  rig_device_t *d = open_with("SIM:52", "latency_us=20000,commit_every=8");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *b = create(d, 4 * KIB);
  inj->sleeps_raise(inj->device, 3);
  CHECK_OK(rig_point_wait(submit_fill(b, 1)));
  cr_assert_null(rig_lost(d));
  CHECK_OK(rig_buffer_fill(b, 2));
  rig_buffer_unref(b);
}

Test(loss, an_allocation_that_raises_loses_the_device) { /* DRV-16 LOSS-02 ERR-16 ERR-17 */
  rig_device_t *d = open_sim("SIM:53");
  const rig_sim_inject_t *inj = sim_inject(d);
  inj->allocs_fail(inj->device, 1, 1);
  rig_buffer_t *b = NULL;
  CHECK_LOST(d, rig_buffer_create(d, 4 * KIB, RIG_MEMORY_DEVICE, &b));
  cr_assert_null(b);
  assert_lost_with(d, "injected: alloc raised");
}

Test(loss, an_allocation_answered_with_none_loses_nothing) { /* RECL-54 */
  rig_device_t *d = open_sim("SIM:54");
  const rig_sim_inject_t *inj = sim_inject(d);
  inj->allocs_fail(inj->device, 4, 0);  /* the first try and the three rounds' */
  rig_buffer_t *b = NULL;
  CHECK_NO_MEMORY(d, 4 * KIB, rig_buffer_create(d, 4 * KIB, RIG_MEMORY_DEVICE, &b));
  cr_assert_null(rig_lost(d), "no memory is not a fault");
  b = create(d, 4 * KIB);
  CHECK_OK(rig_buffer_fill(b, 1));
  rig_buffer_unref(b);
}

/* ---- Failure of the process ------------------------------------------------ */

Test(loss, fail_loses_every_device_but_the_host) { /* ERR-36 ERR-37 LOSS-06 ERR-30 */
  rig_device_t *sim = open_sim("SIM:55");
  rig_device_t *mem = NULL;
  CHECK_OK(rig_memory_device("MEM:81", &mem));
  rig_buffer_t *b = create(sim, 4 * KIB);
  rig_point_t queued = submit_fill(b, 1);
  cr_assert_null(rig_failure());
  CHECK_OK(rig_fail("shutting down"));
  cr_assert_str_eq(rig_failure(), "shutting down");
  assert_lost_with(sim, "shutting down");
  assert_lost_with(mem, "shutting down");
  CHECK_LOST(sim, rig_point_wait(queued));
  rig_buffer_t *m = NULL;
  CHECK_LOST(mem, rig_buffer_create(mem, 64, RIG_MEMORY_DEVICE, &m));

  cr_assert_null(rig_lost(rig_host()), "fail never loses the host");
  rig_buffer_t *h = create(rig_host(), 4 * KIB);
  CHECK_OK(rig_buffer_fill(h, 9));
  char byte = 0;
  CHECK_OK(rig_buffer_blit_to_bytes(h, 100, &byte, 1, 0, 1));
  cr_assert_eq(byte, 9);
  rig_buffer_unref(h);
  rig_buffer_unref(b);
}

Test(loss, fail_keeps_the_reasons_of_devices_already_lost) { /* ERR-38 */
  rig_device_t *closed = NULL, *faulted = open_sim("SIM:56"), *live = open_sim("SIM:57");
  CHECK_OK(rig_memory_device("MEM:82", &closed));
  CHECK_OK(rig_close(closed));
  rig_buffer_t *b = create(faulted, 4 * KIB);
  lose_by_fault(faulted, b, "link down");
  CHECK_OK(rig_fail("shutting down"));
  assert_lost_with(closed, "closed");
  assert_lost_with(faulted, "link down");
  assert_lost_with(live, "shutting down");
  rig_buffer_unref(b);
}

Test(loss, opens_after_fail_answer_its_reason) { /* ERR-39 DEV-06 */
  rig_device_t *before = open_sim("SIM:58");
  CHECK_OK(rig_fail("maintenance"));
  const char *names[] = {"SIM:58", "SIM:59", "MEM:83"};
  for (size_t k = 0; k < 3; k++) {
    rig_device_t *d = NULL;
    CHECK_FAILS(RIG_EOPEN, rig_open(names[k], NULL, &d), "open %s after fail", names[k]);
    cr_assert(strstr(check_error_copy(), "maintenance") != NULL, "open %s: \"%s\" names no reason",
              names[k], check_error_copy());
    cr_assert_null(d);
  }
  rig_device_t *m = NULL;
  CHECK_FAILS(RIG_EOPEN, rig_memory_device("MEM:84", &m));
  assert_lost_with(before, "maintenance");
}

Test(loss, only_the_first_fail_acts) { /* ERR-42 */
  rig_device_t *d = open_sim("SIM:60");
  CHECK_OK(rig_fail("first"));
  CHECK_OK(rig_fail("second"));
  cr_assert_str_eq(rig_failure(), "first");
  assert_lost_with(d, "first");
  rig_device_t *other = NULL;
  CHECK_FAILS(RIG_EOPEN, rig_open("SIM:61", NULL, &other));
  const char *why = check_error_copy();
  cr_assert(strstr(why, "first") != NULL && strstr(why, "second") == NULL,
            "opens answer the first reason: \"%s\"", why);
}

/* ---- fork ---------------------------------------------------------------- */

/* The checks a child of fork makes, by exit code: a child cannot use
 * Criterion's assertions, so it exits with the number of the first check
 * that failed. */
static const char *const child_checks[] = {
    "ok",
    "an inherited sim device is lost with \"forked\" (LOSS-07 STOP-20 ERR-31)",
    "a device lost before the fork keeps its reason (STOP-21)",
    "a point the parent reached counts as never reached (STOP-22)",
    "a wait on a point the parent queued answers RIG_ELOST for the device (STOP-22)",
    "a use of the inherited device's memory answers RIG_ELOST",
    "the memory device goes on: live, fill and read work",
    "the host goes on: create, fill and read work",
    "a device the child opens is its own and works (STOP-30)",
    "closing the inherited device calls no driver stop (STOP-23)",
    "an open of the inherited device's name makes a live device and calls no driver stop (STOP-23)",
};

static int sum_bytes(void *bytes, int64_t n, void *context) {
  int64_t *sum = context;
  for (int64_t i = 0; i < n; i++) *sum += ((unsigned char *)bytes)[i];
  return 0;
}

/* Fills b with c and reads it back on the host: true iff both work. */
static bool fill_and_read(rig_buffer_t *b, uint8_t c) {
  int64_t sum = 0;
  return rig_buffer_fill(b, c) == RIG_OK && rig_buffer_read(b, 1, sum_bytes, &sum) == RIG_OK &&
         sum == (int64_t)c * rig_buffer_bytes(b);
}

struct inherited {
  rig_device_t *sim, *closed, *mem;
  rig_buffer_t *sim_buffer, *mem_buffer;
  rig_point_t reached, queued;
};

/* The child's checks; returns the number of the first that fails. */
static int child_of_fork(const struct inherited *in) {
  const rig_sim_inject_t *inj = rig_device_capability(in->sim, RIG_SIM_INJECT_KEY);
  int64_t stops = inj->stops(inj->device);
  const char *lost = rig_lost(in->sim);
  if (!lost || strcmp(lost, "forked") != 0) return 1;
  lost = rig_lost(in->closed);
  if (!lost || strcmp(lost, "closed") != 0) return 2;
  bool reached = true;
  if (rig_point_reached(in->reached, &reached) != RIG_ELOST) return 3;
  if (rig_point_wait(in->queued) != RIG_ELOST || rig_error_device() != in->sim ||
      strcmp(rig_last_error(), "SIM:62 lost: forked") != 0)
    return 4;
  if (rig_buffer_fill(in->sim_buffer, 1) != RIG_ELOST) return 5;
  if (rig_lost(in->mem) || !fill_and_read(in->mem_buffer, 3)) return 6;
  rig_buffer_t *h = NULL;
  if (rig_lost(rig_host()) || rig_buffer_create(rig_host(), 4096, RIG_MEMORY_DEVICE, &h) != RIG_OK ||
      !fill_and_read(h, 5))
    return 7;
  rig_buffer_unref(h);
  rig_device_t *own = NULL;
  rig_buffer_t *b = NULL;
  rig_point_t p;
  if (rig_open("SIM:64", NULL, &own) != RIG_OK || rig_buffer_create(own, 4096, RIG_MEMORY_DEVICE, &b) != RIG_OK ||
      rig_buffer_submit_fill(b, 7, NULL, 0, &p) != RIG_OK || rig_point_wait(p) != RIG_OK || rig_lost(own))
    return 8;
  rig_buffer_unref(b);
  if (rig_close(in->sim) != RIG_OK || inj->stops(inj->device) != stops) return 9;
  rig_device_t *again = NULL;
  if (rig_open("SIM:62", NULL, &again) != RIG_OK || again == in->sim || rig_lost(again) ||
      inj->stops(inj->device) != stops)
    return 10;
  return 0;
}

Test(loss, a_child_of_fork_loses_the_driver_devices_it_inherited) {
  /* LOSS-07 STOP-20 STOP-21 STOP-22 STOP-23 STOP-30 ERR-31 */
  struct inherited in;
  in.sim = open_sim("SIM:62");
  in.closed = open_sim("SIM:63");
  CHECK_OK(rig_close(in.closed));
  CHECK_OK(rig_memory_device("MEM:85", &in.mem));
  in.sim_buffer = create(in.sim, 4 * KIB);
  in.mem_buffer = create(in.mem, 4 * KIB);
  in.reached = submit_fill(in.sim_buffer, 1);
  CHECK_OK(rig_point_wait(in.reached));
  in.queued = submit_fill(in.sim_buffer, 2);  /* uncommitted at the fork */

  fflush(NULL);
  pid_t child = fork();
  cr_assert_neq(child, -1, "fork");
  if (child == 0) _exit(child_of_fork(&in));
  int status = 0;
  cr_assert_eq(waitpid(child, &status, 0), child);
  cr_assert(WIFEXITED(status), "the child ended by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  int failed = WEXITSTATUS(status);
  cr_assert(failed == 0, "in the child: %s (exit status %d)",
            failed < (int)(sizeof child_checks / sizeof child_checks[0]) ? child_checks[failed] : "no check's",
            failed);

  /* The parent's devices are untouched. */
  cr_assert_null(rig_lost(in.sim));
  CHECK_OK(rig_point_wait(in.queued));
  rig_buffer_unref(in.mem_buffer);
  rig_buffer_unref(in.sim_buffer);
}
