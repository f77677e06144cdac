/* Lifetime: claims, consumption, free and unborrow.
 *
 * The claims of rig.h (rig_buffer_claim and rig_buffer_release, the holds
 * of rig_claim_begin, rig_claim_consume, rig_claim_share), the early
 * returns rig_buffer_free and rig_buffer_unborrow, and the read claims that
 * host access and copies hold.  Devices: the host, memory devices
 * (MEM:60..) and sim devices (SIM:10..), whose work runs on a worker thread
 * after it is committed; every test opens names of its own.
 *
 * Asserts:
 *   Intro:        INTRO-16 INTRO-17
 *   Buffers:      BUF-03 BUF-63 BUF-64 BUF-65 BUF-66 BUF-67 BUF-68 BUF-69
 *                 BUF-70 BUF-71 BUF-73 BUF-74 BUF-75 BUF-76 BUF-77 BUF-78
 *                 BUF-79 BUF-80
 *   Properties:   BPROP-14 BPROP-20 BPROP-21
 *   Host access:  HACC-02 HACC-03 HACC-13 HACC-32 HACC-35
 *   Copying:      COPY-43 COPY-44 COPY-66 COPY-78
 *   Low level:    LOW-01 LOW-05 LOW-06 LOW-07 LOW-08
 *   Memory after a loss: LMEM-01 (a Read claim follows last writes only,
 *                 a Read_write one every use), LMEM-04 (a hold depends on
 *                 what a write would: asserted in test_loss.c)
 *   Reclamation:  RECL-04
 *   Errors:       ERR-35 (lost answers while a wait on the device is in flight)
 *
 * Not reached here, and why:
 *   BUF-72: a submit through a borrow on another thread holds a read claim
 *     only while it runs, which a second thread could see only by a race.
 *   BUF-65 for of_io and DMA-described memory: rig.h has no io devices and
 *     no rig_buffer_dma; of_memory, exported and shared memory are covered.
 *   HACC-02 from another thread: asserted from inside the callback on the
 *     callback's own thread (rig holds no lock there), which is the same
 *     claim; a second thread would add only a race.
 *   COPY-43 for copies through staging memory: the claim is taken before
 *     any route is chosen; asserted on a direct sim copy whose wait blocks.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <pthread.h>
#include <rig/rig.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "helpers.h"

#define KIB ((int64_t)1024)

/* ---- Checking statuses and buffers' states ------------------------------ */

/* call answers RIG_EINVAL, and its message names the reason the buffer's
 * memory was consumed or its borrow ended (BUF-69). */
#define FAILS_NAMING(reason, call)                                                \
  do {                                                                            \
    CHECK_FAILS(RIG_EINVAL, call);                                                \
    cr_assert(strstr(check_error_copy(), (reason)) != NULL,                       \
              "%s: the message \"%s\" does not name \"%s\"", #call, check_error_copy(), (reason)); \
  } while (0)

static void assert_dead_with(rig_buffer_t *b, const char *why) {
  const char *dead = rig_buffer_dead(b);
  cr_assert(dead != NULL && strcmp(dead, why) == 0, "dead answers \"%s\", want \"%s\"",
            dead ? dead : "(live)", why);
  /* LOW-05: rig_buffer_why is dead under the low-level name. */
  cr_assert(rig_buffer_why(b) == dead || strcmp(rig_buffer_why(b), dead) == 0);
}

static void assert_live(rig_buffer_t *b, const char *what) {
  cr_assert_null(rig_buffer_dead(b), "%s is live, but dead answers \"%s\"", what, rig_buffer_dead(b));
  cr_assert_null(rig_buffer_why(b));
}

/* ---- rig_buffer_claim's answers ------------------------------------------ */

Test(claims, a_claim_keeps_free_false_until_released) { /* LOW-01 LOW-06 LOW-07 BUF-64 BUF-03 */
  rig_device_t *mem = NULL;
  CHECK_OK(rig_memory_device("MEM:60", &mem));
  rig_device_t *devices[] = {rig_host(), mem};
  for (size_t k = 0; k < 2; k++) {
    rig_buffer_t *b = create(devices[k], 4 * KIB);
    /* Two claims, one of each access: the memory is free only once both
     * are released. */
    cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIMED, "no work to follow");
    cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ_WRITE), RIG_CLAIMED);
    cr_assert_not(try_free(b, NULL), "free is false while a claim holds the memory");
    assert_live(b, "a buffer free refused");
    rig_buffer_release(b);
    cr_assert_not(try_free(b, NULL), "one claim is still held");
    rig_buffer_release(b);
    /* A claim through a view holds the whole allocation (BUF-03). */
    rig_buffer_t *part = view(b, 64, 64);
    cr_assert_eq(rig_buffer_claim(part, RIG_ACCESS_READ), RIG_CLAIMED);
    cr_assert_not(try_free(b, NULL), "a claim through a view holds the memory");
    rig_buffer_release(part);
    cr_assert(try_free(b, NULL), "free succeeds once every claim is released");
    assert_dead_with(b, "freed");
    rig_buffer_unref(part);
    rig_buffer_unref(b);
  }
}

