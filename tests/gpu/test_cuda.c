/* The CUDA driver on a machine with an NVIDIA GPU: CUDA:0's facts, kernels
 * from a cubin and from PTX launched through rig, copies between the host,
 * the GPU and a second GPU through borrows and through staging, fills and
 * words, waits between the GPU and a memory or simulated device, the
 * timeline word the GPU writes, a file read into GPU memory, DMA export,
 * and a kernel's fault losing the device with CUDA's message.
 *
 * tests/gpu/cuda.sh runs it with RIG_GPU_REQUIRED=1, where a CUDA:0 that
 * does not open fails each test; elsewhere (CI, which builds it wherever
 * nvcc is installed) each test skips itself, saying why, and the suite
 * exits 77 (skipped_main.c), which CTest reports as skipped.  The kernels
 * (kernels/kernels.cu) are compiled by nvcc at build time into
 * RIG_GPU_KERNELS as kernels.cubin and kernels.ptx.
 *
 * Asserts: PROP-09, PROP-19, PROP-23, PROP-27, RECL-44 (CUDA:0's facts);
 *   INTRO-06 (a launch returns before its work has run); TL-17 (signaled,
 *   read from the word the GPU writes, is reached work); SUB-01, SUB-28,
 *   SUB-29, SUB-30 (launches of cubin and PTX functions); SUB-22 (a launch
 *   beyond the device answers RIG_EINVAL and loses nothing); DRV-55,
 *   DRV-56 (a refused image, an absent function); COPY-05, COPY-10,
 *   COPY-13, COPY-14, COPY-15, BUF-04 (copies direct and through staging);
 *   ORD-02, ORD-04, ORD-07, ORD-08, ORD-09, SUB-24, SUB-31 (order across the
 *   two streams, waits on other devices' words in the GPU's queue); LOSS-01,
 *   DRV-86 (a trap loses the device with CUDA's message); DEV-05 (CUDA:0
 *   opens afresh after the loss); DRV-50 (dma names a bad fn).
 *
 * Not reached here: peers (map_peer) need two GPUs and skip on one.
 */
#define _GNU_SOURCE

#include <rig/disk.h>
#include <rig/rig.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gpu_launch.h"
#include "helpers.h"

#ifndef RIG_GPU_KERNELS
#error "RIG_GPU_KERNELS, the folder of the compiled kernels, comes from tests/gpu/CMakeLists.txt"
#endif

/* ---------------------------------------------------------------------- */
/* Devices, images, launches                                               */

/* CUDA:n, or the test skips (fails under RIG_GPU_REQUIRED) where it does
 * not open. */
static rig_device_t *gpu(int n) { return open_gpu("CUDA", n); }

/* The kernels loaded on d from "kernels.cubin" or "kernels.ptx". */
static rig_image_t *load_kernels(rig_device_t *d, const char *file) {
  return load_kernels_from(d, RIG_GPU_KERNELS, file);
}

/* Keeps the GPU busy for at least cycles clock cycles with the kernel spin. */
static rig_point_t launch_spin(rig_image_t *image, int64_t cycles) {
  param_t params[] = {{0, cycles}};
  launch_t l = {function_of(image, "spin"), NULL, 0, 8, params, 1, 1, 1, 0};
  return run_launch(&l, NULL, 0);
}

/* ---------------------------------------------------------------------- */
/* Bytes                                                                    */

static float value_of(int64_t i, int which) { return (float)((i * (which + 3)) % 1000) * 0.5f; }

static uint8_t pattern_byte(int64_t i) { return (uint8_t)(i * 7 + (i >> 9) * 13 + 1); }

static int write_pattern(void *bytes, int64_t n, void *context) {
  (void)context;
  for (int64_t i = 0; i < n; i++) ((uint8_t *)bytes)[i] = pattern_byte(i);
  return 0;
}

/* 0 where b's bytes are the pattern, else the first other byte's index + 1. */
static int is_pattern(void *bytes, int64_t n, void *context) {
  (void)context;
  for (int64_t i = 0; i < n; i++)
    if (((uint8_t *)bytes)[i] != pattern_byte(i)) return (int)(i + 1 > 0x7fffffff ? 0x7fffffff : i + 1);
  return 0;
}

