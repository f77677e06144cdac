/* Lifetime: holds (the spec's Claim.hold) and DMA descriptions.
 *
 * Asserts:
 *   BUF-64 (a hold keeps free false), BUF-73 (a hold through a borrow keeps
 *   unborrow false), LOW-24 LOW-26 LOW-27 LOW-28 LOW-29 LOW-30 LOW-31
 *   LOW-32, DRV-35 (dma only of a region alloc made, on a live device).
 * Not reached here, and why:
 *   LOW-21 LOW-22 LOW-23 LOW-25: a Bus or Dmabuf answer needs a driver that
 *     gives one (the CUDA driver, with a GPU); the sim and memory devices
 *     describe no memory for DMA, which asserts the Error path only.
 */
#include <rig/rig.h>
#include <stdbool.h>

#include "check.h"
#include "helpers.h"

Test(holds, a_hold_keeps_free_false_until_unheld) { /* BUF-64 */
  rig_buffer_t *b = create(rig_host(), 4096);
  CHECK_OK(rig_claim_hold(b));
  cr_assert(!try_free(b, NULL), "free under a hold");
  cr_assert_null(rig_buffer_dead(b));
  /* A hold is not exclusive, and a later hold of Claim.with_ is not either. */
  bool exclusive = true;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert(!exclusive, "a hold of Claim.with_ was exclusive beside a hold");
  CHECK_OK(rig_claim_end(b));
  CHECK_OK(rig_claim_unhold(b));
  cr_assert(try_free(b, NULL), "free after the hold ended");
  cr_assert_str_eq(rig_buffer_dead(b), "freed");
  CHECK_FAILS(RIG_EINVAL, rig_claim_hold(b));
  rig_buffer_unref(b);
}

Test(holds, a_hold_through_a_borrow_keeps_unborrow_false) { /* BUF-73 */
  rig_device_t *mem = open_named("MEM:90");
  rig_buffer_t *b = create(rig_host(), 4096);
  rig_buffer_t *on_mem = borrow(mem, b);
  rig_buffer_t *part = view(on_mem, 8, 64);
  CHECK_OK(rig_claim_hold(part));  /* through a view of the borrow */
  bool ended = true;
  CHECK_OK(rig_buffer_unborrow(on_mem, NULL, &ended));
  cr_assert(!ended, "unborrow under a hold through the borrow");
  CHECK_OK(rig_claim_unhold(part));
  CHECK_OK(rig_buffer_unborrow(on_mem, NULL, &ended));
  cr_assert(ended, "unborrow once the hold ended");
  cr_assert_str_eq(rig_buffer_dead(part), "unborrowed");
  cr_assert_null(rig_buffer_dead(b));
  rig_buffer_unref(part);
  rig_buffer_unref(on_mem);
  rig_buffer_unref(b);
}

Test(holds, unhold_without_a_hold_is_refused) {
  rig_buffer_t *b = create(rig_host(), 64);
  CHECK_FAILS(RIG_EINVAL, rig_claim_unhold(b));
  CHECK_FAILS(RIG_EINVAL, rig_claim_hold(NULL));
  rig_buffer_unref(b);
}

static rig_dma_t dma_answer(void) {
  rig_dma_t out = {0};
  out.size = sizeof out;
  return out;
}

Test(dma, a_driver_that_cannot_describe_answers_eopen_and_the_memory_leaves_the_claims) {
  /* LOW-24 LOW-26 LOW-27 DRV-35 */
  rig_device_t *d = open_named("SIM:90");
  rig_buffer_t *b = create(d, 64 * 1024);
  rig_dma_t out = dma_answer();
  CHECK_FAILS(RIG_EOPEN, rig_buffer_dma(b, "0000:41:00.0", &out));
  cr_assert_null(rig_lost(d), "a refused DMA description loses nothing");
  /* Outside the claims for good, also where the driver refused. */
  cr_assert(!try_free(b, NULL), "free of memory described for DMA");
  /* It never returns to the cache: released, it goes back to the driver. */
  int64_t frees = sim_frees(d);
  int64_t before = rig_allocated(d);
  rig_buffer_unref(b);
  cr_assert_eq(sim_frees(d), frees + 1, "the memory went to the cache");
  cr_assert_eq(rig_allocated(d), before - 64 * 1024);
  CHECK_OK(rig_close(d));
}

Test(dma, refusals) { /* LOW-28 LOW-29 LOW-30 LOW-31 LOW-32 */
  rig_dma_t out = dma_answer();
  rig_device_t *mem = open_named("MEM:91");
  rig_buffer_t *h = create(rig_host(), 4096), *m = create(mem, 4096);
  CHECK_FAILS(RIG_EINVAL, rig_buffer_dma(h, "0000:41:00.0", &out));   /* the host's */
  CHECK_FAILS(RIG_EINVAL, rig_buffer_dma(m, "0000:41:00.0", &out));   /* a memory device's */
  rig_device_t *d = open_named("SIM:91");
  rig_buffer_t *empty = create(d, 0), *b = create(d, 4096);
  CHECK_FAILS(RIG_EINVAL, rig_buffer_dma(empty, "0000:41:00.0", &out));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_dma(b, NULL, &out));
  rig_dma_t small = {0};
  small.size = 4;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_dma(b, "0000:41:00.0", &small));
  bool exclusive = false;
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert(exclusive);
  CHECK_FAILS(RIG_EINVAL, rig_buffer_dma(b, "0000:41:00.0", &out));  /* held exclusive */
  rig_buffer_t *consumed = NULL;
  CHECK_OK(rig_claim_consume(b, "donated", &consumed));
  CHECK_OK(rig_claim_end(b));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_dma(b, "0000:41:00.0", &out));  /* dead */
  rig_buffer_t *other = create(d, 4096);
  CHECK_OK(rig_close(d));
  CHECK_LOST(d, rig_buffer_dma(other, "0000:41:00.0", &out));
  rig_buffer_unref(other);
  rig_buffer_unref(consumed);
  rig_buffer_unref(b);
  rig_buffer_unref(empty);
  rig_buffer_unref(m);
  rig_buffer_unref(h);
}
