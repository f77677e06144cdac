/* Sim: the guarantees of rig to its drivers (rig-edge-driver.txt), checked
 * by the sim as rig calls it, over a workload that allocates, borrows,
 * copies between peers and through staging, frees, reclaims, faults,
 * closes and reopens.
 *
 * Asserts:
 *   DRV-01 DRV-88 (one stop, with no counted call under way), DRV-05 (no
 *   counted call after the stop), DRV-30 DRV-31 DRV-42 (each region freed
 *   once, on the device that made it), DRV-32 (a region freed after the
 *   map_peer regions over it), DRV-33 (map_peer of two distinct devices),
 *   DRV-40 (alloc of a positive multiple of 4), DRV-44 DRV-98 (frees after
 *   the stop, once the word reads the last value), DRV-47 DRV-48 (map_host
 *   of a page start, on a device that maps host memory), DRV-09 DRV-22.
 * Not reached here, and why:
 *   DRV-34 (map_peer only within one driver key): the sim is the only
 *   driver with peers today.
 */
#include <rig/rig.h>

#include "check.h"
#include "helpers.h"
#include "sim_inject.h"

static void expect_kept(rig_device_t *d) {
  const rig_sim_inject_t *inj = sim_inject(d);
  int64_t count = 0;
  const char *first = inj->breaches(inj->device, &count);
  cr_assert_eq(count, 0, "%s: rig broke a guarantee to its driver %lld times; first: %s", rig_device_name(d),
               (long long)count, first ? first : "");
  cr_assert_eq(inj->calls_inside_lock(inj->device), 0);
  cr_assert_eq(inj->calls_unmasked(inj->device), 0);
}

Test(contract, a_workload_keeps_every_guarantee) {
  rig_device_t *a = open_with("SIM:80", "latency_us=500"), *b = open_named("SIM:81");
  rig_buffer_t *host = create(rig_host(), 3 << 20);       /* on a page: borrowable */
  rig_buffer_t *odd = create(rig_host(), 1001);           /* 1001 bytes: whole words */
  rig_buffer_t *on_a = create(a, 3 << 20), *on_b = create(b, 3 << 20);
  rig_buffer_t *small_a = create(a, 1001);
  rig_buffer_t *borrowed = borrow(a, host);
  CHECK_OK(rig_buffer_fill(on_a, 1));
  CHECK_OK(rig_buffer_copy(on_a, on_b));                  /* peer mapping */
  CHECK_OK(rig_buffer_copy(on_b, borrowed));              /* through the host mapping */
  CHECK_OK(rig_buffer_copy(host, on_a));                  /* staging */
  CHECK_OK(rig_buffer_copy(odd, small_a));
  bool freed = false;
  CHECK_OK(rig_buffer_free(on_b, NULL, &freed));          /* returns after its work */
  cr_assert(freed);
  rig_buffer_unref(borrowed);
  rig_buffer_unref(on_b);
  CHECK_OK(rig_free_cache(a));
  CHECK_OK(rig_free_cache(b));
  /* A fault, then the close that stops the device with memory still out. */
  sim_fault_next(a, "contract fault");
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_fill(on_a, 2, NULL, 0, &p));
  CHECK_FAILS(RIG_ELOST, rig_point_wait(p));
  CHECK_OK(rig_close(a));
  await_stopped(a);
  rig_buffer_unref(on_a);                                 /* frees after the stop */
  rig_buffer_unref(small_a);
  CHECK_OK(rig_free_cache(a));
  /* The name again: a new device. */
  rig_device_t *again = open_named("SIM:80");
  rig_buffer_t *fresh = create(again, 4096);
  CHECK_OK(rig_buffer_fill(fresh, 3));
  rig_buffer_unref(fresh);
  CHECK_OK(rig_close(again));
  CHECK_OK(rig_close(b));
  rig_buffer_unref(odd);
  rig_buffer_unref(host);
  expect_kept(a);
  expect_kept(b);
  expect_kept(again);
}

Test(contract, a_word_of_the_drivers_own_goes_back_once_the_device_leaves_its_slot) {
  /* DEV-21, DRV-42, DRV-77: a sim whose word is its own (own_word=1) is read
   * through signaled(), which the sim checks is never called once its word
   * is freed, and the word's region goes back to free once the closed
   * device has left its slot. */
  rig_device_t *d = open_with("SIM:82", "own_word=1");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *b = create(d, 4096);
  CHECK_OK(rig_buffer_fill(b, 5));
  uint64_t before = 0;
  CHECK_OK(rig_signaled(d, &before));
  cr_assert_eq(before, rig_submitted(d), "the word of the driver's own shows the work done");
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(d)); /* the buffer's memory back to the driver */
  int64_t frees = inj->frees(inj->device);
  CHECK_OK(rig_close(d));      /* holding nothing, it leaves its slot */
  await_stopped(d);
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(inj->frees(inj->device), frees + 1, "the word's region went back, once");
  uint64_t after = 0;
  CHECK_OK(rig_signaled(d, &after));
  cr_assert_eq(after, rig_submitted(d), "the last value stays readable once the word went back");
  rig_device_t *again = open_named("SIM:82"); /* the slot may be taken again */
  CHECK_OK(rig_close(again));
  expect_kept(d);
}