/* n floats of value_of(i, which) in a new buffer on d (through staging). */
static rig_buffer_t *floats_on(rig_device_t *d, int64_t n, int which) {
  float *values = (float *)allocate_bytes(n * 4);
  for (int64_t i = 0; i < n; i++) values[i] = value_of(i, which);
  rig_buffer_t *b = create(d, n * 4);
  CHECK_OK(rig_buffer_blit_from_bytes(values, n * 4, 0, b, 0, n * 4));
  free(values);
  return b;
}

/* A host buffer of n bytes (n of 64 KiB or more starts on a page) holding
 * the pattern. */
static rig_buffer_t *host_pattern(int64_t n) {
  rig_buffer_t *b = create(rig_host(), n);
  CHECK_OK(rig_buffer_write(b, 1, write_pattern, NULL));
  return b;
}

static void assert_pattern(rig_buffer_t *b, const char *what) {
  rig_status_t s = rig_buffer_read(b, 1, is_pattern, NULL);
  cr_assert(s == RIG_OK, "%s: byte %d differs from the pattern (%s)", what, rig_error_code() - 1,
            rig_status_name(s));
}

/* Copies b's bytes back to a new host buffer and checks the pattern. */
static void assert_pattern_on(rig_buffer_t *b, const char *what) {
  rig_buffer_t *back = create(rig_host(), rig_buffer_bytes(b));
  CHECK_OK(rig_buffer_copy(b, back), "%s: the copy back", what);
  assert_pattern(back, what);
  rig_buffer_unref(back);
}

/* ---------------------------------------------------------------------- */
/* Facts                                                                    */

Test(cuda, facts_name_the_gpu) { /* PROP-09, PROP-19, PROP-23, PROP-27, RECL-44 */
  rig_device_t *d = gpu(0);
  const char *arch = rig_device_arch(d);
  cr_assert(strncmp(arch, "sm_", 3) == 0 && strlen(arch) >= 5 && strspn(arch + 3, "0123456789") == strlen(arch) - 3,
            "arch %s is not sm_XY", arch);
  cr_assert_str_eq(rig_device_instruction_set(d), arch);
  const char *bus = rig_device_bus(d);
  cr_assert_not_null(bus, "CUDA:0 states no bus address");
  cr_assert(strlen(bus) == 12 && bus[4] == ':' && bus[7] == ':' && bus[10] == '.' &&
                strspn(bus, "0123456789abcdef:.") == 12,
            "bus %s is not a Linux PCI address", bus);
  cr_assert_eq(rig_device_alignment(d), 256);
  cr_assert_gt(rig_device_cache_bytes(d), 0, "no L2 size");
  cr_assert_gt(rig_budget(d), (int64_t)1 << 30, "a budget of %lld bytes", (long long)rig_budget(d));
  cr_assert(!rig_device_runs_on_host(d));
  cr_assert(rig_reaches(d, rig_host()), "CUDA:0 maps no host memory");
  cr_assert(!rig_reaches(rig_host(), d), "the host addresses CUDA:0's memory");
}

/* ---------------------------------------------------------------------- */
/* Kernels                                                                  */

static void check_add(const char *file) {
  rig_device_t *d = gpu(0);
  rig_image_t *image = load_kernels(d, file);
  enum { N = 100003 };
  rig_buffer_t *x = floats_on(d, N, 0), *y = floats_on(d, N, 1), *z = create(d, N * 4);
  uint64_t before = rig_submitted(d);
  rig_point_t p = launch_add(image, x, y, z, N);
  cr_assert_eq(rig_point_device(p), d);
  cr_assert_eq(rig_point_value(p), before + 1, "the launch took value %llu after %llu",
               (unsigned long long)rig_point_value(p), (unsigned long long)before);
  float *got = (float *)allocate_bytes(N * 4);
  CHECK_OK(rig_buffer_blit_to_bytes(z, 0, got, N * 4, 0, N * 4));
  for (int64_t i = 0; i < N; i++)
    cr_assert_float_eq(got[i], value_of(i, 0) + value_of(i, 1), 1e-6, "%s: z[%lld] = %f", file, (long long)i,
                       got[i]);
  int64_t max_threads = rig_function_max_threads(function_of(image, "add"));
  cr_assert(max_threads >= 256 && max_threads <= 1024, "add admits %lld threads", (long long)max_threads);
  free(got);
  rig_buffer_unref(x);
  rig_buffer_unref(y);
  rig_buffer_unref(z);
  rig_image_unref(image);
}