Test(claims, a_claim_on_work_in_flight_answers_wait) { /* LOW-08 LMEM-01 */
  /* Work is held by the driver until committed (commit_every), so the
   * fill below has not run when the claim is taken. */
  rig_device_t *d = open_with("SIM:10", "latency_us=20000,commit_every=8");
  rig_buffer_t *b = create(d, 4 * KIB);
  rig_point_t fill = submit_fill(b, 7);
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIM_WAIT,
               "a Read claim follows the sim's unreached write");
  CHECK_OK(rig_buffer_wait(b, RIG_ACCESS_READ));
  cr_assert(point_reached(fill), "rig_buffer_wait under the claim returns once the fill is done");
  rig_buffer_release(b);
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIMED, "the fill is done");
  rig_buffer_release(b);

  /* Memory the sim only reads: a Read claim follows last writes only, a
   * Read_write claim every use. */
  rig_buffer_t *dst = create(d, 4 * KIB);
  rig_point_t copy = submit_copy_all(b, dst);  /* held: not committed */
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIMED, "no write of the source is unreached");
  rig_buffer_release(b);
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ_WRITE), RIG_CLAIM_WAIT,
               "a Read_write claim follows the unreached read");
  CHECK_OK(rig_buffer_wait(b, RIG_ACCESS_READ_WRITE));
  cr_assert(point_reached(copy));
  rig_buffer_release(b);
  rig_buffer_unref(dst);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
}

Test(claims, a_claim_on_a_dead_buffer_answers_dead) { /* LOW-05 */
  rig_buffer_t *b = create(rig_host(), 256);
  cr_assert_eq(rig_buffer_claim(NULL, RIG_ACCESS_READ), RIG_CLAIM_INVALID);
  cr_assert_eq(rig_buffer_claim(b, (rig_access_t)0), RIG_CLAIM_INVALID);
  cr_assert_eq(rig_buffer_claim(b, (rig_access_t)2), RIG_CLAIM_INVALID);
  cr_assert(try_free(b, "gone"));
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIM_DEAD);
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ_WRITE), RIG_CLAIM_DEAD);
  bool exclusive = true;
  FAILS_NAMING("gone", rig_claim_begin(b, &exclusive));
  cr_assert_not(exclusive);
  rig_buffer_unref(b);
}

/* ---- Holds: exclusive or not -------------------------------------------- */

Test(claims, an_exclusive_hold_refuses_other_uses) { /* HACC-13 COPY-66 */
  rig_device_t *mem = NULL;
  CHECK_OK(rig_memory_device("MEM:61", &mem));
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  rig_buffer_t *other = create(rig_host(), 64 * KIB);
  rig_buffer_t *part = view(h, 0, 4 * KIB);
  bool exclusive = false;
  CHECK_OK(rig_claim_begin(h, &exclusive));
  cr_assert(exclusive, "the only claim on the memory holds it exclusive");

  cr_assert_eq(rig_buffer_claim(h, RIG_ACCESS_READ), RIG_CLAIM_EXCLUSIVE);
  cr_assert_eq(rig_buffer_claim(part, RIG_ACCESS_READ), RIG_CLAIM_EXCLUSIVE, "views share the claims");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_read(h, 1, read_nothing, NULL));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_write(part, 1, write_nothing, NULL));
  rig_export_t *e = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_export(h, 1, &e));
  cr_assert_null(e);
  rig_box_t row = rig_row(0, 0, 4 * KIB);
  rig_point_t p;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(h, other, &row, 1, NULL, 0, &p));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(other, part, &row, 1, NULL, 0, &p));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(other, h));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_fill(part, 1));
  rig_buffer_t *b = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_borrow(mem, h, &b));
  cr_assert_null(b);
  bool again = true;
  CHECK_FAILS(RIG_EINVAL, rig_claim_begin(part, &again));
  cr_assert_not(try_free(h, NULL), "free is false while a hold holds the memory");

  CHECK_OK(rig_claim_end(h));
  CHECK_OK(rig_buffer_read(h, 1, read_nothing, NULL));
  CHECK_OK(rig_buffer_fill(part, 1));
  CHECK_FAILS(RIG_EINVAL, rig_claim_end(h));  /* no hold left */
  cr_assert(try_free(h, NULL));
  rig_buffer_unref(part);
  rig_buffer_unref(other);
  rig_buffer_unref(h);
}

