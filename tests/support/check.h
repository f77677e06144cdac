/* Status checks shared by the Criterion suites.
 *
 * Each check takes the call (any expression of type rig_status_t) and, after
 * it, optionally a printf format and its arguments that say what the call
 * is for, as cr_assert takes a message:
 *
 *   CHECK_OK(rig_close(d));
 *   CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(a, b), "%s: a misfit", name);
 *
 * A failed check prints that context, the call's text, the status and the
 * last error's message, and ends the test (cr_assert). */
#ifndef RIG_TEST_CHECK_H
#define RIG_TEST_CHECK_H

#include <criterion/criterion.h>
#include <rig/rig.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The last error's text, copied right after the failing call: the
 * library's pointer lasts only until the thread's next call into rig. */
static inline const char *check_error_copy(void) {
  static _Thread_local char text[512];
  snprintf(text, sizeof text, "%s", rig_last_error());
  return text;
}

/* Writes "context: " into out, the context being format and its arguments. */
__attribute__((format(printf, 3, 4))) static inline void check_context_(char *out, size_t n,
                                                                        const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int length = vsnprintf(out, n, format, ap);
  va_end(ap);
  if (length >= 0 && (size_t)length + 2 < n) strcat(out, ": ");
}

/* Declares name, the context a check prints before the call's text: empty,
 * or "context: " where the check was given one. */
#define CHECK_CONTEXT_(name, ...)                                                                 \
  char name[256] = "";                                                                            \
  __VA_OPT__(check_context_(name, sizeof name, __VA_ARGS__);)

/* call answers RIG_OK. */
#define CHECK_OK(call, ...)                                                                       \
  do {                                                                                            \
    rig_status_t check_status_ = (call);                                                          \
    const char *check_why_ = check_error_copy();                                                  \
    CHECK_CONTEXT_(check_context_text_, __VA_ARGS__);                                             \
    cr_assert(check_status_ == RIG_OK, "%s%s: %s: %s", check_context_text_, #call,                \
              rig_status_name(check_status_), check_why_);                                        \
  } while (0)

/* call answers code, with a message. */
#define CHECK_FAILS(code, call, ...)                                                              \
  do {                                                                                            \
    rig_status_t check_status_ = (call);                                                          \
    const char *check_why_ = check_error_copy();                                                  \
    CHECK_CONTEXT_(check_context_text_, __VA_ARGS__);                                             \
    cr_assert(check_status_ == (code), "%s%s: got %s (%s), want %s", check_context_text_,         \
              #call, rig_status_name(check_status_), check_why_, rig_status_name(code));          \
    cr_assert(check_why_[0] != '\0', "%s%s: %s without a message", check_context_text_,           \
              #call, rig_status_name(check_status_));                                             \
  } while (0)

/* call answers RIG_ELOST for device: the error names device
 * (rig_error_device) and its message reads "NAME lost: why", why being
 * what rig_lost(device) answers (ERR-24 ERR-33 ERR-34). */
#define CHECK_LOST(device, call, ...)                                                             \
  do {                                                                                            \
    rig_status_t check_status_ = (call);                                                          \
    const char *check_why_ = check_error_copy();                                                  \
    const rig_device_t *check_named_ = rig_error_device();                                        \
    const rig_device_t *check_device_ = (device);                                                 \
    CHECK_CONTEXT_(check_context_text_, __VA_ARGS__);                                             \
    cr_assert(check_status_ == RIG_ELOST, "%s%s: got %s (%s), want RIG_ELOST",                    \
              check_context_text_, #call, rig_status_name(check_status_), check_why_);            \
    cr_assert(check_named_ == check_device_, "%s%s: the error names %s, want %s",                 \
              check_context_text_, #call,                                                         \
              check_named_ ? rig_device_name(check_named_) : "no device",                         \
              rig_device_name(check_device_));                                                    \
    char check_want_[512];                                                                        \
    const char *check_reason_ = rig_lost(check_device_);                                          \
    snprintf(check_want_, sizeof check_want_, "%s lost: %s",                                      \
             rig_device_name(check_device_), check_reason_ ? check_reason_ : "(not lost)");       \
    cr_assert(strcmp(check_why_, check_want_) == 0, "%s%s: the message \"%s\", want \"%s\"",      \
              check_context_text_, #call, check_why_, check_want_);                               \
  } while (0)

/* call answers RIG_ENOMEM, with a message, for bytes bytes on device
 * (rig_error_device, rig_error_bytes). */
#define CHECK_NO_MEMORY(device, bytes, call, ...)                                                 \
  do {                                                                                            \
    rig_status_t check_status_ = (call);                                                          \
    const char *check_why_ = check_error_copy();                                                  \
    const rig_device_t *check_named_ = rig_error_device();                                        \
    int64_t check_bytes_ = rig_error_bytes();                                                     \
    const rig_device_t *check_device_ = (device);                                                 \
    CHECK_CONTEXT_(check_context_text_, __VA_ARGS__);                                             \
    cr_assert(check_status_ == RIG_ENOMEM, "%s%s: got %s (%s), want RIG_ENOMEM",                  \
              check_context_text_, #call, rig_status_name(check_status_), check_why_);            \
    cr_assert(check_why_[0] != '\0', "%s%s: RIG_ENOMEM without a message",                        \
              check_context_text_, #call);                                                        \
    cr_assert(check_named_ == check_device_, "%s%s: the error names %s, want %s",                 \
              check_context_text_, #call,                                                         \
              check_named_ ? rig_device_name(check_named_) : "no device",                         \
              rig_device_name(check_device_));                                                    \
    cr_assert(check_bytes_ == (int64_t)(bytes), "%s%s: the error's bytes are %lld, want %lld",    \
              check_context_text_, #call, (long long)check_bytes_, (long long)(bytes));           \
  } while (0)

#endif
