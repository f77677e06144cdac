/* Status checks shared by the Criterion suites. */
#ifndef RIG_TEST_CHECK_H
#define RIG_TEST_CHECK_H

#include <criterion/criterion.h>
#include <rig/rig.h>
#include <stdio.h>

/* The last error's text, copied right after the failing call: the
 * library's pointer lasts only until the thread's next call into rig. */
static inline const char *check_error_copy(void) {
  static char text[512];
  snprintf(text, sizeof text, "%s", rig_last_error());
  return text;
}

/* call answers RIG_OK. */
#define CHECK_OK(call)                                                               \
  do {                                                                               \
    rig_status_t check_status_ = (call);                                             \
    cr_assert(check_status_ == RIG_OK, "%s: %s: %s", #call, rig_status_name(check_status_), \
              check_error_copy());                                                   \
  } while (0)

/* call answers code, with a message. */
#define CHECK_FAILS(code, call)                                                      \
  do {                                                                               \
    rig_status_t check_status_ = (call);                                             \
    const char *check_why_ = check_error_copy();                                     \
    cr_assert(check_status_ == (code), "%s: got %s (%s), want %s", #call,            \
              rig_status_name(check_status_), check_why_, rig_status_name(code));    \
    cr_assert(check_why_[0] != '\0', "%s: no message", #call);                       \
  } while (0)

#endif