Test(claims, a_hold_beside_other_claims_is_not_exclusive) {
  rig_buffer_t *b = create(rig_host(), 4 * KIB);
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIMED);
  bool exclusive = true;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert_not(exclusive, "a read claim is held too");
  /* Not exclusive: other claims and host access go on. */
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIMED);
  rig_buffer_release(b);
  CHECK_OK(rig_buffer_read(b, 1, read_nothing, NULL));
  bool second = true;
  CHECK_OK(rig_claim_begin(b, &second));
  cr_assert_not(second, "a hold is held too");
  CHECK_OK(rig_claim_end(b));
  CHECK_OK(rig_claim_end(b));
  rig_buffer_release(b);
  /* Alone again: the next hold is exclusive. */
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert(exclusive);
  CHECK_OK(rig_claim_end(b));
  rig_buffer_unref(b);
}

Test(claims, memory_outside_the_claims_takes_no_hold) { /* BUF-65 */
  static char bytes[256];
  rig_buffer_t *caller = NULL;
  CHECK_OK(rig_buffer_of_memory(bytes, sizeof bytes, NULL, NULL, &caller));
  rig_buffer_t *shared = create(rig_host(), 256);
  CHECK_OK(rig_claim_share(shared));
  rig_buffer_t *sides[] = {caller, shared};
  for (size_t k = 0; k < 2; k++) {
    bool exclusive = true;
    CHECK_FAILS(RIG_EINVAL, rig_claim_begin(sides[k], &exclusive));
    cr_assert_not(exclusive);
    cr_assert_not(try_free(sides[k], NULL), "free is false for memory outside the claims");
    assert_live(sides[k], "memory outside the claims");
  }
  rig_buffer_unref(shared);
  rig_buffer_unref(caller);
}

/* ---- Consume ------------------------------------------------------------ */

Test(claims, consume_under_an_exclusive_hold) { /* INTRO-16 INTRO-17 BPROP-20 BUF-69 BUF-70 */
  rig_device_t *mem = NULL;
  CHECK_OK(rig_memory_device("MEM:62", &mem));
  rig_buffer_t *b = create(rig_host(), 64 * KIB);
  rig_buffer_t *part = view(b, 128, 256);
  rig_buffer_t *on_mem = borrow(mem, b);
  bool exclusive = false;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert(exclusive);
  rig_buffer_t *out = NULL;
  CHECK_OK(rig_claim_consume(b, "donated to add", &out));
  cr_assert_not_null(out);

  /* Every buffer made over the memory until now is dead with the reason. */
  assert_dead_with(b, "donated to add");
  assert_dead_with(part, "donated to add");
  assert_dead_with(on_mem, "donated to add");
  FAILS_NAMING("donated to add", rig_buffer_fill(part, 0));
  FAILS_NAMING("donated to add", rig_buffer_read(b, 1, read_nothing, NULL));
  cr_assert_eq(rig_buffer_claim(on_mem, RIG_ACCESS_READ), RIG_CLAIM_DEAD);
  bool freed = true;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_free(b, NULL, &freed));
  cr_assert_not(freed);

  /* The result lies over the same bytes and admits Read_write. */
  assert_live(out, "consume's result");
  cr_assert(rig_device_equal(rig_buffer_device(out), rig_host()));
  cr_assert_eq(rig_buffer_bytes(out), 64 * KIB);
  cr_assert(rig_buffer_spans(out));
  cr_assert_eq(rig_buffer_host(out), rig_buffer_host(b));
  cr_assert_eq(rig_buffer_access(out), RIG_ACCESS_READ_WRITE, "the hold was exclusive");
  cr_assert_not(try_free(out, NULL), "the memory stays held after consume");
  CHECK_OK(rig_claim_end(out));
  rig_buffer_t *later = view(out, 0, 16);
  assert_live(later, "a view made after the consume");
  CHECK_OK(rig_buffer_write(out, 1, write_nothing, NULL));
  CHECK_OK(rig_buffer_fill(later, 3));
  rig_buffer_unref(later);
  cr_assert(try_free(out, NULL));
  rig_buffer_unref(out);
  rig_buffer_unref(on_mem);
  rig_buffer_unref(part);
  rig_buffer_unref(b);
}

