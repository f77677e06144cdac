/* rig load --safetensors FILE... --device NAME [--arena] [--verify]: each
 * file's header is read and checked first (rig_safetensors_open), so that a
 * malformed one is refused before a byte of any file loads; then every
 * tensor of every file loads into a buffer of its own (or, with --arena,
 * each file's data into one buffer, the tensors views of it), all in one
 * rig_disk_read_ranges, so that the shards of a checkpoint load in
 * parallel.  Prints a line per tensor: name, dtype, shape and bytes; then
 * the total and its rate, which counts the buffers' making and the reads,
 * not the headers' reads. */
#define _POSIX_C_SOURCE 200809L

#include "load_safetensors.h"

#include "commands.h"
#include "load_verify.h"

#include <rig/disk.h>
#include <rig/rig.h>
#include <rig/safetensors.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* One file's header and, once loaded, its buffers. */
typedef struct loaded_file {
  const char *path;
  rig_safetensors_t *st;
  rig_buffer_t *file;     /* the whole file on DISK */
  rig_buffer_t *arena;    /* with --arena */
  rig_buffer_t **tensors; /* a buffer or a view per tensor */
} loaded_file_t;

static void release_file(loaded_file_t *f) {
  size_t n = rig_safetensors_count(f->st);
  for (size_t i = 0; f->tensors && i < n; i++) rig_buffer_unref(f->tensors[i]);
  free(f->tensors);
  rig_buffer_unref(f->arena);
  rig_buffer_unref(f->file);
  rig_safetensors_close(f->st);
}

static bool open_file(loaded_file_t *f) {
  if (!succeeded(rig_safetensors_open(f->path, &f->st), "safetensors header")) return false;
  size_t n = rig_safetensors_count(f->st);
  f->tensors = calloc(n > 0 ? n : 1, sizeof(rig_buffer_t *));
  if (!f->tensors) {
    fputs("rig: out of memory\n", stderr);
    return false;
  }
  return succeeded(rig_disk_open(f->path, RIG_DISK_READ, 0, -1, &f->file), f->path);
}

/* Makes f's buffers on d and appends the ranges that fill them to ranges
 * (room for one per tensor, and one more). */
static bool plan_file(loaded_file_t *f, rig_device_t *d, bool arena, rig_disk_range_t *ranges, size_t *count) {
  size_t n = rig_safetensors_count(f->st);
  int64_t data = rig_safetensors_data_bytes(f->st);
  int64_t start = n > 0 ? rig_safetensors_tensor(f->st, 0)->offset : 0;
  if (arena) {
    if (!succeeded(rig_buffer_create(d, data, RIG_MEMORY_DEVICE, &f->arena), "create the arena")) return false;
    if (data > 0) ranges[(*count)++] = (rig_disk_range_t){f->file, start, f->arena, 0, data};
  }
  for (size_t i = 0; i < n; i++) {
    const rig_tensor_info_t *t = rig_safetensors_tensor(f->st, i);
    bool ok = arena ? succeeded(rig_buffer_view(f->arena, t->offset - start, t->bytes, &f->tensors[i]), "view")
                    : succeeded(rig_buffer_create(d, t->bytes, RIG_MEMORY_DEVICE, &f->tensors[i]), "create");
    if (!ok) return false;
    if (!arena && t->bytes > 0) ranges[(*count)++] = (rig_disk_range_t){f->file, t->offset, f->tensors[i], 0, t->bytes};
  }
  return true;
}

/* Every file's tensors, read in one batch. */
static bool load_files(loaded_file_t *files, int count, rig_device_t *d, bool arena) {
  size_t room = 1;
  for (int i = 0; i < count; i++) room += rig_safetensors_count(files[i].st) + 1;
  rig_disk_range_t *ranges = calloc(room, sizeof *ranges);
  if (!ranges) {
    fputs("rig: out of memory\n", stderr);
    return false;
  }
  size_t planned = 0;
  bool ok = true;
  for (int i = 0; ok && i < count; i++) ok = plan_file(&files[i], d, arena, ranges, &planned);
  if (ok && planned > 0) ok = succeeded(rig_disk_read_ranges(ranges, planned), "load");
  free(ranges);
  return ok;
}

static void print_tensor(const rig_tensor_info_t *t) {
  printf("  %s %s [", t->name, t->dtype);
  for (size_t k = 0; k < t->rank; k++) printf("%s%" PRId64, k > 0 ? ", " : "", t->shape[k]);
  printf("] %" PRId64 " bytes\n", t->bytes);
}

static bool verify_file(const loaded_file_t *f) {
  size_t n = rig_safetensors_count(f->st);
  for (size_t i = 0; i < n; i++)
    if (!verify_load(f->path, rig_safetensors_tensor(f->st, i)->offset, f->tensors[i])) return false;
  return true;
}

static bool load_all(loaded_file_t *files, const safetensors_load_t *o) {
  rig_device_t *d = NULL;
  if (!succeeded(rig_open(o->device, NULL, &d), o->device)) return false;
  for (int i = 0; i < o->path_count; i++)
    if (!open_file(&files[i])) return false;
  double start = seconds_now();
  if (!load_files(files, o->path_count, d, o->arena)) return false;
  double seconds = seconds_now() - start;
  int64_t bytes = 0;
  size_t tensors = 0;
  for (int i = 0; i < o->path_count; i++) {
    size_t n = rig_safetensors_count(files[i].st);
    printf("%s: %zu tensors\n", files[i].path, n);
    for (size_t k = 0; k < n; k++) print_tensor(rig_safetensors_tensor(files[i].st, k));
    bytes += rig_safetensors_data_bytes(files[i].st);
    tensors += n;
  }
  printf("loaded %" PRId64 " bytes of %zu tensors from %d files in %.3f s: %.2f GB/s\n", bytes, tensors,
         o->path_count, seconds, gigabytes_per_second(bytes, seconds));
  fflush(stdout);
  if (!o->verify) return true;
  for (int i = 0; i < o->path_count; i++)
    if (!verify_file(&files[i])) return false;
  puts("verified");
  return true;
}

bool load_safetensors(const safetensors_load_t *o) {
  loaded_file_t *files = calloc((size_t)o->path_count, sizeof *files);
  if (!files) {
    fputs("rig: out of memory\n", stderr);
    return false;
  }
  for (int i = 0; i < o->path_count; i++) files[i].path = o->paths[i];
  bool ok = load_all(files, o);
  for (int i = 0; i < o->path_count; i++) release_file(&files[i]);
  free(files);
  return ok;
}
