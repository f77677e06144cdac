/* Checks shared by the suites of a GPU driver on a machine where its
 * devices do not open, as on CI's machines (tests/gpu/test_*_absent.c).
 * Each fails the current test (cr_assert) where rig answers otherwise.
 * The suite's target defines RIG_TOOL, the path of the built `rig`. */
#ifndef RIG_TEST_ABSENT_DRIVER_H
#define RIG_TEST_ABSENT_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

/* The reason the device name is unavailable, from its open, which must
 * answer RIG_EOPEN with "NAME: why", write no device and leave the process
 * not failed; or NULL where the test must skip: name opens (it is closed
 * again) or no driver of this build opens it (RIG_EINVAL). */
const char *absent_reason(const char *name);

/* Asserts that another open of name answers RIG_EOPEN with the same reason:
 * the failed open left nothing opening and changed nothing. */
void assert_open_fails_again(const char *name, const char *reason);

/* Asserts that rig_probe lists the host as available and name as
 * unavailable with reason, and no other name that starts as prefix does
 * ("AMD:"): a driver that opens nothing lists only its first device. */
void assert_probe_lists_unavailable(const char *name, const char *prefix, const char *reason);

/* Asserts that `rig devices` lists the host as available and name as
 * "NAME: unavailable: REASON", and `rig devices --json` lists name with
 * "available": false and reason (which holds no character JSON escapes). */
void assert_tool_lists_unavailable(const char *name, const char *reason);

/* Asserts that other devices open and work: bytes pass through SIM:0's
 * copy engine and MEM:0 unchanged, and a fill on SIM:0 sets its bytes. */
void assert_other_devices_work(void);

#endif
