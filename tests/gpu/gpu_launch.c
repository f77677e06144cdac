/* The GPUs and kernels of the GPU suites (gpu_launch.h). */
#include "gpu_launch.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "helpers.h"

rig_device_t *open_gpu(const char *prefix, int n) {
  char name[32];
  snprintf(name, sizeof name, "%s:%d", prefix, n);
  rig_device_t *d = NULL;
  rig_status_t s = rig_open(name, NULL, &d);
  if (s == RIG_OK) return d;
  if (n == 0 && getenv("RIG_GPU_REQUIRED"))
    cr_assert_fail("%s does not open: %s: %s", name, rig_status_name(s), rig_last_error());
  cr_skip_test("%s does not open: %s", name, rig_last_error());
  return NULL;
}

/* The bytes of folder/name, and their count. */
static uint8_t *kernel_file(const char *folder, const char *name, int64_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", folder, name);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *bytes = allocate_bytes(size);
  cr_assert_eq(fread(bytes, 1, (size_t)size, f), (size_t)size, "cannot read %s", path);
  fclose(f);
  *n = size;
  return bytes;
}

rig_image_t *load_kernels_from(rig_device_t *d, const char *folder, const char *name) {
  int64_t n = 0;
  uint8_t *bytes = kernel_file(folder, name, &n);
  rig_image_t *image = NULL;
  CHECK_OK(rig_image_load(d, bytes, n, &image), "load %s", name);
  free(bytes);
  return image;
}

rig_status_t try_launch(const launch_t *l, rig_buffer_t *const *buffers, size_t nbuffers, const rig_point_t *waits,
                        size_t nwaits, rig_point_t *out) {
  rig_part_t part = {.kind = RIG_LAUNCH};
  part.u.launch.function = l->function;
  part.u.launch.refs = l->refs;
  part.u.launch.ref_count = l->ref_count;
  part.u.launch.params = l->param_bytes;
  rig_submission_t *s = NULL;
  CHECK_OK(rig_submission_make(rig_image_device(rig_function_image(l->function)), &part, 1, NULL, &s));
  rig_run_t *r = NULL;
  CHECK_OK(rig_submission_take(s, &r));
  int64_t k = rig_submission_block(s, 0);
  CHECK_OK(rig_run_groups(r, k, l->groups, 1, 1));
  CHECK_OK(rig_run_threads(r, k, l->threads, 1, 1));
  CHECK_OK(rig_run_shared(r, k, l->shared));
  for (size_t i = 0; i < l->param_count; i++) CHECK_OK(rig_run_int64(r, k, l->params[i].at, l->params[i].value));
  rig_status_t status = rig_submit(r, buffers, nbuffers, waits, nwaits, out);
  rig_submission_unref(s);
  return status;
}

rig_point_t run_launch(const launch_t *l, rig_buffer_t *const *buffers, size_t nbuffers) {
  rig_point_t p;
  CHECK_OK(try_launch(l, buffers, nbuffers, NULL, 0, &p), "launch");
  return p;
}

rig_point_t launch_add(rig_image_t *image, rig_buffer_t *x, rig_buffer_t *y, rig_buffer_t *z, int64_t n) {
  static const rig_ref_t refs[] = {
      {.kind = RIG_REF_READ, .memory = {.slot = 0}, .at = 0},
      {.kind = RIG_REF_READ, .memory = {.slot = 1}, .at = 8},
      {.kind = RIG_REF_WRITE, .memory = {.slot = 2}, .at = 16},
  };
  param_t params[] = {{24, n}};
  launch_t l = {function_of(image, "add"), refs, 3, 32, params, 1, (n + 255) / 256, 256, 0};
  rig_buffer_t *buffers[] = {x, y, z};
  return run_launch(&l, buffers, 3);
}

rig_point_t launch_fill_words(rig_image_t *image, rig_buffer_t *b, uint32_t value) {
  static const rig_ref_t refs[] = {{.kind = RIG_REF_WRITE, .memory = {.slot = 0}, .at = 0}};
  int64_t n = rig_buffer_bytes(b) / 4;
  param_t params[] = {{8, value}, {16, n}};
  launch_t l = {function_of(image, "fill_words"), refs, 1, 24, params, 2, (n + 255) / 256, 256, 0};
  return run_launch(&l, &b, 1);
}
