/* Sim: the growth of a device's queues.
 *
 * Asserts:
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
#include "sim_inject.h"

static rig_device_t *sim(const char *name, const rig_sim_inject_t **inj) {
  rig_device_t *d = NULL;
  CHECK_OK(rig_open(name, NULL, &d));
  *inj = rig_device_capability(d, RIG_SIM_INJECT_KEY);
  cr_assert_not_null(*inj);
  return d;
}

Test(queues, submit_grows_the_queues_where_room_asks) { /* SUB-38 DRV-69 DRV-71 DRV-73 */
  const rig_sim_inject_t *inj;
  rig_device_t *d = sim("SIM:95", &inj);
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b));
  inj->grow_every(inj->device, 3, 0);
  uint64_t start = rig_submitted(d);
  for (int i = 0; i < 10; i++) {
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_fill(b, (uint8_t)i, NULL, 0, &p));
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
  const rig_sim_inject_t *inj;
  rig_device_t *d = sim("SIM:96", &inj);
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b));
  inj->grow_every(inj->device, 1, 8192);
  uint64_t before = rig_submitted(d);
  rig_point_t p;
  CHECK_FAILS(RIG_ENOMEM, rig_buffer_submit_fill(b, 1, NULL, 0, &p));
  cr_assert_eq(rig_error_device(), d);
  cr_assert_eq(rig_error_bytes(), 8192);
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
  const rig_sim_inject_t *inj;
  rig_device_t *d = sim("SIM:97", &inj);
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b));
  for (int i = 0; i < 20; i++) CHECK_OK(rig_buffer_fill(b, (uint8_t)i));
  cr_assert_eq(inj->grows(inj->device), 0);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
}