Test(cuda, kernel_from_a_cubin_adds) { check_add("kernels.cubin"); } /* SUB-01, SUB-28, SUB-29, SUB-30 */

Test(cuda, kernel_from_ptx_adds) { check_add("kernels.ptx"); } /* SUB-01, SUB-29, SUB-30 */

Test(cuda, images_refused_and_functions_absent) { /* DRV-55, DRV-56 */
  rig_device_t *d = gpu(0);
  static const char junk[] = "this is neither a cubin nor PTX";
  rig_image_t *image = NULL;
  CHECK_FAILS(RIG_EIMAGE, rig_image_load(d, junk, sizeof junk - 1, &image));
  cr_assert_null(image);
  image = load_kernels(d, "kernels.cubin");
  rig_function_t *f = (rig_function_t *)1;
  CHECK_OK(rig_image_resolve(image, "no_such_kernel", &f));
  cr_assert_null(f, "resolve found a function the image lacks");
  cr_assert_null(rig_lost(d), "a refused image lost CUDA:0: %s", rig_lost(d));
  rig_image_unref(image);
}

Test(cuda, launch_beyond_the_device_is_refused) { /* SUB-22 */
  rig_device_t *d = gpu(0);
  rig_image_t *image = load_kernels(d, "kernels.cubin");
  launch_t l = {function_of(image, "empty"), NULL, 0, 0, NULL, 0, 1, 1, (int64_t)1 << 30};  /* 1 GiB shared */
  rig_point_t p;
  CHECK_FAILS(RIG_EINVAL, try_launch(&l, NULL, 0, NULL, 0, &p), "1 GiB of shared memory");
  l.shared = 0;
  l.groups = (int64_t)1 << 40;  /* past the grid's bound */
  CHECK_FAILS(RIG_EINVAL, try_launch(&l, NULL, 0, NULL, 0, &p), "2^40 groups");
  cr_assert_null(rig_lost(d), "a refused launch lost CUDA:0: %s", rig_lost(d));
  l.groups = 1;
  CHECK_OK(try_launch(&l, NULL, 0, NULL, 0, &p));
  CHECK_OK(rig_point_wait(p));
  rig_image_unref(image);
}

/* ---------------------------------------------------------------------- */
/* The timeline word                                                        */

Test(cuda, the_gpu_writes_the_timeline_word) { /* INTRO-06, TL-17, ORD-02 */
  rig_device_t *d = gpu(0);
  rig_image_t *image = load_kernels(d, "kernels.cubin");
  /* Half a second or more of work at the GPU's clock (under 4 GHz). */
  rig_point_t spun = launch_spin(image, 2000000000);
  uint64_t signaled = 0;
  CHECK_OK(rig_signaled(d, &signaled));
  cr_assert_lt(signaled, rig_point_value(spun), "the word shows the spin done as it starts");
  cr_assert(!point_reached(spun), "the spin reached as it starts");
  /* Work after it on the copy engine follows it (device order). */
  rig_buffer_t *b = create(d, 1 << 20);
  rig_point_t filled = submit_fill(b, 7);
  CHECK_OK(rig_point_wait(filled));
  cr_assert(point_reached(spun), "the fill's value is reached before the spin's");
  CHECK_OK(rig_signaled(d, &signaled));
  cr_assert_eq(signaled, rig_submitted(d), "after the wait the word reads %llu of %llu submitted",
               (unsigned long long)signaled, (unsigned long long)rig_submitted(d));
  rig_buffer_unref(b);
  rig_image_unref(image);
}

