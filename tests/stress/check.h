/* Assertions for the stress programs, which run without Criterion so that
 * they also run under ThreadSanitizer (Criterion cannot start under it:
 * its runner maps an arena at addresses ThreadSanitizer reserves). */
#ifndef RIG_STRESS_CHECK_H
#define RIG_STRESS_CHECK_H

#include <rig/rig.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                             \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                  \
      fprintf(stderr, "\n");                                         \
      exit(1);                                                       \
    }                                                                \
  } while (0)

#define CHECK_OK(call)                                                \
  do {                                                                \
    rig_status_t check_status_ = (call);                              \
    CHECK(check_status_ == RIG_OK, "%s: %s", rig_status_name(check_status_), rig_last_error()); \
  } while (0)

/* A small deterministic generator per thread (xorshift). */
static inline uint64_t next_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

#endif
