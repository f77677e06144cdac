/* The ROCr driver (AMD:n) on a machine where ROCr serves no GPU, as CI's
 * machines are: no libhsa-runtime64.so.1, or the library without the
 * amdgpu kernel driver (/dev/kfd), or no GPU agent.  An open of AMD:0
 * answers RIG_EOPEN with the reason, the probe and `rig devices` list
 * AMD:0 as unavailable with that reason, and nothing else of rig changes.
 * Each test skips itself where AMD:0 opens (a machine with an AMD GPU) or
 * where librig was built without the driver (no HSA headers).
 *
 * Asserts: DEV-04 (the open's Error why: RIG_EOPEN with the reason), ERR-01
 *   (rig's state stays consistent after the failed open: other devices
 *   open, copy and fill), ERR-02 and ERR-03 (the failed open leaves nothing
 *   behind: the name answers the same again; the process has not failed).
 */
#include <rig/rig.h>

#include <string.h>

#include "absent_driver.h"
#include "check.h"

#define REASON_OR_SKIP(reason)                  \
  const char *reason = absent_reason("AMD:0"); \
  if (!reason) cr_skip_test("AMD:0 opens here, or librig has no ROCr driver")

Test(rocr_absent, open_answers_eopen_with_the_cause) { /* DEV-04, ERR-02, ERR-03 */
  REASON_OR_SKIP(reason);
  /* The cause: the library, ROCr's initialisation, or no GPU agent. */
  cr_assert(strstr(reason, "libhsa-runtime64.so.1") || strstr(reason, "hsa_init failed") ||
                strstr(reason, "no GPU agent"),
            "the reason names no cause: %s", reason);
  assert_open_fails_again("AMD:0", reason);
  assert_open_fails_again("AMD:1", reason);
}

Test(rocr_absent, probe_lists_amd0_unavailable_with_the_reason) { /* DEV-04 */
  REASON_OR_SKIP(reason);
  assert_probe_lists_unavailable("AMD:0", "AMD:", reason);
}

Test(rocr_absent, rig_devices_lists_amd0_unavailable_with_the_reason) { /* DEV-04 */
  REASON_OR_SKIP(reason);
  assert_tool_lists_unavailable("AMD:0", reason);
}

Test(rocr_absent, other_devices_open_and_work_after_the_failed_open) { /* ERR-01, ERR-02, ERR-03 */
  REASON_OR_SKIP(reason);
  assert_other_devices_work();
}