Test(claims, consume_beside_other_claims_gives_a_read_only_buffer) { /* BPROP-14 HACC-32 */
  rig_buffer_t *b = create(rig_host(), 4 * KIB);
  rig_buffer_t *src = create(rig_host(), 4 * KIB);
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIMED);
  bool exclusive = true;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert_not(exclusive);
  rig_buffer_t *out = NULL;
  CHECK_OK(rig_claim_consume(b, "shared donation", &out));
  assert_dead_with(b, "shared donation");
  cr_assert_eq(rig_buffer_access(out), RIG_ACCESS_READ, "the hold was not exclusive");
  rig_buffer_t *part = view(out, 0, 64);
  cr_assert_eq(rig_buffer_access(part), RIG_ACCESS_READ, "its views admit only Read too");
  cr_assert_eq(rig_buffer_claim(out, RIG_ACCESS_READ_WRITE), RIG_CLAIM_READ_ONLY);
  cr_assert_eq(rig_buffer_claim(out, RIG_ACCESS_READ), RIG_CLAIMED);
  rig_buffer_release(out);
  CHECK_FAILS(RIG_EINVAL, rig_buffer_write(out, 1, write_nothing, NULL));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_fill(part, 0));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(src, out));
  CHECK_OK(rig_buffer_read(out, 1, read_nothing, NULL));
  rig_buffer_release(b);  /* the claim taken before the consume */
  CHECK_OK(rig_claim_end(out));
  rig_buffer_unref(part);
  rig_buffer_unref(out);
  rig_buffer_unref(src);
  rig_buffer_unref(b);
}

Test(claims, consume_needs_a_hold_and_a_live_buffer) {
  rig_buffer_t *b = create(rig_host(), 256);
  rig_buffer_t *out = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_claim_consume(b, "nothing holds it", &out));
  cr_assert_null(out);
  assert_live(b, "a buffer whose consume was refused");
  bool exclusive = false;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  CHECK_OK(rig_claim_consume(b, "first", &out));
  rig_buffer_t *again = NULL;
  FAILS_NAMING("first", rig_claim_consume(b, "second", &again));
  cr_assert_null(again);
  assert_dead_with(b, "first");
  CHECK_OK(rig_claim_end(out));
  rig_buffer_unref(out);
  rig_buffer_unref(b);
}

/* ---- Free --------------------------------------------------------------- */

/* An early return (rig_buffer_free or rig_buffer_unborrow) of b made from
 * inside a host access function, and what it answered. */
struct end_inside {
  rig_buffer_t *b;
  rig_status_t (*end)(rig_buffer_t *b, const char *why, bool *ended);
  rig_status_t status;
  bool ended;
};

static int end_from_callback(void *bytes, int64_t n, void *context) {
  (void)bytes, (void)n;
  struct end_inside *e = context;
  e->status = e->end(e->b, NULL, &e->ended);
  return 0;
}

Test(claims, host_access_holds_a_read_claim_while_its_function_runs) { /* HACC-02 HACC-03 */
  rig_device_t *mem = NULL;
  CHECK_OK(rig_memory_device("MEM:63", &mem));
  rig_device_t *devices[] = {rig_host(), mem};
  for (size_t k = 0; k < 2; k++) {
    rig_buffer_t *b = create(devices[k], 4 * KIB);
    /* rig holds no lock while the function runs, so it may call rig. */
    struct end_inside f = {b, rig_buffer_free, RIG_EINVAL, true};
    CHECK_OK(rig_buffer_read(b, 1, end_from_callback, &f));
    cr_assert_eq(f.status, RIG_OK, "free from inside a read: %s", rig_status_name(f.status));
    cr_assert_not(f.ended, "a read's claim refuses free");
    f = (struct end_inside){b, rig_buffer_free, RIG_EINVAL, true};
    CHECK_OK(rig_buffer_write(b, 1, end_from_callback, &f));
    cr_assert_eq(f.status, RIG_OK);
    cr_assert_not(f.ended, "a write's claim refuses free");
    assert_live(b, "a buffer whose free was refused");
    cr_assert(try_free(b, NULL), "the claims end when the functions return");
    rig_buffer_unref(b);
  }
}

Test(claims, free_refuses_a_view_of_part) { /* BUF-63 */
  rig_buffer_t *b = create(rig_host(), 4 * KIB);
  rig_buffer_t *part = view(b, 0, 2 * KIB);
  rig_buffer_t *whole = view(b, 0, 4 * KIB);
  cr_assert_not(try_free(part, NULL), "a view of part does not span its memory");
  assert_live(b, "the viewed buffer");
  assert_live(part, "the view");
  cr_assert(try_free(whole, "whole view"), "a view of all of the memory spans it");
  assert_dead_with(part, "whole view");
  assert_dead_with(b, "whole view");
  rig_buffer_unref(whole);
  rig_buffer_unref(part);
  rig_buffer_unref(b);
}

static void count_release(void *context) { (*(int *)context)++; }

