/* The devices a conformance suite runs on: RIG_TEST_DEVICES, a
 * comma-separated list of names (default "MEM:0,MEM:1").  Every driver
 * passes the same suite against its devices. */
#ifndef RIG_TEST_DEVICES_H
#define RIG_TEST_DEVICES_H

#include <rig/rig.h>

/* How many devices RIG_TEST_DEVICES names (at least 1). */
int test_device_count(void);
/* The name of test device i (0-based); i wraps around the list, so a
 * suite that needs two devices gets two where the list names two. */
const char *test_device_name(int i);
/* Opens test device i (rig_open), failing the current test if it cannot. */
rig_device_t *test_device(int i);
/* True iff the host addresses the memory of test device i's kind
 * (rig_device_runs_on_host, or a buffer of it has a host address). */
int test_device_host_addressed(int i);

#endif
