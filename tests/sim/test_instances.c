/* Instances of a device's hardware (rig.h's rig_open: NAME~TAG) and the sim
 * driver's fault_at knob, which together let rigd keep one client's fault
 * from its other clients (DESIGN.md "The per-host service").
 *
 * No rule ID: instances and the knob are rig's additions to the spec.  What
 * the tests assert is rig.h's statement of them: an instance is a device of
 * its own, unequal to NAME's and to other instances, under its own name,
 * with its own memory and faults; an empty tag answers RIG_EINVAL; a sim
 * opened with fault_at=N is lost at its value N with the knob's reason.
 * Each test opens sim names of its own. */
#include <criterion/criterion.h>
#include <string.h>

#include "check.h"
#include "helpers.h"

Test(instances, the_fault_at_knob_loses_the_device_at_its_value) {
  rig_device_t *d = open_with("SIM:80", "fault_at=2");
  rig_buffer_t *b = create(d, 4096);
  CHECK_OK(rig_point_wait(submit_fill(b, 1)), "value 1 runs");
  CHECK_LOST(d, rig_point_wait(submit_fill(b, 2)), "value 2 faults");
  cr_assert_str_eq(rig_lost(d), "value 2 faulted (the fault_at knob)");
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
}

Test(instances, an_instance_is_a_device_of_its_own) {
  rig_device_t *hardware = open_named("SIM:81");
  rig_device_t *a = open_with("SIM:81~a", "fault_at=1");
  rig_device_t *b = open_named("SIM:81~b");
  cr_assert(!rig_device_equal(a, hardware) && !rig_device_equal(a, b) && !rig_device_equal(b, hardware),
            "each instance is a device of its own");
  cr_assert_str_eq(rig_device_name(a), "SIM:81~a");
  cr_assert(open_named("SIM:81~a") == a, "a name opens one device at a time");
  rig_buffer_t *on_a = create(a, 4096), *on_b = create(b, 4096), *on_hardware = create(hardware, 4096);
  CHECK_LOST(a, rig_point_wait(submit_fill(on_a, 1)), "the instance opened with fault_at=1 faults");
  CHECK_OK(rig_point_wait(submit_fill(on_b, 2)), "another instance runs on after the fault");
  CHECK_OK(rig_point_wait(submit_fill(on_hardware, 3)), "so does the device of the name itself");
  cr_assert_null(rig_lost(b));
  cr_assert_null(rig_lost(hardware));
  uint8_t byte = 0;
  CHECK_OK(rig_buffer_blit_to_bytes(on_b, 0, &byte, 1, 0, 1));
  cr_assert_eq(byte, 2, "the other instance's memory holds its work");
  rig_buffer_unref(on_a);
  rig_buffer_unref(on_b);
  rig_buffer_unref(on_hardware);
  CHECK_OK(rig_close(a));
  CHECK_OK(rig_close(b));
  CHECK_OK(rig_close(hardware));
}

Test(instances, an_empty_tag_is_refused) {
  rig_device_t *d = NULL;
  cr_assert_eq(rig_open("SIM:82~", NULL, &d), RIG_EINVAL);
  cr_assert_null(d);
  cr_assert_eq(rig_open("SIM:82~@rigd", NULL, &d), RIG_EINVAL);
}