Test(claims, free_refuses_memory_outside_the_claims) { /* BUF-65 HACC-35 */
  static char bytes[4096];
  int released = 0;
  rig_buffer_t *caller = NULL;
  CHECK_OK(rig_buffer_of_memory(bytes, sizeof bytes, count_release, &released, &caller));
  cr_assert_not(try_free(caller, NULL), "caller memory is outside the claims");
  assert_live(caller, "caller memory");
  cr_assert_eq(released, 0, "a refused free lets go of nothing");

  rig_buffer_t *exported = create(rig_host(), 4 * KIB);
  rig_export_t *e = NULL;
  CHECK_OK(rig_buffer_export(exported, 1, &e));
  cr_assert_not(try_free(exported, NULL), "exported memory is outside the claims");
  assert_live(exported, "exported memory");
  rig_export_unref(e);
  rig_buffer_unref(exported);
  rig_buffer_unref(caller);
  cr_assert_eq(released, 1);
}

Test(claims, free_makes_every_buffer_over_the_memory_dead) { /* BUF-66 BUF-67 BUF-69 BUF-70 BPROP-20 */
  rig_device_t *mem = NULL;
  CHECK_OK(rig_memory_device("MEM:64", &mem));
  rig_buffer_t *b = create(mem, 8 * KIB);
  rig_buffer_t *part = view(b, 4 * KIB, 4 * KIB);
  rig_buffer_t *on_host = borrow(rig_host(), b);
  cr_assert(try_free(b, "given to the kernel"));
  rig_buffer_t *all[] = {b, part, on_host};
  for (size_t k = 0; k < 3; k++) {
    assert_dead_with(all[k], "given to the kernel");
    cr_assert_eq(rig_buffer_claim(all[k], RIG_ACCESS_READ), RIG_CLAIM_DEAD);
  }
  FAILS_NAMING("given to the kernel", rig_buffer_fill(part, 1));
  FAILS_NAMING("given to the kernel", rig_buffer_read(on_host, 1, read_nothing, NULL));
  FAILS_NAMING("given to the kernel", rig_buffer_wait(b, RIG_ACCESS_READ));
  bool freed = true;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_free(part, NULL, &freed));
  cr_assert_not(freed);
  /* Properties answer for a dead buffer. */
  cr_assert_eq(rig_buffer_bytes(part), 4 * KIB);
  cr_assert(rig_device_equal(rig_buffer_device(b), mem));

  rig_buffer_t *plain = create(mem, 256);
  cr_assert(try_free(plain, NULL));
  assert_dead_with(plain, "freed");
  rig_buffer_unref(plain);
  rig_buffer_unref(on_host);
  rig_buffer_unref(part);
  rig_buffer_unref(b);
}

/* Frees b (of sim device d) while its work up to p is queued and
 * uncommitted, and checks that the memory returns only once p is reached:
 * before, free_cache leaves it allocated. */
static void assert_returns_after(rig_device_t *d, rig_buffer_t *b, rig_point_t p, int64_t start) {
  int64_t frees = sim_frees(d);
  int64_t held = rig_allocated(d);
  cr_assert_gt(held, start);
  cr_assert(try_free(b, NULL), "no claim holds the memory: queued work holds none");
  assert_dead_with(b, "freed");
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), held, "freed memory waits for the work using it");
  cr_assert_eq(sim_frees(d), frees, "nothing went back to the driver");
  CHECK_OK(rig_point_wait(p));
  CHECK_OK(rig_free_cache(d));
  cr_assert_lt(rig_allocated(d), held, "the memory returned once its work was done");
  cr_assert_gt(sim_frees(d), frees);
}

Test(claims, freed_memory_returns_once_its_work_is_done) { /* BUF-68 RECL-04 COPY-44 */
  rig_device_t *d = open_with("SIM:11", "latency_us=20000,commit_every=8");
  int64_t start = rig_allocated(d);
  /* A fill that writes the memory; the handle lives on after free. */
  rig_buffer_t *b = create(d, 64 * KIB);
  assert_returns_after(d, b, submit_fill(b, 1), start);
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), start);

  /* A queued copy reads one side and writes the other: either frees at
   * once, and returns after the copy. */
  rig_buffer_t *src = create(d, 16 * KIB), *dst = create(d, 16 * KIB);
  int64_t both = rig_allocated(d);
  rig_point_t copy = submit_copy_all(src, dst);
  assert_returns_after(d, dst, copy, start);
  cr_assert_eq(rig_allocated(d), both - 16 * KIB, "only the destination returned");
  rig_box_t row = rig_row(0, 0, 16 * KIB);
  rig_buffer_t *src2 = create(d, 16 * KIB);
  rig_point_t copy2;
  CHECK_OK(rig_buffer_submit_copy(src, src2, &row, 1, NULL, 0, &copy2));
  assert_returns_after(d, src, copy2, start);
  rig_buffer_unref(src2);
  rig_buffer_unref(src);
  rig_buffer_unref(dst);
  CHECK_OK(rig_close(d));
}