Test(cuda, copies_follow_earlier_launches) { /* ORD-02, ORD-07 */
  rig_device_t *d = gpu(0);
  rig_image_t *image = load_kernels(d, "kernels.cubin");
  enum { N = 1 << 20 };
  rig_buffer_t *a = create(d, N), *b = create(d, N);
  CHECK_OK(rig_buffer_fill(a, 0));
  /* A slow launch, a launch that writes a, then a copy of a on the copy
   * engine: device order alone makes the copy follow the kernel's write. */
  launch_spin(image, 500000000);
  launch_fill_words(image, a, 0x77777777u);
  rig_point_t p;
  rig_box_t all = rig_row(0, 0, N);
  CHECK_OK(rig_buffer_submit_copy(a, b, &all, 1, NULL, 0, &p));
  uint8_t *got = allocate_bytes(N);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, got, N, 0, N));
  uint8_t want = 0x77;
  cr_assert_eq(all_bytes_are(got, N, &want), 0, "the copy ran before the kernel that wrote its source");
  free(got);
  rig_buffer_unref(a);
  rig_buffer_unref(b);
  rig_image_unref(image);
}

/* ---------------------------------------------------------------------- */
/* Copies, fills, words                                                     */

enum { COPY_BYTES = (4 << 20) + 4096 + 12 };

Test(cuda, copies_through_borrows_run_on_the_copy_engine) { /* COPY-05, COPY-13, BUF-04 */
  rig_device_t *d = gpu(0);
  rig_buffer_t *from = host_pattern(COPY_BYTES), *to = create(rig_host(), COPY_BYTES);
  rig_buffer_t *from_here = borrow(d, from), *to_here = borrow(d, to);
  rig_buffer_t *a = create(d, COPY_BYTES), *b = create(d, COPY_BYTES);
  uint64_t before = rig_submitted(d);
  rig_point_t p;
  rig_box_t all = rig_row(0, 0, COPY_BYTES);
  CHECK_OK(rig_buffer_submit_copy(from_here, a, &all, 1, NULL, 0, &p));
  cr_assert_eq(rig_point_device(p), d, "a copy through a borrow ran elsewhere");
  CHECK_OK(rig_buffer_submit_copy(a, b, &all, 1, NULL, 0, &p));
  CHECK_OK(rig_buffer_submit_copy(b, to_here, &all, 1, NULL, 0, &p));
  cr_assert_eq(rig_point_value(p), before + 3, "three copies took %llu values",
               (unsigned long long)(rig_point_value(p) - before));
  CHECK_OK(rig_point_wait(p));
  assert_pattern(to, "host -> GPU -> GPU -> host through borrows");
  rig_buffer_unref(from_here);
  rig_buffer_unref(to_here);
  rig_buffer_unref(from);
  rig_buffer_unref(to);
  rig_buffer_unref(a);
  rig_buffer_unref(b);
}

Test(cuda, copies_of_host_memory_pass_through_staging) { /* COPY-14, COPY-15, BUF-04 */
  rig_device_t *d = gpu(0);
  /* Past one staging allocation of 32 MiB, so the copy takes two. */
  enum { N = (40 << 20) + 36 };
  rig_buffer_t *from = host_pattern(N), *on_gpu = create(d, N), *back = create(rig_host(), N);
  CHECK_OK(rig_buffer_copy(from, on_gpu));
  CHECK_OK(rig_buffer_copy(on_gpu, back));
  assert_pattern(back, "host -> GPU -> host through staging");
  rig_buffer_unref(from);
  rig_buffer_unref(on_gpu);
  rig_buffer_unref(back);
}

