/* The ROCr driver on a machine with an AMD GPU: AMD:0's facts, kernels of
 * an HSA code object launched through rig, copies between the host, a
 * memory device and the GPU, waits between the GPU and memory and
 * simulated devices, and a trapping kernel losing the device with ROCr's
 * reason.
 *
 * tests/gpu/amd.sh runs it with RIG_GPU_REQUIRED=1, where an AMD:0 that
 * does not open fails each test; elsewhere (CI, which builds it wherever a
 * clang that targets amdgcn is found) each test skips itself, saying why,
 * and the suite exits 77 (skipped_main.c), which CTest reports as skipped.
 * The kernels (kernels/rocr_kernels.cl) are compiled at build time by
 * clang -target amdgcn-amd-amdhsa for RIG_AMD_ARCH into RIG_GPU_KERNELS as
 * kernels.hsaco; RIG_AMD_KERNELS, where set, names another code object to
 * load (one amd.sh built for the machine's GPU).
 *
 * Asserts: PROP-09, PROP-19, PROP-23 (AMD:0's facts); SUB-01, SUB-28,
 *   SUB-29, SUB-30 (a code object's kernel launched); DRV-55, DRV-56 (a
 *   refused code object, an absent kernel); COPY-05, COPY-14, BUF-04
 *   (copies with the host); ORD-02, ORD-07, ORD-08 (copies and kernels in
 *   order, through a memory device and back); ORD-09 (work after a point
 *   of a simulated device follows it: ROCr's queues wait on the host);
 *   LOSS-01, DRV-86 (a trap loses the device with ROCr's reason); DEV-05
 *   (AMD:0 opens afresh after the loss).
 */
#define _GNU_SOURCE

#include <rig/rig.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu_launch.h"
#include "helpers.h"

#ifndef RIG_GPU_KERNELS
#error "RIG_GPU_KERNELS, the folder of the compiled kernels, comes from tests/gpu/CMakeLists.txt"
#endif

/* AMD:0, or the test skips (fails under RIG_GPU_REQUIRED). */
static rig_device_t *amd(void) { return open_gpu("AMD", 0); }

/* The kernels loaded on d: RIG_AMD_KERNELS's code object where set, else
 * the one the build made. */
static rig_image_t *kernels_on(rig_device_t *d) {
  const char *path = getenv("RIG_AMD_KERNELS");
  if (path && *path) return load_kernels_from(d, "/", path);
  return load_kernels_from(d, RIG_GPU_KERNELS, "kernels.hsaco");
}

/* n floats, element i holding i / 4 + which, in a new buffer on d. */
static rig_buffer_t *quarters_on(rig_device_t *d, int64_t n, float which) {
  float *values = (float *)allocate_bytes(n * 4);
  for (int64_t i = 0; i < n; i++) values[i] = (float)(i % 4096) / 4.0f + which;
  rig_buffer_t *b = create(d, n * 4);
  CHECK_OK(rig_buffer_blit_from_bytes(values, n * 4, 0, b, 0, n * 4));
  free(values);
  return b;
}

/* Asserts that every 4-byte word of b, read back to the host, is value. */
static void assert_words(rig_buffer_t *b, uint32_t value, const char *what) {
  int64_t n = rig_buffer_bytes(b);
  uint32_t *words = (uint32_t *)allocate_bytes(n);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, words, n, 0, n), "%s: the read back", what);
  for (int64_t i = 0; i < n / 4; i++)
    if (words[i] != value) cr_assert_fail("%s: word %lld is %#x, not %#x", what, (long long)i, words[i], value);
  free(words);
}

/* ---------------------------------------------------------------------- */

