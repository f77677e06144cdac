/* rig load FILE --device NAME [--offset N] [--length N] [--verify]: reads
 * a file (or a range of it) into a new buffer on the device NAME through
 * the io device DISK, showing its progress; --verify compares the buffer's
 * bytes with the file's, read by pread.  With --safetensors, FILE... are
 * checkpoints whose tensors load as rig_load_safetensors.c says. */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"
#include "load_safetensors.h"
#include "load_verify.h"

#include <rig/disk.h>
#include <rig/rig.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct load_options {
  const char **paths; /* in the order given */
  int path_count;
  const char *device;
  int64_t offset;
  int64_t length; /* -1: to the file's end */
  bool ranged;    /* --offset or --length given */
  bool verify;
  bool safetensors;
  bool arena;
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

/* 0, or the exit status of a usage error (said on stderr).  o->paths
 * holds room for every argument. */
static int parse_load_options(int argc, char **argv, load_options_t *o) {
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (strcmp(a, "--device") == 0 && has_value) {
      o->device = argv[++i];
    } else if (strcmp(a, "--offset") == 0 && has_value) {
      if (!parse_size_option(a, argv[++i], &o->offset)) return usage_error();
      o->ranged = true;
    } else if (strcmp(a, "--length") == 0 && has_value) {
      if (!parse_size_option(a, argv[++i], &o->length)) return usage_error();
      o->ranged = true;
    } else if (strcmp(a, "--verify") == 0) {
      o->verify = true;
    } else if (strcmp(a, "--safetensors") == 0) {
      o->safetensors = true;
    } else if (strcmp(a, "--arena") == 0) {
      o->arena = true;
    } else if (a[0] != '-') {
      o->paths[o->path_count++] = a;
    } else {
      return bad_argument("load", argc, argv, i);
    }
  }
  const char *wrong = NULL;
  if (o->path_count == 0) wrong = "no FILE";
  else if (!o->device) wrong = "no --device NAME";
  else if (!o->safetensors && o->path_count > 1) wrong = "more than one FILE without --safetensors";
  else if (!o->safetensors && o->arena) wrong = "--arena takes --safetensors";
  else if (o->safetensors && o->ranged) wrong = "--safetensors loads whole files: no --offset or --length";
  if (!wrong) return 0;
  fprintf(stderr, "rig load: %s\n", wrong);
  return usage_error();
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

/* Copies chunk after chunk of src into dst (of equal lengths), a box each,
 * so that the progress line moves.  Each chunk's copy is submitted before
 * the one before it is waited for: where a device copies the bytes out of
 * staging (a proxy of rigd's), it does so while the next chunk is read,
 * rather than the reads pausing at every chunk. */
static bool copy_in_chunks(rig_buffer_t *src, rig_buffer_t *dst, bool progress) {
  int64_t total = rig_buffer_bytes(src);
  double start = seconds_now();
  rig_point_t previous = {0};
  bool ok = true;
  for (int64_t at = 0; ok && at < total; at += LOAD_CHUNK_BYTES) {
    int64_t n = total - at < LOAD_CHUNK_BYTES ? total - at : LOAD_CHUNK_BYTES;
    rig_box_t chunk = rig_row(at, at, n);
    rig_point_t copied = {0};
    ok = succeeded(rig_buffer_submit_copy(src, dst, &chunk, 1, NULL, 0, &copied), "copy");
    if (at > 0) ok = succeeded(rig_point_wait(previous), "copy") && ok;
    previous = copied;
    if (ok && progress && at > 0) show_progress(at, total, seconds_now() - start);
  }
  if (ok && total > 0) ok = succeeded(rig_point_wait(previous), "copy");
  if (progress) {
    if (ok) show_progress(total, total, seconds_now() - start);
    fputc('\n', stderr);
  }
  return ok;
}

static bool run_load(const load_options_t *o, rig_buffer_t **file, rig_buffer_t **buffer) {
  rig_device_t *d = NULL;
  if (!succeeded(rig_open(o->device, NULL, &d), o->device)) return false;
  if (!succeeded(rig_disk_open(o->paths[0], RIG_DISK_READ, o->offset, o->length, file), "open"))
    return false;
  int64_t n = rig_buffer_bytes(*file);
  if (!succeeded(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, buffer), "create buffer")) return false;

  double start = seconds_now();
  if (!copy_in_chunks(*file, *buffer, isatty(STDERR_FILENO))) return false;
  double seconds = seconds_now() - start;
  printf("loaded %" PRId64 " in %.3f s: %.2f GB/s\n", n, seconds, gigabytes_per_second(n, seconds));
  fflush(stdout);
  if (!o->verify) return true;
  if (!verify_load(o->paths[0], o->offset, *buffer)) return false;
  puts("verified");
  return true;
}

int command_load(int argc, char **argv) {
  load_options_t o = {.paths = calloc(argc > 0 ? (size_t)argc : 1, sizeof(char *)), .length = -1};
  if (!o.paths) {
    fputs("rig: out of memory\n", stderr);
    return EXIT_FAILED;
  }
  int status = parse_load_options(argc, argv, &o);
  if (status == 0 && o.safetensors) {
    safetensors_load_t st = {o.paths, o.path_count, o.device, o.arena, o.verify};
    status = load_safetensors(&st) ? 0 : EXIT_FAILED;
  } else if (status == 0) {
    rig_buffer_t *file = NULL, *buffer = NULL;
    status = run_load(&o, &file, &buffer) ? 0 : EXIT_FAILED;
    rig_buffer_unref(buffer);
    rig_buffer_unref(file);
  }
  free(o.paths);
  return status;
}