Test(cuda, pinned_memory_is_host_addressed_and_copies_directly) { /* COPY-10, HACC-01 */
  rig_device_t *d = gpu(0);
  rig_buffer_t *pinned = create_kind(d, COPY_BYTES, RIG_MEMORY_PINNED);
  cr_assert_not_null(rig_buffer_host(pinned), "Pinned memory has no host address");
  CHECK_OK(rig_buffer_write(pinned, 1, write_pattern, NULL));
  rig_buffer_t *on_gpu = create(d, COPY_BYTES), *pinned_back = create_kind(d, COPY_BYTES, RIG_MEMORY_PINNED);
  /* Mapped memory falls back to Pinned: CUDA offers no window on its memory. */
  rig_buffer_t *mapped = create_kind(d, COPY_BYTES, RIG_MEMORY_MAPPED);
  cr_assert_not_null(rig_buffer_host(mapped), "Mapped memory has no host address");
  CHECK_OK(rig_buffer_copy(pinned, on_gpu));
  CHECK_OK(rig_buffer_copy(on_gpu, pinned_back));
  assert_pattern(pinned_back, "Pinned -> GPU -> Pinned");
  CHECK_OK(rig_buffer_copy(on_gpu, mapped));
  assert_pattern(mapped, "GPU -> Mapped");
  rig_buffer_unref(pinned);
  rig_buffer_unref(pinned_back);
  rig_buffer_unref(mapped);
  rig_buffer_unref(on_gpu);
}

Test(cuda, boxes_copy_rows_between_pitches) { /* COPY-05, BUF-04 */
  rig_device_t *d = gpu(0);
  enum { ROWS = 300, WIDTH = 1000, PITCH = 1536 };
  rig_buffer_t *from = host_pattern(ROWS * PITCH), *from_here = borrow(d, from);
  rig_buffer_t *on_gpu = create(d, ROWS * WIDTH);
  rig_buffer_t *to = create(rig_host(), ROWS * PITCH), *to_here = borrow(d, to);
  CHECK_OK(rig_buffer_fill(to, 0));
  /* Rows of WIDTH bytes, packed on the GPU, then back at their pitch. */
  rig_box_t in = {0, 0, WIDTH, ROWS, PITCH, WIDTH}, out = {0, 0, WIDTH, ROWS, WIDTH, PITCH};
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_copy(from_here, on_gpu, &in, 1, NULL, 0, &p));
  CHECK_OK(rig_buffer_submit_copy(on_gpu, to_here, &out, 1, NULL, 0, &p));
  CHECK_OK(rig_point_wait(p));
  const uint8_t *bytes = rig_buffer_host(to);
  for (int64_t r = 0; r < ROWS; r++)
    for (int64_t c = 0; c < PITCH; c++) {
      uint8_t want = c < WIDTH ? pattern_byte(r * PITCH + c) : 0;
      cr_assert_eq(bytes[r * PITCH + c], want, "row %lld byte %lld", (long long)r, (long long)c);
    }
  rig_buffer_unref(from_here);
  rig_buffer_unref(to_here);
  rig_buffer_unref(from);
  rig_buffer_unref(to);
  rig_buffer_unref(on_gpu);
}

Test(cuda, fills_and_words_follow_earlier_parts) { /* ORD-03, ORD-04, ORD-05 */
  rig_device_t *d = gpu(0);
  enum { N = 1 << 16 };
  rig_buffer_t *b = create(d, N);
  /* A fill on the copy stream, then words on the compute stream: the words
   * follow the fill, whatever stream each runs on. */
  rig_word_write_t writes[] = {{{.slot = 0}, 8, 0x1122334455667788ull}, {{.slot = 0}, 20, 0x0102030405060708ull},
                               {{.slot = 0}, 33, 0xa1a2a3a4a5a6a7a8ull}};
  rig_part_t parts[2] = {{.kind = RIG_FILL}, {.kind = RIG_WORDS}};
  parts[0].u.fill.dst.slot = 0;
  parts[0].u.fill.value = 0xee;
  parts[1].u.words.writes = writes;
  parts[1].u.words.count = 3;
  rig_submission_t *s = NULL;
  CHECK_OK(rig_submission_make(d, parts, 2, NULL, &s));
  rig_run_t *r = NULL;
  CHECK_OK(rig_submission_take(s, &r));
  rig_point_t p;
  CHECK_OK(rig_submit(r, &b, 1, NULL, 0, &p));
  rig_submission_unref(s);
  uint8_t *got = allocate_bytes(N);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, got, N, 0, N));
  for (int64_t i = 0; i < N; i++) {
    uint8_t want = 0xee;
    for (size_t w = 0; w < 3; w++)
      if (i >= writes[w].offset && i < writes[w].offset + 8)
        want = (uint8_t)(writes[w].value >> (8 * (i - writes[w].offset)));
    cr_assert_eq(got[i], want, "byte %lld is %#x, not %#x", (long long)i, got[i], want);
  }
  free(got);
  rig_buffer_unref(b);
}