/* ---- Unborrow ----------------------------------------------------------- */

Test(claims, unborrow_is_refused_while_a_claim_goes_through_the_borrow) { /* BUF-71 */
  rig_device_t *d = open_with("SIM:12", NULL);
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  rig_buffer_t *hb = borrow(d, h);
  rig_buffer_t *part = view(hb, 4 * KIB, 4 * KIB);

  cr_assert_eq(rig_buffer_claim(hb, RIG_ACCESS_READ), RIG_CLAIMED);
  cr_assert_not(try_unborrow(hb, NULL), "a claim through the borrow keeps it");
  rig_buffer_release(hb);
  cr_assert_eq(rig_buffer_claim(part, RIG_ACCESS_READ_WRITE), RIG_CLAIMED);
  cr_assert_not(try_unborrow(hb, NULL), "a claim through a view of the borrow keeps it");
  rig_buffer_release(part);

  /* A host read through the borrow (the host addresses its bytes). */
  struct end_inside u = {hb, rig_buffer_unborrow, RIG_EINVAL, true};
  CHECK_OK(rig_buffer_read(part, 1, end_from_callback, &u));
  cr_assert_eq(u.status, RIG_OK, "unborrow from inside a read: %s", rig_status_name(u.status));
  cr_assert_not(u.ended, "a host access through the borrow keeps it");
  assert_live(hb, "a borrow whose unborrow was refused");
  assert_live(part, "its view");

  cr_assert(try_unborrow(hb, NULL), "no claim goes through the borrow any more");
  rig_buffer_unref(part);
  rig_buffer_unref(hb);
  rig_buffer_unref(h);
  CHECK_OK(rig_close(d));
}

Test(claims, unborrow_ends_only_the_borrow) { /* BUF-74 BUF-75 BUF-76 BUF-77 BPROP-21 */
  rig_device_t *d = open_with("SIM:13", NULL);
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  rig_buffer_t *hb = borrow(d, h);
  rig_buffer_t *hb2 = borrow(d, h);
  rig_buffer_t *part = view(hb, 0, 4 * KIB);
  int64_t maps = inj->maps(inj->device);
  int64_t frees = inj->frees(inj->device);

  /* A claim through the owner neither refuses the unborrow nor sees it. */
  cr_assert_eq(rig_buffer_claim(h, RIG_ACCESS_READ), RIG_CLAIMED);
  cr_assert(try_unborrow(hb, NULL));
  assert_dead_with(hb, "unborrowed");
  assert_dead_with(part, "unborrowed");
  FAILS_NAMING("unborrowed", rig_buffer_fill(part, 0));
  cr_assert_not(try_free(h, NULL), "the owner's claim is still held");
  rig_buffer_release(h);

  /* The memory and its other buffers live on. */
  assert_live(h, "the owner");
  assert_live(hb2, "another borrow");
  CHECK_OK(rig_buffer_fill(h, 5));
  CHECK_OK(rig_buffer_read(hb2, 1, read_nothing, NULL));
  cr_assert_eq(inj->frees(inj->device), frees, "the other borrow still holds the shared mapping");

  /* The last borrow's hold ends: its mapping goes back, the sim having no
   * work submitted since. */
  cr_assert(try_unborrow(hb2, "done with it"));
  assert_dead_with(hb2, "done with it");
  cr_assert_eq(inj->frees(inj->device), frees + 1, "the mapping returned at the last unborrow");
  rig_buffer_t *again = borrow(d, h);
  cr_assert_eq(inj->maps(inj->device), maps + 1, "a later borrow maps the memory again");
  assert_live(again, "a borrow made after the unborrow");
  rig_buffer_unref(again);
  rig_buffer_unref(part);
  rig_buffer_unref(hb2);
  rig_buffer_unref(hb);
  rig_buffer_unref(h);
  CHECK_OK(rig_close(d));
}

