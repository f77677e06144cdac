/* The CUDA driver (CUDA:n) on a machine where libcuda.so.1 does not load or
 * serves no GPU, as CI's machines are: an open of CUDA:0 answers RIG_EOPEN
 * with the reason, the probe and `rig devices` (text and JSON) list CUDA:0
 * as unavailable with that reason, and nothing else of rig changes: the
 * other devices open and work.  Each test skips itself, saying so, where
 * CUDA:0 opens (a machine with an NVIDIA GPU: tests/gpu/cuda.sh runs the
 * CUDA suite there).
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

#define REASON_OR_SKIP(reason)                   \
  const char *reason = absent_reason("CUDA:0"); \
  if (!reason) cr_skip_test("CUDA:0 opens on this machine: tests/gpu/cuda.sh checks it")

Test(cuda_absent, open_answers_eopen_with_the_cause) { /* DEV-04, ERR-02, ERR-03 */
  REASON_OR_SKIP(reason);
  /* The cause: the library, CUDA's initialisation, or no device. */
  cr_assert(strstr(reason, "libcuda.so.1") || strstr(reason, "cuInit") || strstr(reason, "CUDA device"),
            "the reason names no cause: %s", reason);
  assert_open_fails_again("CUDA:0", reason);
  assert_open_fails_again("CUDA:1", reason);
}

Test(cuda_absent, probe_lists_cuda0_unavailable_with_the_reason) { /* DEV-04 */
  REASON_OR_SKIP(reason);
  assert_probe_lists_unavailable("CUDA:0", "CUDA:", reason);
}

Test(cuda_absent, rig_devices_lists_cuda0_unavailable_with_the_reason) { /* DEV-04 */
  REASON_OR_SKIP(reason);
  assert_tool_lists_unavailable("CUDA:0", reason);
}

Test(cuda_absent, other_devices_open_and_work_after_the_failed_open) { /* ERR-01, ERR-02, ERR-03 */
  REASON_OR_SKIP(reason);
  assert_other_devices_work();
}
