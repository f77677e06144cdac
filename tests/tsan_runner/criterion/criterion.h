/* The part of Criterion's test API that rig's suites use, for builds with
 * ThreadSanitizer, where Criterion's own runner cannot start: it maps its
 * arena at random fixed addresses, some of which ThreadSanitizer reserves
 * (upstream issue Snaipe/Criterion#274).  The suites compile unchanged
 * against this header and run under runner.c, which runs each test in a
 * process of its own, as Criterion does.
 *
 * What it offers: Test and TestSuite with the options .init, .fini,
 * .timeout, .signal, .exit_code, .disabled and .description; the
 * cr_assert and cr_expect families the suites use, each taking an optional
 * printf format and arguments; cr_skip_test; cr_log_info. */
#pragma once

/* A check without a message passes "" as its format; a test's options
 * name only the fields they set. */
#pragma GCC diagnostic ignored "-Wformat-zero-length"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The options of a test or a suite, in Criterion's order of fields. */
struct rig_cr_options {
  void (*init)(void);
  void (*fini)(void);
  int signal;
  int exit_code;
  bool disabled;
  const char *description;
  double timeout;
};

struct rig_cr_test {
  const char *suite;
  const char *name;
  void (*run)(void);
  const struct rig_cr_options *options;
  struct rig_cr_test *next;
};

struct rig_cr_suite {
  const char *name;
  const struct rig_cr_options *options;
  struct rig_cr_suite *next;
};

void rig_cr_register_test(struct rig_cr_test *test);
void rig_cr_register_suite(struct rig_cr_suite *suite);
/* Reports a failed check at file:line: the expression's text, then the
 * message format makes (which may be empty).  A fatal one ends the test. */
void rig_cr_fail(const char *file, int line, bool fatal, const char *expression, const char *format, ...)
    __attribute__((format(printf, 5, 6)));
/* Ends the test, skipped, with the reason format makes. */
__attribute__((noreturn)) void rig_cr_skip(const char *format, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#define RIG_CR_JOIN(a, b) a##_##b

#define Test(Suite, Name, ...)                                                                          \
  static void RIG_CR_JOIN(Suite, Name##_run)(void);                                                     \
  static const struct rig_cr_options RIG_CR_JOIN(Suite, Name##_options) = {__VA_ARGS__};               \
  static struct rig_cr_test RIG_CR_JOIN(Suite, Name##_test) = {                                         \
      #Suite, #Name, RIG_CR_JOIN(Suite, Name##_run), &RIG_CR_JOIN(Suite, Name##_options), NULL};        \
  __attribute__((constructor)) static void RIG_CR_JOIN(Suite, Name##_register)(void) {                  \
    rig_cr_register_test(&RIG_CR_JOIN(Suite, Name##_test));                                             \
  }                                                                                                     \
  static void RIG_CR_JOIN(Suite, Name##_run)(void)

#define TestSuite(Name, ...)                                                                            \
  static const struct rig_cr_options RIG_CR_JOIN(Name, suite_options) = {__VA_ARGS__};                  \
  static struct rig_cr_suite RIG_CR_JOIN(Name, suite) = {#Name, &RIG_CR_JOIN(Name, suite_options), NULL}; \
  __attribute__((constructor)) static void RIG_CR_JOIN(Name, suite_register)(void) {                    \
    rig_cr_register_suite(&RIG_CR_JOIN(Name, suite));                                                   \
  }

/* A check: expression is the text reported; the optional arguments are a
 * format and its arguments, pasted after "" so that none is needed. */
#define RIG_CR_CHECK(fatal, holds, expression, ...)                           \
  do {                                                                        \
    if (!(holds)) rig_cr_fail(__FILE__, __LINE__, fatal, expression, "" __VA_ARGS__); \
  } while (0)

#define RIG_CR_COMPARE(fatal, op, a, b, ...) RIG_CR_CHECK(fatal, (a)op(b), #a " " #op " " #b, __VA_ARGS__)

/* Strings compare by their bytes; NULL equals nothing. */
static inline int rig_cr_strcmp(const char *a, const char *b) { return a && b ? strcmp(a, b) : (a == b ? 0 : 1); }

#define cr_assert(c, ...) RIG_CR_CHECK(true, c, #c, __VA_ARGS__)
#define cr_assert_not(c, ...) RIG_CR_CHECK(true, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_null(p, ...) RIG_CR_CHECK(true, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) RIG_CR_CHECK(true, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) RIG_CR_COMPARE(true, ==, a, b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) RIG_CR_COMPARE(true, !=, a, b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) RIG_CR_COMPARE(true, <, a, b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) RIG_CR_COMPARE(true, <=, a, b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) RIG_CR_COMPARE(true, >, a, b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) RIG_CR_COMPARE(true, >=, a, b, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) RIG_CR_CHECK(true, rig_cr_strcmp(a, b) == 0, #a " equals " #b, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) RIG_CR_CHECK(true, rig_cr_strcmp(a, b) != 0, #a " differs from " #b, __VA_ARGS__)
#define cr_assert_float_eq(a, b, epsilon, ...) \
  RIG_CR_CHECK(true, (a) - (b) <= (epsilon) && (b) - (a) <= (epsilon), #a " is " #b " within " #epsilon, __VA_ARGS__)
#define cr_assert_fail(...) rig_cr_fail(__FILE__, __LINE__, true, "cr_assert_fail", "" __VA_ARGS__)

#define cr_expect(c, ...) RIG_CR_CHECK(false, c, #c, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) RIG_CR_COMPARE(false, ==, a, b, __VA_ARGS__)
#define cr_expect_not(c, ...) RIG_CR_CHECK(false, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_expect_null(p, ...) RIG_CR_CHECK(false, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) RIG_CR_CHECK(false, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_neq(a, b, ...) RIG_CR_COMPARE(false, !=, a, b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...) RIG_CR_COMPARE(false, <, a, b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) RIG_CR_COMPARE(false, <=, a, b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) RIG_CR_COMPARE(false, >, a, b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) RIG_CR_COMPARE(false, >=, a, b, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) RIG_CR_CHECK(false, rig_cr_strcmp(a, b) == 0, #a " equals " #b, __VA_ARGS__)
#define cr_expect_str_neq(a, b, ...) RIG_CR_CHECK(false, rig_cr_strcmp(a, b) != 0, #a " differs from " #b, __VA_ARGS__)
#define cr_expect_fail(...) rig_cr_fail(__FILE__, __LINE__, false, "cr_expect_fail", "" __VA_ARGS__)

#define cr_skip_test(...) rig_cr_skip("" __VA_ARGS__)
#define cr_log_info(...) (fprintf(stderr, "[----] " __VA_ARGS__), fputc('\n', stderr))

#ifdef __cplusplus
/* The statement throws an exception of the type (or one derived from it). */
#define cr_assert_throw(statement, type, ...)                                          \
  do {                                                                                 \
    bool rig_cr_threw = false;                                                         \
    try {                                                                              \
      statement;                                                                       \
    } catch (const type &) {                                                           \
      rig_cr_threw = true;                                                             \
    } catch (...) {                                                                    \
    }                                                                                  \
    RIG_CR_CHECK(true, rig_cr_threw, #statement " throws " #type, __VA_ARGS__);        \
  } while (0)
#endif