Test(rocr, facts_name_the_gpu) { /* PROP-09, PROP-19, PROP-23 */
  rig_device_t *d = amd();
  const char *arch = rig_device_arch(d);
  cr_assert(strncmp(arch, "gfx", 3) == 0 && strlen(arch) >= 6, "arch %s is not gfxNNN", arch);
  cr_assert_str_eq(rig_device_instruction_set(d), arch);
  const char *bus = rig_device_bus(d);
  cr_assert_not_null(bus, "AMD:0 states no bus address");
  cr_assert(strlen(bus) == 12 && bus[4] == ':' && bus[7] == ':' && bus[10] == '.', "bus %s is not a PCI address", bus);
  cr_assert(!rig_device_runs_on_host(d));
  cr_assert_gt(rig_budget(d), (int64_t)1 << 28, "a budget of %lld bytes", (long long)rig_budget(d));
  cr_assert(rig_reaches(d, rig_host()), "AMD:0 maps no host memory");
}

Test(rocr, a_code_objects_kernel_adds) { /* SUB-01, SUB-28, SUB-29, SUB-30 */
  rig_device_t *d = amd();
  rig_image_t *image = kernels_on(d);
  enum { N = 100003 };
  rig_buffer_t *x = quarters_on(d, N, 0), *y = quarters_on(d, N, 1), *z = create(d, N * 4);
  uint64_t before = rig_submitted(d);
  rig_point_t p = launch_add(image, x, y, z, N);
  cr_assert(rig_point_device(p) == d);
  cr_assert_eq(rig_point_value(p), before + 1, "the launch took value %llu after %llu",
               (unsigned long long)rig_point_value(p), (unsigned long long)before);
  float *got = (float *)allocate_bytes(N * 4);
  CHECK_OK(rig_buffer_blit_to_bytes(z, 0, got, N * 4, 0, N * 4));
  for (int64_t i = 0; i < N; i++) {
    float want = (float)(i % 4096) / 2.0f + 1.0f;
    if (got[i] != want) cr_assert_fail("z[%lld] = %f, not %f", (long long)i, got[i], want);
  }
  free(got);
  rig_buffer_unref(x);
  rig_buffer_unref(y);
  rig_buffer_unref(z);
  rig_image_unref(image);
}

Test(rocr, a_refused_code_object_and_an_absent_kernel) { /* DRV-55, DRV-56 */
  rig_device_t *d = amd();
  static const char junk[] = "this is not an HSA code object";
  rig_image_t *image = NULL;
  CHECK_FAILS(RIG_EIMAGE, rig_image_load(d, junk, sizeof junk, &image));
  cr_assert_null(image);
  cr_assert_null(rig_lost(d), "a refused image loses nothing");
  image = kernels_on(d);
  rig_function_t *f = NULL;
  CHECK_OK(rig_image_resolve(image, "no_such_kernel", &f));
  cr_assert_null(f, "an absent kernel resolves to NULL");
  rig_image_unref(image);
}

Test(rocr, copies_follow_kernels_and_kernels_copies) { /* COPY-05, COPY-14, BUF-04, ORD-02, ORD-07 */
  rig_device_t *d = amd();
  rig_image_t *image = kernels_on(d);
  enum { N = (4 << 20) + 4096 };
  rig_buffer_t *a = create(d, N), *b = create(d, N), *host = create(rig_host(), N);
  /* A kernel writes a, a copy on the copy engine takes a to b, the host's
   * copy takes b back: each follows the write before it. */
  launch_fill_words(image, a, 0x5a5a0101u);
  rig_point_t p;
  rig_box_t all = rig_row(0, 0, N);
  CHECK_OK(rig_buffer_submit_copy(a, b, &all, 1, NULL, 0, &p));
  CHECK_OK(rig_buffer_copy(b, host));
  assert_words(host, 0x5a5a0101u, "kernel -> copy -> host");
  /* And the other way: host bytes into a, then a kernel over b. */
  CHECK_OK(rig_buffer_fill(host, 0x33));
  CHECK_OK(rig_buffer_copy(host, a));
  assert_words(a, 0x33333333u, "host -> AMD:0");
  launch_fill_words(image, b, 7);
  assert_words(b, 7, "a kernel after the copies");
  rig_buffer_unref(a);
  rig_buffer_unref(b);
  rig_buffer_unref(host);
  rig_image_unref(image);
}

