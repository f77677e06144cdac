/* The clock, the rate and the verification of rig load's two forms. */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"
#include "load_verify.h"

#include <rig/rig.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double gigabytes_per_second(int64_t bytes, double seconds) {
  return seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0;
}

/* Reads n bytes of the file at fd from offset with pread. */
static bool pread_fully(int fd, uint8_t *out, int64_t n, int64_t offset) {
  for (int64_t done = 0; done < n;) {
    ssize_t r = pread(fd, out + done, (size_t)(n - done), offset + done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      fprintf(stderr, "rig: load: reading the file at %" PRId64 ": %s\n", offset + done,
              r == 0 ? "end of file" : strerror(errno));
      return false;
    }
    done += r;
  }
  return true;
}

bool verify_load(const char *path, int64_t offset, rig_buffer_t *b) {
  int64_t total = rig_buffer_bytes(b);
  int64_t chunk = total < LOAD_CHUNK_BYTES ? total : LOAD_CHUNK_BYTES;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "rig: load: %s: %s\n", path, strerror(errno));
    return false;
  }
  uint8_t *expected = malloc(chunk > 0 ? (size_t)chunk : 1);
  rig_buffer_t *back = NULL;
  bool ok = expected != NULL &&
            succeeded(rig_buffer_create(rig_host(), chunk, RIG_MEMORY_DEVICE, &back),
                      "create a host buffer");
  if (!expected) fputs("rig: out of memory\n", stderr);
  for (int64_t at = 0; ok && at < total; at += chunk) {
    int64_t n = total - at < chunk ? total - at : chunk;
    rig_buffer_t *part = NULL, *into = NULL;
    ok = pread_fully(fd, expected, n, offset + at) &&
         succeeded(rig_buffer_view(b, at, n, &part), "view of the buffer") &&
         succeeded(rig_buffer_view(back, 0, n, &into), "view of the host buffer") &&
         succeeded(rig_buffer_copy(part, into), "copy back");
    const uint8_t *got = rig_buffer_host(back);
    for (int64_t k = 0; ok && k < n; k++) {
      if (got[k] != expected[k]) {
        fprintf(stderr,
                "rig: load: file byte %" PRId64 " differs: %u in the file, %u in the buffer\n",
                offset + at + k, expected[k], got[k]);
        ok = false;
      }
    }
    rig_buffer_unref(into);
    rig_buffer_unref(part);
  }
  rig_buffer_unref(back);
  free(expected);
  close(fd);
  return ok;
}

