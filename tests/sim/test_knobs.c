/* Sim devices: the knobs of RIG_SIM and of rig_open's configuration
 * (drivers/sim/), checked as the open reads them.
 *
 * Asserts: DEV-04 (an open that is misused answers invalid-argument, one
 *   whose device cannot be opened RIG_EOPEN with the reason): a key the
 *   sim has not, in the configuration, answers RIG_EINVAL naming it and
 *   the sim's keys; a bad value in the configuration answers RIG_EINVAL,
 *   in RIG_SIM RIG_EOPEN, each naming the knob, its value and its source;
 *   a refused open leaves the name unopened.
 */
#include <criterion/criterion.h>
#include <rig/rig.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "helpers.h"

/* rig_open(name) with config answers status, with a message that holds
 * each of the texts. */
static void expect_refused(rig_status_t status, const char *name, const char *config, const char *const *texts,
                           size_t ntexts) {
  rig_open_options_t options = {sizeof options, config};
  rig_device_t *d = (rig_device_t *)1;
  rig_status_t s = rig_open(name, &options, &d);
  const char *why = check_error_copy();
  cr_assert_eq(s, status, "%s with \"%s\": %s (%s), want %s", name, config, rig_status_name(s), why,
               rig_status_name(status));
  cr_assert_null(d);
  for (size_t i = 0; i < ntexts; i++)
    cr_assert(strstr(why, texts[i]) != NULL, "%s with \"%s\": \"%s\" does not say \"%s\"", name, config, why,
              texts[i]);
}
#define EXPECT_REFUSED(status, name, config, ...)                                                   \
  do {                                                                                              \
    const char *const texts_[] = {__VA_ARGS__};                                                     \
    expect_refused(status, name, config, texts_, sizeof texts_ / sizeof texts_[0]);                 \
  } while (0)

Test(knobs, an_unknown_key_in_the_configuration_is_refused_naming_it) { /* DEV-04 */
  EXPECT_REFUSED(RIG_EINVAL, "SIM:70", "latency=5", "SIM:70", "\"latency\"", "the configuration", "latency_us",
                 "hang_ms");
  EXPECT_REFUSED(RIG_EINVAL, "SIM:70", "hang_ms=100,Hang_ms=3", "\"Hang_ms\"");
  EXPECT_REFUSED(RIG_EINVAL, "MEM:70", "budgt=4K", "MEM:70", "\"budgt\"", "budget");
  /* The refused opens left the names unopened: a good open asks the driver. */
  rig_device_t *d = open_with("SIM:70", "latency_us=5");
  cr_assert_null(rig_lost(d));
  d = open_with("MEM:70", "budget=4K");
  cr_assert_eq(rig_budget(d), 4096);
}

Test(knobs, a_bad_knob_in_the_configuration_names_it) { /* DEV-04 */
  EXPECT_REFUSED(RIG_EINVAL, "SIM:71", "hang_ms=0", "the configuration's hang_ms=0");
  EXPECT_REFUSED(RIG_EINVAL, "SIM:71", "commit_every=x", "the configuration's commit_every=x", "not an integer");
  EXPECT_REFUSED(RIG_EINVAL, "SIM:71", "copy_gbps=-1", "the configuration's copy_gbps=-1");
  EXPECT_REFUSED(RIG_EINVAL, "SIM:71", "budget=lots", "the configuration's budget=lots");
  EXPECT_REFUSED(RIG_EINVAL, "SIM:71", "latency_us", "\"latency_us\"", "key=value");
}

Test(knobs, a_bad_knob_of_rig_sim_names_it_and_rig_sim) { /* DEV-04 */
  /* Criterion runs each test in a process of its own: RIG_SIM is this
   * test's alone. */
  cr_assert_eq(setenv("RIG_SIM", "commit_every=0", 1), 0);
  EXPECT_REFUSED(RIG_EOPEN, "SIM:72", "", "RIG_SIM's commit_every=0");
  /* The configuration's knob, where it sets one, is read instead. */
  open_with("SIM:72", "commit_every=4");
  cr_assert_eq(setenv("RIG_SIM", "fault_at=3", 1), 0);
  EXPECT_REFUSED(RIG_EOPEN, "SIM:73", "", "\"fault_at\"", "RIG_SIM", "latency_us");
}
