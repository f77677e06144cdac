/* rig load FILE --device NAME [--offset N] [--length N] [--verify]: reads
 * a file (or a range of it) into a new buffer on the device NAME through
 * the io device DISK, showing its progress; --verify compares the buffer's
 * bytes with the file's, read by pread. */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"

#include <rig/disk.h>
#include <rig/rig.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The bytes each copy of a load moves: small enough that progress moves,
 * large enough that the io device's transfers stay deep. */
enum { LOAD_CHUNK_BYTES = 64 << 20 };

typedef struct load_options {
  const char *path;
  const char *device;
  int64_t offset;
  int64_t length; /* -1: to the file's end */
  bool verify;
} load_options_t;

/* A size such as 4096, 64K, 16M or 2G (powers of 1024); false if s is not
 * one or overflows. */
static bool parse_size(const char *s, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long n = strtoll(s, &end, 10);
  if (end == s || errno != 0 || n < 0) return false;
  int shift = 0;
  switch (*end) {
  case 'K': case 'k': shift = 10; end++; break;
  case 'M': case 'm': shift = 20; end++; break;
  case 'G': case 'g': shift = 30; end++; break;
  default: break;
  }
  if (*end != '\0' || n > (INT64_MAX >> shift)) return false;
  *out = (int64_t)n << shift;
  return true;
}

/* A size option's value, or false having said which option's value is
 * not a size. */
static bool parse_size_option(const char *option, const char *value, int64_t *out) {
  if (parse_size(value, out)) return true;
  fprintf(stderr, "rig load: %s takes a size (4096, 64K, 16M, 2G), not '%s'\n", option, value);
  return false;
}

/* 0, or the exit status of a usage error (said on stderr). */
static int parse_load_options(int argc, char **argv, load_options_t *o) {
  *o = (load_options_t){.length = -1};
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (strcmp(a, "--device") == 0 && has_value) {
      o->device = argv[++i];
    } else if (strcmp(a, "--offset") == 0 && has_value) {
      if (!parse_size_option(a, argv[++i], &o->offset)) return usage_error();
    } else if (strcmp(a, "--length") == 0 && has_value) {
      if (!parse_size_option(a, argv[++i], &o->length)) return usage_error();
    } else if (strcmp(a, "--verify") == 0) {
      o->verify = true;
    } else if (a[0] != '-' && !o->path) {
      o->path = a;
    } else {
      return bad_argument("load", argc, argv, i);
    }
  }
  if (o->path && o->device) return 0;
  fprintf(stderr, "rig load: %s\n", o->path ? "no --device NAME" : "no FILE");
  return usage_error();
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double gigabytes_per_second(int64_t bytes, double seconds) {
  return seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0;
}

/* The progress line, rewritten in place on a terminal. */
static void show_progress(int64_t done, int64_t total, double seconds) {
  double rate = seconds > 0 ? (double)done / seconds : 0.0;
  double percent = total > 0 ? 100.0 * (double)done / (double)total : 100.0;
  fprintf(stderr, "\r%5.1f%%  %7.2f GB/s  ", percent, rate / 1e9);
  if (rate > 0)
    fprintf(stderr, "%6.1f s left ", (double)(total - done) / rate);
  else
    fputs("              ", stderr);
  fflush(stderr);
}

/* Copies chunk after chunk of src into dst (of equal lengths), through
 * views of both, so that the progress line moves. */
static bool copy_in_chunks(rig_buffer_t *src, rig_buffer_t *dst, bool progress) {
  int64_t total = rig_buffer_bytes(src);
  double start = seconds_now();
  for (int64_t at = 0; at < total; at += LOAD_CHUNK_BYTES) {
    int64_t n = total - at < LOAD_CHUNK_BYTES ? total - at : LOAD_CHUNK_BYTES;
    rig_buffer_t *from = NULL, *to = NULL;
    bool ok = succeeded(rig_buffer_view(src, at, n, &from), "view of the file") &&
              succeeded(rig_buffer_view(dst, at, n, &to), "view of the buffer") &&
              succeeded(rig_buffer_copy(from, to), "copy");
    rig_buffer_unref(to);
    rig_buffer_unref(from);
    if (!ok) {
      if (progress) fputc('\n', stderr);
      return false;
    }
    if (progress) show_progress(at + n, total, seconds_now() - start);
  }
  if (progress) fputc('\n', stderr);
  return true;
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

/* Compares the buffer b with the file's bytes from offset, read by another
 * path than the load's: pread into host memory, against b's bytes copied
 * back into a host buffer, chunk by chunk. */
static bool verify_load(const char *path, int64_t offset, rig_buffer_t *b) {
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

static bool run_load(const load_options_t *o, rig_buffer_t **file, rig_buffer_t **buffer) {
  rig_device_t *d = NULL;
  if (!succeeded(rig_open(o->device, NULL, &d), o->device)) return false;
  if (!succeeded(rig_disk_open(o->path, RIG_DISK_READ, o->offset, o->length, file), "open"))
    return false;
  int64_t n = rig_buffer_bytes(*file);
  if (!succeeded(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, buffer), "create buffer")) return false;

  double start = seconds_now();
  if (!copy_in_chunks(*file, *buffer, isatty(STDERR_FILENO))) return false;
  double seconds = seconds_now() - start;
  printf("loaded %" PRId64 " in %.3f s: %.2f GB/s\n", n, seconds, gigabytes_per_second(n, seconds));
  fflush(stdout);
  if (!o->verify) return true;
  if (!verify_load(o->path, o->offset, *buffer)) return false;
  puts("verified");
  return true;
}

int command_load(int argc, char **argv) {
  load_options_t o;
  int usage = parse_load_options(argc, argv, &o);
  if (usage != 0) return usage;
  rig_buffer_t *file = NULL, *buffer = NULL;
  bool ok = run_load(&o, &file, &buffer);
  rig_buffer_unref(buffer);
  rig_buffer_unref(file);
  return ok ? 0 : EXIT_FAILED;
}