Test(cuda, copies_between_two_gpus) { /* COPY-10, BUF-04 */
  rig_device_t *d0 = gpu(0), *d1 = gpu(1);
  rig_buffer_t *from = host_pattern(COPY_BYTES), *on0 = create(d0, COPY_BYTES), *on1 = create(d1, COPY_BYTES);
  CHECK_OK(rig_buffer_copy(from, on0));
  rig_buffer_t *on0_from1 = borrow_or_null(d1, on0);
  CHECK_OK(rig_buffer_copy(on0_from1 ? on0_from1 : on0, on1));
  assert_pattern_on(on1, on0_from1 ? "GPU 0 -> GPU 1 through a peer borrow" : "GPU 0 -> GPU 1 through staging");
  rig_buffer_unref(on0_from1);
  rig_buffer_unref(from);
  rig_buffer_unref(on0);
  rig_buffer_unref(on1);
}

/* ---------------------------------------------------------------------- */
/* Waits between devices                                                    */

Test(cuda, work_follows_a_memory_device_and_back) { /* ORD-07, ORD-08 */
  rig_device_t *d = gpu(0), *mem = open_named("MEM:0");
  rig_image_t *image = load_kernels(d, "kernels.cubin");
  enum { N = 1 << 20 };
  rig_buffer_t *on_mem = create(mem, N), *on_gpu = create(d, N), *second = create(mem, N);
  CHECK_OK(rig_buffer_write(on_mem, 1, write_pattern, NULL));
  /* MEM:0 -> GPU through a borrow, then a kernel over the GPU's bytes: it
   * follows the copy that wrote them. */
  rig_buffer_t *mem_here = borrow(d, on_mem);
  rig_point_t p;
  rig_box_t all = rig_row(0, 0, N);
  CHECK_OK(rig_buffer_submit_copy(mem_here, on_gpu, &all, 1, NULL, 0, &p));
  assert_pattern_on(on_gpu, "MEM:0 -> GPU");
  launch_fill_words(image, on_gpu, 0xabcdef01u);
  /* GPU -> MEM:0 and on to a second MEM:0 buffer, run by the host: each
   * follows the kernel's write. */
  CHECK_OK(rig_buffer_submit_copy(on_gpu, mem_here, &all, 1, NULL, 0, &p));
  CHECK_OK(rig_buffer_copy(on_mem, second));
  const uint32_t *words = rig_buffer_host(second);
  for (int64_t i = 0; i < N / 4; i++) cr_assert_eq(words[i], 0xabcdef01u, "word %lld", (long long)i);
  rig_buffer_unref(mem_here);
  rig_buffer_unref(on_mem);
  rig_buffer_unref(second);
  rig_buffer_unref(on_gpu);
  rig_image_unref(image);
}

Test(cuda, the_gpu_queue_waits_for_another_devices_word) { /* SUB-24, SUB-31, ORD-09 */
  rig_device_t *d = gpu(0);
  /* A simulated GPU whose work takes a second: its word rises late. */
  rig_device_t *sim = open_with("SIM:5", "latency_us=1000000");
  rig_buffer_t *on_sim = create(sim, 4096), *on_gpu = create(d, 4096);
  rig_point_t late = submit_fill(on_sim, 1);
  rig_point_t after = submit_fill_after(on_gpu, 2, &late, 1);
  /* The submit returned before the simulated work was done: the GPU's
   * queue waits on its word, not the host. */
  cr_assert(!point_reached(late), "the submit waited on the host for SIM:5");
  CHECK_OK(rig_point_wait(after));
  cr_assert(point_reached(late), "the GPU's fill ran before the point it follows");
  rig_buffer_unref(on_sim);
  rig_buffer_unref(on_gpu);
  CHECK_OK(rig_close(sim));
}

/* ---------------------------------------------------------------------- */
/* Files into GPU memory                                                    */