Test(rocr, work_follows_a_memory_device_and_back) { /* ORD-07, ORD-08 */
  rig_device_t *d = amd(), *mem = open_named("MEM:0");
  rig_image_t *image = kernels_on(d);
  enum { N = 1 << 20 };
  rig_buffer_t *on_mem = create(mem, N), *on_gpu = create(d, N), *second = create(mem, N);
  CHECK_OK(rig_buffer_fill(on_mem, 0x11));
  /* MEM:0 -> AMD:0, a kernel over the GPU's bytes, AMD:0 -> MEM:0 and on
   * to a second buffer, run by the host: each follows the one before. */
  CHECK_OK(rig_buffer_copy(on_mem, on_gpu));
  assert_words(on_gpu, 0x11111111u, "MEM:0 -> AMD:0");
  launch_fill_words(image, on_gpu, 0xabcdef01u);
  CHECK_OK(rig_buffer_copy(on_gpu, on_mem));
  CHECK_OK(rig_buffer_copy(on_mem, second));
  const uint32_t *words = rig_buffer_host(second);
  for (int64_t i = 0; i < N / 4; i++)
    if (words[i] != 0xabcdef01u) cr_assert_fail("word %lld is %#x", (long long)i, words[i]);
  rig_buffer_unref(on_mem);
  rig_buffer_unref(second);
  rig_buffer_unref(on_gpu);
  rig_image_unref(image);
}

Test(rocr, work_after_a_slow_devices_point_follows_it) { /* ORD-09 */
  rig_device_t *d = amd();
  /* A simulated GPU whose work takes half a second: its word rises late. */
  rig_device_t *sim = open_with("SIM:5", "latency_us=500000");
  rig_buffer_t *on_sim = create(sim, 4096), *on_gpu = create(d, 4096);
  rig_point_t late = submit_fill(on_sim, 1);
  rig_point_t after = submit_fill_after(on_gpu, 2, &late, 1);
  CHECK_OK(rig_point_wait(after));
  cr_assert(point_reached(late), "AMD:0's fill ran before the point it follows");
  assert_words(on_gpu, 0x02020202u, "the fill after the wait");
  rig_buffer_unref(on_sim);
  rig_buffer_unref(on_gpu);
  CHECK_OK(rig_close(sim));
}

Test(rocr, a_trap_loses_the_device_with_rocrs_reason) { /* LOSS-01, DRV-86, DEV-05 */
  rig_device_t *d = amd();
  rig_image_t *image = kernels_on(d);
  launch_t l = {function_of(image, "trap"), NULL, 0, 0, NULL, 0, 1, 1, 0};
  rig_point_t p;
  /* The trap may break the queue before the submit returns, which then
   * reports it; else the wait does. */
  if (try_launch(&l, NULL, 0, NULL, 0, &p) == RIG_OK)
    CHECK_LOST(d, rig_point_wait(p));
  else
    cr_assert_not_null(rig_lost(d), "the launch failed without losing AMD:0: %s", rig_last_error());
  const char *why = rig_lost(d);
  cr_assert(why && strstr(why, "queue error"), "the reason is not ROCr's queue error: %s", why ? why : "(live)");
  rig_image_unref(image);
  CHECK_OK(rig_close(d));
  cr_assert_str_eq(rig_lost(d), why, "the close changed the reason");
  rig_device_t *again = open_gpu("AMD", 0);
  cr_assert(!rig_device_equal(again, d), "the name opens a new device");
  image = kernels_on(again);
  rig_buffer_t *b = create(again, 4096);
  CHECK_OK(rig_point_wait(launch_fill_words(image, b, 5)));
  assert_words(b, 5, "a kernel on the new device");
  rig_buffer_unref(b);
  rig_image_unref(image);
}
