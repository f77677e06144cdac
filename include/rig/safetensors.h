/* safetensors files read into any device's memory.
 *
 * A safetensors file is an 8-byte little-endian count N, then N bytes of a
 * JSON object that names each tensor (but the optional "__metadata__", an
 * object of strings) with its "dtype", its "shape" (a list of sizes) and its
 * "data_offsets" [begin, end), counted from the byte after the header; then
 * the tensors' bytes.  rig reads the header itself and the bytes through the
 * io device DISK (rig/disk.h): O_DIRECT where the file system, offsets and
 * lengths allow, the page cache otherwise, through staging where the device
 * is not memory the host addresses. */
#ifndef RIG_SAFETENSORS_H
#define RIG_SAFETENSORS_H

#include <rig/rig.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct rig_safetensors rig_safetensors_t;

/* A tensor of a file, as its header describes it. */
typedef struct rig_tensor_info {
  const char *name;
  const char *dtype;    /* as the header writes it: "F32", "BF16", "I64", ... */
  const int64_t *shape; /* rank sizes, outermost first */
  size_t rank;
  int64_t offset; /* of its first byte in the file */
  int64_t bytes;  /* its elements' count times its dtype's size */
} rig_tensor_info_t;

/* *out is the safetensors file at path, its header read and checked; it
 * lists the tensors in the order of their bytes in the file.  RIG_EIO,
 * naming the file and what is wrong, where it cannot be read or its header
 * is not as the format states: a header count of less than 2 or past the
 * file's end or 100 MiB, a header that is not a JSON object, a tensor
 * without a dtype, shape or data_offsets of the right kinds, an unknown
 * dtype (BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32,
 * F32, I64, U64, F64 are known), a size or offset that is negative or
 * overflows, data_offsets whose length is not the shape's element count
 * times the dtype's size, tensors whose bytes do not follow each other from
 * the data's byte 0 without a gap or an overlap, or bytes past the file's
 * end.  RIG_EINVAL for a NULL path or out. */
rig_status_t rig_safetensors_open(const char *path, rig_safetensors_t **out);
/* Releases st; buffers loaded from it stay.  NULL is ignored. */
void rig_safetensors_close(rig_safetensors_t *st);
/* The count of st's tensors (0 for NULL). */
size_t rig_safetensors_count(const rig_safetensors_t *st);
/* Tensor i of st, which lives as st; NULL for i past the count. */
const rig_tensor_info_t *rig_safetensors_tensor(const rig_safetensors_t *st, size_t i);
/* The bytes of st's data: every tensor's, from the header's end to the
 * file's (0 for NULL). */
int64_t rig_safetensors_data_bytes(const rig_safetensors_t *st);

/* Reads every tensor of st into new memory of kind m on d: buffers[i], for
 * each i below rig_safetensors_count(st), is a buffer of tensor i's bytes
 * (a buffer of 0 bytes for an empty tensor), each owned by the caller.  The
 * reads are one rig_disk_read_ranges (rig/disk.h): several tensors read at
 * once, each ordered by its buffer's stamps, and the call returns once
 * every byte is there.  On an error every buffer made
 * is released and buffers holds NULLs.  RIG_EINVAL for a NULL argument;
 * RIG_ENOMEM, RIG_EIO (the file cut short, naming it) or RIG_ELOST as
 * rig_buffer_create and rig_buffer_copy answer. */
rig_status_t rig_safetensors_load(rig_safetensors_t *st, rig_device_t *d, rig_memory_t m, rig_buffer_t **buffers);
/* Reads st's data in one copy into *arena, a new buffer of
 * rig_safetensors_data_bytes(st) bytes of kind m on d, and views[i] is a
 * view of tensor i's bytes in it (owned by the caller, as *arena is).
 * Errors as rig_safetensors_load's, *arena then NULL. */
rig_status_t rig_safetensors_load_arena(rig_safetensors_t *st, rig_device_t *d, rig_memory_t m, rig_buffer_t **arena,
                                        rig_buffer_t **views);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