Test(claims, unborrow_needs_a_borrow_on_another_device) { /* BUF-78 BUF-79 BUF-80 */
  rig_device_t *mem = NULL;
  CHECK_OK(rig_memory_device("MEM:65", &mem));
  static char bytes[256];
  rig_buffer_t *caller = NULL;
  CHECK_OK(rig_buffer_of_memory(bytes, sizeof bytes, NULL, NULL, &caller));
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  rig_buffer_t *same = borrow(rig_host(), h);    /* h itself */
  rig_buffer_t *hb = borrow(mem, h);
  rig_buffer_t *home = borrow(rig_host(), hb);   /* back on the owner */
  rig_buffer_t *part = view(hb, 0, 100);
  rig_buffer_t *whole = view(hb, 0, 64 * KIB);
  rig_buffer_t *refused[] = {h, same, home, caller, part};
  const char *what[] = {"a created buffer", "a borrow on its own device", "a borrow back on the owner",
                        "caller memory", "a view of part of a borrow"};
  for (size_t k = 0; k < 5; k++) {
    bool ended = true;
    CHECK_FAILS(RIG_EINVAL, rig_buffer_unborrow(refused[k], NULL, &ended), "unborrow of %s", what[k]);
    cr_assert_not(ended);
    assert_live(refused[k], what[k]);
  }
  cr_assert(try_unborrow(whole, NULL), "a view of all of a borrow ends it");
  assert_dead_with(hb, "unborrowed");
  bool ended = true;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_unborrow(hb, NULL, &ended));
  cr_assert_not(ended);
  assert_live(home, "a buffer on the owner");
  rig_buffer_unref(whole);
  rig_buffer_unref(part);
  rig_buffer_unref(home);
  rig_buffer_unref(hb);
  rig_buffer_unref(same);
  rig_buffer_unref(h);
  rig_buffer_unref(caller);
}

/* ---- Copies hold read claims ------------------------------------------- */

struct copy_run {
  rig_buffer_t *src, *dst;
  rig_status_t status;
  char why[256];
};

static void *copy_thread(void *arg) {
  struct copy_run *c = arg;
  c->status = rig_buffer_copy(c->src, c->dst);
  snprintf(c->why, sizeof c->why, "%s", rig_last_error());
  return NULL;
}

Test(claims, a_copy_holds_its_read_claims_until_it_returns) { /* COPY-43 COPY-78 */
  /* The copy's work never completes (hang_at), so rig_buffer_copy blocks
   * in its wait until the hang bound loses the device, a second later. */
  rig_device_t *d = open_with("SIM:14", "hang_ms=1000,commit_every=8");
  const rig_sim_inject_t *inj = sim_inject(d);
  struct copy_run c = {create(d, 4 * KIB), create(d, 4 * KIB), RIG_OK, ""};
  uint64_t before = rig_submitted(d);
  inj->hang_at(inj->device, before + 1);
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, copy_thread, &c), 0);
  /* The copy has its claims once it has submitted its work. */
  for (int i = 0; i < 5000 && rig_submitted(d) == before; i++) nap_ms(1);
  cr_assert_eq(rig_submitted(d), before + 1, "the copy submitted its work");
  cr_assert_null(rig_lost(d), "lost answers at once while the copy waits on the device (ERR-35)");
  cr_assert_not(try_free(c.dst, NULL), "the copy's claim on its destination refuses free during its wait");
  cr_assert_not(try_free(c.src, NULL), "the copy's claim on its source refuses free during its wait");
  pthread_join(t, NULL);
  cr_assert_eq(c.status, RIG_ELOST, "the hung copy: %s (%s)", rig_status_name(c.status), c.why);
  cr_assert(try_free(c.dst, NULL), "the claims end when the copy returns");
  cr_assert(try_free(c.src, NULL));
  rig_buffer_unref(c.src);
  rig_buffer_unref(c.dst);
  CHECK_OK(rig_close(d));
}

/* ---- Exclusive holds, holds and read claims, counted apart -------------- */

Test(claims, an_exclusive_hold_refuses_holds_and_shares) { /* BUF-64 LOW-06 */
  rig_buffer_t *b = create(rig_host(), 4 * KIB);
  rig_buffer_t *part = view(b, 0, 256);
  bool exclusive = false;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert(exclusive);
  /* Every other claim is refused until the hold ends: Claim.hold and
   * Claim.share included, through the buffer or a view of it. */
  CHECK_FAILS(RIG_EINVAL, rig_claim_hold(b), "a hold beside an exclusive one");
  CHECK_FAILS(RIG_EINVAL, rig_claim_hold(part));
  CHECK_FAILS(RIG_EINVAL, rig_claim_share(b), "a share of memory held exclusive");
  CHECK_FAILS(RIG_EINVAL, rig_claim_unhold(b), "the refused holds took nothing");
  CHECK_OK(rig_claim_end(b));
  cr_assert(try_free(b, NULL), "the refused share left the memory inside the claims");
  rig_buffer_unref(part);
  rig_buffer_unref(b);
}

Test(claims, a_consume_ends_the_exclusivity_of_its_hold) {
  rig_buffer_t *b = create(rig_host(), 4 * KIB);
  bool exclusive = false;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert(exclusive);
  rig_buffer_t *out = NULL;
  CHECK_OK(rig_claim_consume(b, "donated", &out));
  CHECK_OK(rig_claim_hold(out), "consume ended the exclusivity");
  CHECK_OK(rig_claim_unhold(out));
  CHECK_OK(rig_claim_end(out));
  rig_buffer_unref(out);
  rig_buffer_unref(b);
}

