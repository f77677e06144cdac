/* rig demo: the main job, 1 MiB copied host -> MEM:0 -> MEM:1 -> host,
 * then verified. */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"

#include <rig/rig.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A device's name for messages; a point whose slot a later device took
 * names no device. */
static const char *device_label(const rig_device_t *d) {
  return d ? rig_device_name(d) : "(slot reused)";
}

enum { DEMO_BYTES = 1 << 20 };

/* The devices the demo's bytes travel through, in order; the first and the
 * last are two distinct buffers on the host. */
static const char *const demo_route[] = {"CPU", "MEM:0", "MEM:1", "CPU"};
enum { DEMO_HOPS = sizeof demo_route / sizeof demo_route[0] };

/* Byte i of the pattern: differs between neighbours and between bytes 256
 * and 65,536 apart, so a shifted or truncated copy shows. */
static uint8_t pattern_byte(int64_t i) {
  return (uint8_t)(i * 7 + (i >> 8) * 13 + (i >> 16) * 29 + 1);
}

static int write_pattern(void *bytes, int64_t n, void *context) {
  (void)context;
  uint8_t *b = bytes;
  for (int64_t i = 0; i < n; i++) b[i] = pattern_byte(i);
  return 0;
}

/* rig_buffer_read's callback: the first byte that differs from the
 * pattern, or -1. */
static int find_mismatch(void *bytes, int64_t n, void *context) {
  const uint8_t *b = bytes;
  int64_t *first_mismatch = context;
  *first_mismatch = -1;
  for (int64_t i = 0; i < n; i++) {
    if (b[i] != pattern_byte(i)) {
      *first_mismatch = i;
      break;
    }
  }
  return 0;
}

/* Creates one buffer of DEMO_BYTES on each device of the route. */
static bool create_route_buffers(rig_buffer_t *buffers[DEMO_HOPS]) {
  for (int i = 0; i < DEMO_HOPS; i++) {
    rig_device_t *d = NULL;
    if (!succeeded(rig_open(demo_route[i], NULL, &d), demo_route[i]) ||
        !succeeded(rig_buffer_create(d, DEMO_BYTES, RIG_MEMORY_DEVICE,
                                     &buffers[i]),
                   "create buffer"))
      return false;
  }
  return true;
}

/* Submits the copies along the route.  No copy waits on the one before
 * it: rig orders each after the last write of the memory it reads.
 * *last is the point of the last copy. */
static bool submit_route_copies(rig_buffer_t *buffers[DEMO_HOPS],
                                rig_point_t *last) {
  rig_box_t whole = rig_row(0, 0, DEMO_BYTES);
  for (int i = 0; i + 1 < DEMO_HOPS; i++) {
    if (!succeeded(rig_buffer_submit_copy(buffers[i], buffers[i + 1], &whole,
                                          1, NULL, 0, last),
                   "submit copy"))
      return false;
    printf("demo: copy %s -> %s, point %s:%" PRIu64 "\n", demo_route[i],
           demo_route[i + 1], device_label(rig_point_device(*last)),
           rig_point_value(*last));
  }
  return true;
}

static bool run_demo(rig_buffer_t *buffers[DEMO_HOPS]) {
  if (!create_route_buffers(buffers)) return false;
  if (!succeeded(rig_buffer_write(buffers[0], 1, write_pattern, NULL),
                 "write pattern"))
    return false;
  printf("demo: wrote %d bytes of pattern on %s\n", DEMO_BYTES, demo_route[0]);

  rig_point_t last = {0};
  if (!submit_route_copies(buffers, &last)) return false;
  if (!succeeded(rig_point_wait(last), "wait")) return false;

  int64_t first_mismatch = -1;
  if (!succeeded(rig_buffer_read(buffers[DEMO_HOPS - 1], 1, find_mismatch,
                                 &first_mismatch),
                 "read result"))
    return false;
  if (first_mismatch >= 0) {
    fprintf(stderr, "rig: demo: byte %" PRId64 " differs from the pattern\n",
            first_mismatch);
    return false;
  }
  printf("demo: ok (%d bytes verified)\n", DEMO_BYTES);
  return true;
}

int command_demo(int argc, char **argv) {
  if (argc != 0) return bad_argument("demo", argc, argv, 0);
  rig_buffer_t *buffers[DEMO_HOPS] = {0};
  bool ok = run_demo(buffers);
  for (int i = 0; i < DEMO_HOPS; i++) rig_buffer_unref(buffers[i]);
  return ok ? 0 : EXIT_FAILED;
}
