/* The GPUs and kernels of the GPU suites (test_cuda.c, test_rocr.c): a
 * GPU opened or the test skipped, the kernels' compiled files read from a
 * folder, and launches of them through rig's submissions (their functions
 * resolved with helpers.h's function_of).  Checks fail the calling Criterion test. */
#ifndef RIG_TESTS_GPU_LAUNCH_H
#define RIG_TESTS_GPU_LAUNCH_H

#include <rig/rig.h>

#include <stddef.h>
#include <stdint.h>

/* PREFIX:n, or the test skips, saying why, where it does not open; where
 * n is 0 and RIG_GPU_REQUIRED is set the test fails instead. */
rig_device_t *open_gpu(const char *prefix, int n);

/* The image of the file name in folder, loaded on d. */
rig_image_t *load_kernels_from(rig_device_t *d, const char *folder, const char *name);

/* A launch of a kernel: its refs, its parameter bytes, the int64 values
 * stored at byte offsets of its parameters, and its grid along x. */
typedef struct param {
  int64_t at;
  int64_t value;
} param_t;

typedef struct launch {
  const rig_function_t *function;
  const rig_ref_t *refs;
  size_t ref_count;
  int64_t param_bytes;
  const param_t *params;
  size_t param_count;
  int64_t groups, threads, shared;
} launch_t;

/* Submits l once with buffers as its slots, after the points waits; the
 * status of rig_submit, its point in *out. */
rig_status_t try_launch(const launch_t *l, rig_buffer_t *const *buffers, size_t nbuffers, const rig_point_t *waits,
                        size_t nwaits, rig_point_t *out);
/* try_launch with no waits, which must succeed; its point. */
rig_point_t run_launch(const launch_t *l, rig_buffer_t *const *buffers, size_t nbuffers);

/* z = x + y over n floats with the kernel add of image (x at 0, y at 8,
 * z at 16, n at 24). */
rig_point_t launch_add(rig_image_t *image, rig_buffer_t *x, rig_buffer_t *y, rig_buffer_t *z, int64_t n);
/* Writes value into each 4-byte word of b with the kernel fill_words of
 * image (p at 0, value at 8, n at 16). */
rig_point_t launch_fill_words(rig_image_t *image, rig_buffer_t *b, uint32_t value);

#endif
