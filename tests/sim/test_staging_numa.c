/* Sim: staging memory of a device that states its NUMA node.
 *
 * A copy between host memory and such a device passes through staging
 * memory placed on that node (the io devices' issue: "staging sits on the
 * NUMA node of the device where it is known").  The placement itself is a
 * system call (mbind) whose effect a single-node machine cannot show; this
 * asserts that staged copies through node-placed staging move every byte
 * in both directions, beside a device that states no node, so that the
 * two kinds of staging never mix their bytes.
 */
#include <rig/rig.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "helpers.h"

static void round_trip(rig_device_t *d, int64_t n, uint8_t seed) {
  rig_buffer_t *src = create(rig_host(), n), *mid = create(d, n), *back = create(rig_host(), n);
  uint8_t *bytes = rig_buffer_host(src);
  for (int64_t i = 0; i < n; i++) bytes[i] = (uint8_t)(seed + i * 13 + i / 4099);
  CHECK_OK(rig_buffer_copy(src, mid));
  CHECK_OK(rig_buffer_copy(mid, back));
  cr_assert_eq(memcmp(rig_buffer_host(back), bytes, (size_t)n), 0, "%s: bytes differ after a staged round trip",
               rig_device_name(d));
  rig_buffer_unref(back);
  rig_buffer_unref(mid);
  rig_buffer_unref(src);
}

Test(staging, node_placed_staging_moves_every_byte) {
  rig_device_t *near = open_with("SIM:98", "numa_node=0");
  rig_device_t *anywhere = open_with("SIM:99", NULL);
  /* More than one staging allocation's worth, so both are taken in turn. */
  const int64_t n = (int64_t)70 << 20;
  round_trip(near, n, 1);
  round_trip(anywhere, n, 2);
  round_trip(near, 4096 + 7, 3);
  CHECK_OK(rig_close(near));
  CHECK_OK(rig_close(anywhere));
}
