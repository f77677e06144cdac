/* Sim: the growth of a device's queues.
 *
 * Asserts:
 *   DRV-09 (no lock of rig's held across driver calls, counted by the sim),
 *   SUB-38 (submit grows the queues first where the driver asks), SUB-45
 *   and RECL-42 (no memory for the growth: RIG_ENOMEM with the bytes after
 *   the rounds), DRV-69 DRV-71 (after Grown, room fits the work), DRV-72
 *   DRV-73 DRV-74 (at most four asks), DRV-75 (never asked of a driver whose
 *   room never answers RIG_GROW), SUB-40 (no value assigned when the work
 *   never reached the driver).
 * Not reached here, and why:
 *   DRV-70 (grow changes nothing the C functions read): an obligation of
 *     the driver, inspected in drivers/sim.
 */
#include <rig/rig.h>
#include <string.h>

#include "check.h"
#include "helpers.h"

Test(queues, submit_grows_the_queues_where_room_asks) { /* SUB-38 DRV-69 DRV-71 DRV-73 */
  rig_device_t *d = open_named("SIM:95");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *b = create(d, 4096);
  inj->grow_every(inj->device, 3, 0);
  uint64_t start = rig_submitted(d);
  for (int i = 0; i < 10; i++) {
    rig_point_t p = submit_fill(b, (uint8_t)i);
    cr_assert_eq(rig_point_value(p), start + 1 + (uint64_t)i, "values stay consecutive across growths");
  }
  cr_assert_eq(inj->grows(inj->device), 3, "one growth every third submit");
  unsigned char out[4096];
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, out, sizeof out, 0, sizeof out));
  cr_assert_eq(out[100], 9, "the last fill's byte");
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
}

Test(queues, a_growth_without_memory_answers_enomem_after_four_asks) {
  /* SUB-45 RECL-42 DRV-72 DRV-74 SUB-40 */
  rig_device_t *d = open_named("SIM:96");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *b = create(d, 4096);
  inj->grow_every(inj->device, 1, 8192);
  uint64_t before = rig_submitted(d);
  rig_point_t p;
  CHECK_NO_MEMORY(d, 8192, rig_buffer_submit_fill(b, 1, NULL, 0, &p));
  cr_assert_eq(inj->grows(inj->device), 4, "a submission asks grow at most four times");
  cr_assert_eq(rig_submitted(d), before, "no value was assigned");
  cr_assert_null(rig_lost(d), "no memory for a growth loses nothing");
  /* Once the queues can grow again, submits go on. */
  inj->grow_every(inj->device, 0, 0);
  CHECK_OK(rig_buffer_fill(b, 2));
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
}

Test(queues, grow_is_never_asked_where_room_never_answers_grow) { /* DRV-75 */
  rig_device_t *d = open_named("SIM:97");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *b = create(d, 4096);
  for (int i = 0; i < 20; i++) CHECK_OK(rig_buffer_fill(b, (uint8_t)i));
  cr_assert_eq(inj->grows(inj->device), 0);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
}

/* DRV-09: rig calls the driver's functions (but locate, peer and signaled)
 * on a thread that holds no lock of rig's.  A workload that allocates,
 * borrows (map_host, map_peer), copies, waits (sleep), frees, reclaims and
 * stops, with the sim counting the calls made while rig_holds() > 0. */
Test(queues, rig_holds_no_lock_across_driver_calls) { /* DRV-09 */
  rig_device_t *a = open_named("SIM:94"), *b = open_named("SIM:93");
  const rig_sim_inject_t *a_inj = sim_inject(a), *b_inj = sim_inject(b);
  a_inj->set_latency_us(a_inj->device, 2000);
  rig_buffer_t *host = create(rig_host(), 1 << 20);
  rig_buffer_t *on_a = create(a, 1 << 20), *on_b = create(b, 1 << 20);
  rig_buffer_t *host_on_a = borrow(a, host);
  CHECK_OK(rig_buffer_fill(on_a, 7));
  CHECK_OK(rig_buffer_copy(on_a, on_b));      /* a peer mapping */
  CHECK_OK(rig_buffer_copy(on_b, host_on_a)); /* through the borrow's mapping */
  CHECK_OK(rig_buffer_copy(host, on_a));      /* staged */
  rig_buffer_unref(host_on_a);
  rig_buffer_unref(on_a);
  rig_buffer_unref(on_b);
  rig_buffer_unref(host);
  CHECK_OK(rig_free_cache(a));
  CHECK_OK(rig_free_cache(b));
  CHECK_OK(rig_close(a));
  CHECK_OK(rig_close(b));
  cr_assert_eq(a_inj->calls_inside_lock(a_inj->device), 0);
  cr_assert_eq(b_inj->calls_inside_lock(b_inj->device), 0);
  cr_assert_gt(a_inj->frees(a_inj->device), 0, "the workload freed nothing");
}