Test(claims, holds_and_read_claims_are_counted_apart) { /* LOW-06 LOW-07 BUF-64 */
  rig_buffer_t *b = create(rig_host(), 4 * KIB);
  /* A read claim and a hold: unhold ends only the hold. */
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIMED);
  CHECK_OK(rig_claim_hold(b));
  CHECK_OK(rig_claim_unhold(b));
  CHECK_FAILS(RIG_EINVAL, rig_claim_unhold(b), "no hold is left, though a read claim is");
  cr_assert_not(try_free(b, NULL), "the read claim still holds the memory");
  rig_buffer_release(b);
  /* A hold alone: release ends no hold. */
  CHECK_OK(rig_claim_hold(b));
  rig_buffer_release(b);
  cr_assert_not(try_free(b, NULL), "a release ends only a read claim, and the hold is held");
  bool exclusive = true;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert_not(exclusive, "the hold is another claim");
  CHECK_OK(rig_claim_end(b));
  CHECK_OK(rig_claim_unhold(b));
  cr_assert(try_free(b, NULL), "free succeeds once the hold ends");
  rig_buffer_unref(b);
}

Test(claims, a_hold_of_a_view_of_part_is_not_exclusive) { /* BUF-63 INTRO-16 BPROP-14 */
  rig_buffer_t *b = create(rig_host(), 4 * KIB);
  rig_buffer_t *low = view(b, 0, 2 * KIB), *high = view(b, 2 * KIB, 2 * KIB);
  rig_buffer_t *inside = view(low, 64, 64);
  bool exclusive = true;
  CHECK_OK(rig_claim_begin(low, &exclusive));
  cr_assert_not(exclusive, "a view of part does not span its memory: no donation writes it");
  cr_assert_eq(rig_buffer_claim(high, RIG_ACCESS_READ), RIG_CLAIMED, "the hold takes nothing exclusive");
  rig_buffer_release(high);
  rig_buffer_t *out = NULL;
  CHECK_OK(rig_claim_consume(low, "consumed low", &out));
  assert_dead_with(low, "consumed low");
  assert_dead_with(inside, "consumed low");
  /* The buffers over the other bytes live on. */
  assert_live(high, "a view of the other bytes");
  assert_live(b, "the buffer over all of the memory");
  CHECK_OK(rig_buffer_fill(high, 1));
  cr_assert_eq(rig_buffer_access(out), RIG_ACCESS_READ, "the hold was not exclusive");
  cr_assert_eq(rig_buffer_bytes(out), 2 * KIB);
  CHECK_OK(rig_claim_end(out));
  cr_assert(try_free(b, NULL), "the spanning buffer frees the memory once the hold ends");
  assert_dead_with(high, "freed");
  rig_buffer_unref(out);
  rig_buffer_unref(inside);
  rig_buffer_unref(high);
  rig_buffer_unref(low);
  rig_buffer_unref(b);
}

/* A submission of one fill of the fixed buffer dst on d. */
static rig_submission_t *fill_submission(rig_device_t *d, rig_buffer_t *dst) {
  rig_part_t fill = {.kind = RIG_FILL};
  fill.u.fill.dst = (rig_operand_t){.slot = 0, .fixed = dst};
  fill.u.fill.value = 9;
  rig_submission_t *s = NULL;
  CHECK_OK(rig_submission_make(d, &fill, 1, NULL, &s));
  return s;
}

Test(claims, a_prepared_submission_holds_its_fixed_memory) { /* BUF-73 BUF-64 */
  rig_device_t *mem = NULL;
  CHECK_OK(rig_memory_device("MEM:66", &mem));
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  rig_buffer_t *hb = borrow(mem, h);
  rig_buffer_t *part = view(hb, 0, 4 * KIB);
  rig_submission_t *s = fill_submission(mem, part);
  cr_assert_not(try_unborrow(hb, NULL), "a prepared submission names a view of the borrow");
  cr_assert_not(try_free(h, NULL), "a prepared submission holds its fixed memory");
  bool exclusive = true;
  CHECK_OK(rig_claim_begin(h, &exclusive));
  cr_assert_not(exclusive, "the submission's hold is another claim");
  CHECK_OK(rig_claim_end(h));
  rig_submission_unref(s);
  cr_assert(try_unborrow(hb, NULL), "the released submission holds nothing");
  cr_assert(try_free(h, NULL));
  rig_buffer_unref(part);
  rig_buffer_unref(hb);
  rig_buffer_unref(h);
}