Test(cuda, a_file_reads_into_gpu_memory) { /* COPY-04, COPY-15 */
  rig_device_t *d = gpu(0);
  enum { N = (6 << 20) + 777 };
  char path[] = "/tmp/rig-cuda-file-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0, "mkstemp");
  uint8_t *bytes = allocate_bytes(N);
  write_pattern(bytes, N, NULL);
  cr_assert_eq(write(fd, bytes, N), N);
  close(fd);
  rig_buffer_t *file = NULL;
  CHECK_OK(rig_disk_open(path, RIG_DISK_READ, 0, -1, &file));
  rig_buffer_t *on_gpu = create(d, N);
  CHECK_OK(rig_buffer_copy(file, on_gpu));
  assert_pattern_on(on_gpu, "file -> GPU");
  rig_buffer_unref(file);
  rig_buffer_unref(on_gpu);
  unlink(path);
  free(bytes);
}

/* ---------------------------------------------------------------------- */
/* DMA                                                                      */

Test(cuda, dma_exports_or_says_why) { /* DRV-50, DRV-51 */
  rig_device_t *d = gpu(0);
  rig_buffer_t *b = create(d, 2 << 20);
  rig_dma_t dma = {.size = sizeof dma};
  CHECK_FAILS(RIG_EOPEN, rig_buffer_dma(b, "not-a-bus", &dma));
  cr_assert(strstr(rig_last_error(), "not-a-bus"), "the reason does not name fn: %s", rig_last_error());
  /* Toward the GPU's own function: a dma-buf, or the reason there is none. */
  rig_status_t s = rig_buffer_dma(b, rig_device_bus(d), &dma);
  if (s == RIG_OK) {
    cr_assert_eq(dma.kind, RIG_DMA_DMABUF);
    cr_assert_geq(dma.fd, 0);
    close(dma.fd);
  } else {
    cr_assert_eq(s, RIG_EOPEN, "%s: %s", rig_status_name(s), rig_last_error());
    cr_assert(rig_last_error()[0], "no reason");
  }
  rig_buffer_unref(b);
}

/* ---------------------------------------------------------------------- */
/* Faults                                                                   */

Test(cuda, a_trap_loses_the_device_with_cudas_message) { /* LOSS-01, DRV-86, DEV-05 */
  rig_device_t *d = gpu(0);
  rig_image_t *image = load_kernels(d, "kernels.cubin");
  launch_t l = {function_of(image, "trap"), NULL, 0, 0, NULL, 0, 1, 1, 0};
  rig_point_t p;
  /* The trap may break the context before the submit's last call, which
   * then reports it; else the wait does. */
  if (try_launch(&l, NULL, 0, NULL, 0, &p) == RIG_OK)
    CHECK_LOST(d, rig_point_wait(p));
  else
    cr_assert_not_null(rig_lost(d), "the launch failed without losing CUDA:0: %s", rig_last_error());
  const char *why = rig_lost(d);
  cr_assert(why && strstr(why, "CUDA_ERROR_"), "the reason does not carry CUDA's error: %s", why ? why : "(live)");
  rig_image_unref(image);
  CHECK_OK(rig_close(d));
  cr_assert_str_eq(rig_lost(d), why, "the close changed the reason");
  /* The name opens a new device afresh, or, where CUDA keeps the device's
   * sticky error for the rest of the process (as driver 580 does after a
   * trap, whose primary context is released at the stop), the open
   * answers RIG_EOPEN with CUDA's reason: never the old device, a crash or
   * a hang. */
  rig_device_t *again = NULL;
  rig_status_t reopened = rig_open("CUDA:0", NULL, &again);
  if (reopened != RIG_OK) {
    cr_assert_eq(reopened, RIG_EOPEN, "%s: %s", rig_status_name(reopened), rig_last_error());
    cr_assert(strstr(rig_last_error(), "CUDA_ERROR_"), "the reopen's reason: %s", rig_last_error());
    return;
  }
  cr_assert(!rig_device_equal(again, d));
  image = load_kernels(again, "kernels.cubin");
  rig_buffer_t *b = create(again, 4096);
  CHECK_OK(rig_point_wait(launch_fill_words(image, b, 5)));
  rig_buffer_unref(b);
  rig_image_unref(image);
}
