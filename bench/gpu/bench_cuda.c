/* The CUDA driver beside the raw CUDA Driver API on the same GPU (CUDA:0)
 * and the same context (its primary one), in one run:
 *   launch    rig_submit of an empty kernel, waited with rig_point_wait,
 *             beside cuLaunchKernel then cuStreamSynchronize;
 *   stream    STREAM launches of an empty kernel submitted one after
 *             another, then the last waited for: per launch, on CUDA:0 and,
 *             where RIG_SERVICE names a rigd serving CUDA:0, through
 *             CUDA:0@rigd, beside STREAM cuLaunchKernel then one
 *             cuStreamSynchronize (the goal through rigd: at most 1 us
 *             added per launch);
 *   h2d, d2h  rig_buffer_copy between CUDA:0's Pinned memory and its device
 *             memory (pinned), and between a host buffer borrowed on CUDA:0
 *             and device memory (borrow), beside cuMemcpyAsync between
 *             cuMemHostAlloc memory and device memory, then
 *             cuStreamSynchronize;
 *   file      a file read into device memory through the io device DISK
 *             (rig_disk_open, rig_buffer_copy), beside a loop of read() into
 *             32 MiB of pinned memory, each chunk then copied with
 *             cuMemcpyAsync and synchronized; the file is in the page cache
 *             for both;
 *   disk      the same read from the disk (the file's pages dropped first),
 *             and CUDA:0's memory written into a new file made durable
 *             (rig_buffer_copy, rig_disk_sync), beside the disk's own
 *             O_DIRECT rate into and out of pinned memory (plain_uring.h,
 *             with fdatasync after writing) and beside the loops through
 *             32 MiB of pinned memory a user would write; the goal is rig
 *             at 0.9x the disk's rate or better.
 * Prints `NAME: V UNIT` for each figure and `ratio NAME: X`: for the launch
 * rig's time over the raw one's (above 1: rig's overhead), for the copies
 * and the file rig's bandwidth over the raw one's (below 1: rig is slower),
 * for the disk rig's over the disk's (cuda_file_cold_disk,
 * cuda_file_write_disk) and over the loops' (_raw).
 *
 * Usage: bench_cuda [--file PATH] [--file-size N[K|M|G]] [--max-copy N[K|M|G]]
 * The file (default /var/tmp/rig-bench-cuda.bin, 512M, whole MiBs) and the
 * one written (FILE.out) are made and removed. */
#define _GNU_SOURCE

#include "bench.h"
#include "plain_uring.h"

#include <rig/disk.h>

#include <cuda.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 5
#define MIB ((int64_t)1 << 20)
#define CHUNK (32 * MIB)

static void cu_check(CUresult r, const char *call) {
  if (r == CUDA_SUCCESS) return;
  const char *name = "?", *text = "?";
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  fprintf(stderr, "%s: %s: %s\n", call, name, text);
  exit(1);
}
#define CU_CHECK(call) cu_check((call), #call)

/* The measured best of ROUNDS measurements of op, in ns per repetition. */
static double best_ns(bench_op op, void *context) {
  bench_timer t = bench_timer_make(op, context);
  for (int i = 0; i < ROUNDS; i++) bench_round(&t);
  return t.best_ns;
}

static uint8_t *read_file(const char *path, int64_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) bench_fail("cannot open the compiled kernels");
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *bytes = malloc((size_t)*n);
  if (!bytes || fread(bytes, 1, (size_t)*n, f) != (size_t)*n) bench_fail("cannot read the compiled kernels");
  fclose(f);
  return bytes;
}

/* ---- Launch --------------------------------------------------------- */

struct rig_launch {
  rig_submission_t *s;
};

static void run_rig_launch(void *context, long reps) {
  struct rig_launch *l = context;
  for (long i = 0; i < reps; i++) {
    rig_run_t *r = NULL;
    rig_point_t p;
    BENCH_CHECK(rig_submission_take(l->s, &r));
    BENCH_CHECK(rig_run_groups(r, 0, 1, 1, 1));
    BENCH_CHECK(rig_run_threads(r, 0, 1, 1, 1));
    BENCH_CHECK(rig_submit(r, NULL, 0, NULL, 0, &p));
    BENCH_CHECK(rig_point_wait(p));
  }
}

struct raw_launch {
  CUfunction f;
  CUstream stream;
};

static void run_raw_launch(void *context, long reps) {
  struct raw_launch *l = context;
  for (long i = 0; i < reps; i++) {
    CU_CHECK(cuLaunchKernel(l->f, 1, 1, 1, 1, 1, 1, 0, l->stream, NULL, NULL));
    CU_CHECK(cuStreamSynchronize(l->stream));
  }
}

/* A submission on d of one launch of the kernels' empty, its image in
 * *image. */
static rig_submission_t *empty_launch(rig_device_t *d, const uint8_t *cubin, int64_t cubin_bytes,
                                      rig_image_t **image) {
  rig_function_t *f = NULL;
  BENCH_CHECK(rig_image_load(d, cubin, cubin_bytes, image));
  BENCH_CHECK(rig_image_resolve(*image, "empty", &f));
  if (!f) bench_fail("the kernels have no empty");
  rig_part_t part = {.kind = RIG_LAUNCH};
  part.u.launch.function = f;
  rig_submission_t *s = NULL;
  BENCH_CHECK(rig_submission_make(d, &part, 1, NULL, &s));
  if (rig_submission_block(s, 0) != 0) bench_fail("the launch's block is not 0");
  return s;
}

static void bench_launch(rig_device_t *d, const uint8_t *cubin, int64_t cubin_bytes, CUstream stream) {
  rig_image_t *image = NULL;
  struct rig_launch rl = {empty_launch(d, cubin, cubin_bytes, &image)};

  CUmodule module;
  struct raw_launch raw = {NULL, stream};
  CU_CHECK(cuModuleLoadData(&module, cubin));
  CU_CHECK(cuModuleGetFunction(&raw.f, module, "empty"));

  double rig_ns = best_ns(run_rig_launch, &rl), raw_ns = best_ns(run_raw_launch, &raw);
  printf("cuda_launch_rig: %.0f ns\n", rig_ns);
  printf("cuda_launch_raw: %.0f ns\n", raw_ns);
  printf("ratio cuda_launch_rig_vs_raw: %.2f\n", rig_ns / raw_ns);
  fflush(stdout);
  CU_CHECK(cuModuleUnload(module));
  rig_submission_unref(rl.s);
  rig_image_unref(image);
}

/* ---- A stream of launches ------------------------------------------- */

#define STREAM 10000

static void run_rig_stream(void *context, long reps) {
  struct rig_launch *l = context;
  for (long i = 0; i < reps; i++) {
    rig_point_t p = {0};
    for (int k = 0; k < STREAM; k++) {
      rig_run_t *r = NULL;
      BENCH_CHECK(rig_submission_take(l->s, &r));
      BENCH_CHECK(rig_run_groups(r, 0, 1, 1, 1));
      BENCH_CHECK(rig_run_threads(r, 0, 1, 1, 1));
      BENCH_CHECK(rig_submit(r, NULL, 0, NULL, 0, &p));
    }
    BENCH_CHECK(rig_point_wait(p));
  }
}

static void run_raw_stream(void *context, long reps) {
  struct raw_launch *l = context;
  for (long i = 0; i < reps; i++) {
    for (int k = 0; k < STREAM; k++) CU_CHECK(cuLaunchKernel(l->f, 1, 1, 1, 1, 1, 1, 0, l->stream, NULL, NULL));
    CU_CHECK(cuStreamSynchronize(l->stream));
  }
}

/* Per launch of a stream on d, in ns. */
static double rig_stream_ns(rig_device_t *d, const uint8_t *cubin, int64_t cubin_bytes) {
  rig_image_t *image = NULL;
  struct rig_launch rl = {empty_launch(d, cubin, cubin_bytes, &image)};
  double ns = best_ns(run_rig_stream, &rl) / STREAM;
  rig_submission_unref(rl.s);
  rig_image_unref(image);
  return ns;
}

static void bench_stream(rig_device_t *d, const uint8_t *cubin, int64_t cubin_bytes, CUstream stream) {
  CUmodule module;
  struct raw_launch raw = {NULL, stream};
  CU_CHECK(cuModuleLoadData(&module, cubin));
  CU_CHECK(cuModuleGetFunction(&raw.f, module, "empty"));
  double raw_ns = best_ns(run_raw_stream, &raw) / STREAM;
  double rig_ns = rig_stream_ns(d, cubin, cubin_bytes);
  printf("cuda_stream_launch_raw: %.0f ns\n", raw_ns);
  printf("cuda_stream_launch_rig: %.0f ns\n", rig_ns);
  printf("ratio cuda_stream_launch_rig_vs_raw: %.2f\n", rig_ns / raw_ns);
  rig_device_t *served = NULL;
  if (getenv("RIG_SERVICE") && rig_open("CUDA:0@rigd", NULL, &served) == RIG_OK) {
    double rigd_ns = rig_stream_ns(served, cubin, cubin_bytes);
    printf("cuda_stream_launch_rigd: %.0f ns\n", rigd_ns);
    printf("cuda_stream_launch_rigd_added: %.0f ns\n", rigd_ns - raw_ns);
    printf("ratio cuda_stream_launch_rigd_vs_raw: %.2f\n", rigd_ns / raw_ns);
    BENCH_CHECK(rig_close(served));
  } else if (getenv("RIG_SERVICE")) {
    printf("cuda_stream_launch_rigd: not measured: CUDA:0@rigd does not open: %s\n", rig_last_error());
  }
  fflush(stdout);
  CU_CHECK(cuModuleUnload(module));
}

/* ---- Copies --------------------------------------------------------- */

struct rig_copy {
  rig_buffer_t *src, *dst;
};

static void run_rig_copy(void *context, long reps) {
  struct rig_copy *c = context;
  for (long i = 0; i < reps; i++) BENCH_CHECK(rig_buffer_copy(c->src, c->dst));
}

struct raw_copy {
  CUdeviceptr src, dst;
  size_t n;
  CUstream stream;
};

static void run_raw_copy(void *context, long reps) {
  struct raw_copy *c = context;
  for (long i = 0; i < reps; i++) {
    CU_CHECK(cuMemcpyAsync(c->dst, c->src, c->n, c->stream));
    CU_CHECK(cuStreamSynchronize(c->stream));
  }
}

static rig_buffer_t *create(rig_device_t *d, int64_t n, rig_memory_t kind) {
  rig_buffer_t *b = NULL;
  BENCH_CHECK(rig_buffer_create(d, n, kind, &b));
  return b;
}

static void bench_copies(rig_device_t *d, int64_t n, CUstream stream) {
  char label[32];
  snprintf(label, sizeof label, "%lldM", (long long)(n / MIB));
  rig_buffer_t *pinned = create(d, n, RIG_MEMORY_PINNED), *on_gpu = create(d, n, RIG_MEMORY_DEVICE);
  rig_buffer_t *host = create(rig_host(), n, RIG_MEMORY_DEVICE), *borrowed = NULL;
  BENCH_CHECK(rig_buffer_fill(pinned, 1));
  BENCH_CHECK(rig_buffer_fill(host, 2));
  BENCH_CHECK(rig_buffer_borrow(d, host, &borrowed));
  if (!borrowed) bench_fail("CUDA:0 does not borrow a host buffer");

  void *raw_host = NULL;
  CUdeviceptr raw_gpu = 0;
  CU_CHECK(cuMemHostAlloc(&raw_host, (size_t)n, CU_MEMHOSTALLOC_PORTABLE));
  CU_CHECK(cuMemAlloc(&raw_gpu, (size_t)n));
  memset(raw_host, 3, (size_t)n);

  struct {
    const char *name;
    struct rig_copy pinned, borrowed;
    struct raw_copy raw;
  } ways[2] = {
      {"h2d", {pinned, on_gpu}, {borrowed, on_gpu}, {(CUdeviceptr)(uintptr_t)raw_host, raw_gpu, (size_t)n, stream}},
      {"d2h", {on_gpu, pinned}, {on_gpu, borrowed}, {raw_gpu, (CUdeviceptr)(uintptr_t)raw_host, (size_t)n, stream}},
  };
  for (int w = 0; w < 2; w++) {
    double pinned_gbps = (double)n / best_ns(run_rig_copy, &ways[w].pinned);
    double borrowed_gbps = (double)n / best_ns(run_rig_copy, &ways[w].borrowed);
    double raw_gbps = (double)n / best_ns(run_raw_copy, &ways[w].raw);
    printf("cuda_%s_pinned %s: %.2f GB/s\n", ways[w].name, label, pinned_gbps);
    printf("cuda_%s_borrow %s: %.2f GB/s\n", ways[w].name, label, borrowed_gbps);
    printf("cuda_%s_raw %s: %.2f GB/s\n", ways[w].name, label, raw_gbps);
    printf("ratio cuda_%s_pinned %s: %.3f\n", ways[w].name, label, pinned_gbps / raw_gbps);
    printf("ratio cuda_%s_borrow %s: %.3f\n", ways[w].name, label, borrowed_gbps / raw_gbps);
    fflush(stdout);
  }
  CU_CHECK(cuMemFree(raw_gpu));
  CU_CHECK(cuMemFreeHost(raw_host));
  rig_buffer_unref(borrowed);
  rig_buffer_unref(host);
  rig_buffer_unref(pinned);
  rig_buffer_unref(on_gpu);
}

/* ---- A file into GPU memory ----------------------------------------- */

static void make_file(const char *path, int64_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) bench_fail("cannot create the benchmark's file");
  uint8_t *chunk = malloc((size_t)CHUNK);
  if (!chunk) bench_fail("no memory");
  for (int64_t i = 0; i < CHUNK; i++) chunk[i] = (uint8_t)(i * 7 + (i >> 12));
  for (int64_t done = 0; done < n;) {
    ssize_t w = write(fd, chunk, (size_t)(n - done < CHUNK ? n - done : CHUNK));
    if (w <= 0) bench_fail("cannot write the benchmark's file");
    done += w;
  }
  free(chunk);
  close(fd);
}

struct rig_file {
  const char *path;
  rig_buffer_t *dst;
};

static void run_rig_file(void *context, long reps) {
  struct rig_file *f = context;
  for (long i = 0; i < reps; i++) {
    rig_buffer_t *file = NULL;
    BENCH_CHECK(rig_disk_open(f->path, RIG_DISK_READ, 0, -1, &file));
    BENCH_CHECK(rig_buffer_copy(file, f->dst));
    rig_buffer_unref(file);
  }
}

struct raw_file {
  const char *path;
  int64_t n;
  void *pinned;
  CUdeviceptr dst;
  CUstream stream;
};

static void run_raw_file(void *context, long reps) {
  struct raw_file *f = context;
  for (long i = 0; i < reps; i++) {
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) bench_fail("cannot open the benchmark's file");
    for (int64_t at = 0; at < f->n;) {
      ssize_t got = read(fd, f->pinned, (size_t)(f->n - at < CHUNK ? f->n - at : CHUNK));
      if (got <= 0) bench_fail("cannot read the benchmark's file");
      CU_CHECK(cuMemcpyAsync(f->dst + (CUdeviceptr)at, (CUdeviceptr)(uintptr_t)f->pinned, (size_t)got, f->stream));
      CU_CHECK(cuStreamSynchronize(f->stream));
      at += got;
    }
    close(fd);
  }
}

static void bench_file(rig_device_t *d, const char *path, int64_t n, CUstream stream) {
  make_file(path, n);
  rig_buffer_t *on_gpu = create(d, n, RIG_MEMORY_DEVICE);
  struct rig_file rf = {path, on_gpu};
  struct raw_file raw = {path, n, NULL, 0, stream};
  CU_CHECK(cuMemHostAlloc(&raw.pinned, (size_t)CHUNK, CU_MEMHOSTALLOC_PORTABLE));
  CU_CHECK(cuMemAlloc(&raw.dst, (size_t)n));
  run_raw_file(&raw, 1); /* the file into the page cache */
  double rig_gbps = (double)n / best_ns(run_rig_file, &rf), raw_gbps = (double)n / best_ns(run_raw_file, &raw);
  printf("cuda_file_rig %lldM: %.2f GB/s\n", (long long)(n / MIB), rig_gbps);
  printf("cuda_file_raw %lldM: %.2f GB/s\n", (long long)(n / MIB), raw_gbps);
  printf("ratio cuda_file %lldM: %.3f\n", (long long)(n / MIB), rig_gbps / raw_gbps);
  fflush(stdout);
  CU_CHECK(cuMemFree(raw.dst));
  CU_CHECK(cuMemFreeHost(raw.pinned));
  rig_buffer_unref(on_gpu);
  unlink(path);
}

/* ---- Files and GPU memory at the disk's speed ----------------------- */

/* The byte at offset o of the file make_file writes. */
static uint8_t file_byte(int64_t o) {
  int64_t i = o % CHUNK;
  return (uint8_t)(i * 7 + (i >> 12));
}

/* Fails the benchmark unless the n bytes at p are the file's from byte 0. */
static void check_file_bytes(const uint8_t *p, int64_t n, const char *what) {
  for (int64_t o = 0; o < n; o++)
    if (p[o] != file_byte(o)) {
      fprintf(stderr, "%s: byte %lld is not the file's\n", what, (long long)o);
      exit(1);
    }
}

struct disk_run {
  const char *path, *out; /* the file read; the file written */
  int64_t n;
  uint8_t *pinned;        /* n bytes of pinned memory: the disk's own rate */
  void *chunk;            /* CHUNK bytes of pinned memory: the raw loops */
  CUdeviceptr gpu;        /* n bytes: the raw loops */
  rig_buffer_t *on_gpu;   /* n bytes of CUDA:0's memory: rig */
  CUstream stream;
  plain_uring_t uring;    /* over pinned, registered before the rounds */
};

/* Drops the file's pages (flushed first, so that they can go), so that
 * the next read of it comes from the disk. */
static void drop_file(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fdatasync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
    bench_fail("cannot drop the benchmark's file from the page cache");
  close(fd);
}

/* A new sparse file of n bytes at path, as a checkpoint's file is new. */
static void new_file(const char *path, int64_t n) {
  unlink(path);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, n) != 0) bench_fail("cannot make the benchmark's output file");
  close(fd);
}

static void disk_read(struct disk_run *r) {
  plain_uring_open(&r->uring, r->path, false);
  plain_uring_move(&r->uring);
  plain_uring_close(&r->uring);
}

static void disk_write(struct disk_run *r) {
  plain_uring_open(&r->uring, r->out, true);
  plain_uring_move(&r->uring);
  if (fdatasync(r->uring.fd) != 0) bench_fail("fdatasync failed");
  plain_uring_close(&r->uring);
}

static void rig_read(struct disk_run *r) { run_rig_file(&(struct rig_file){r->path, r->on_gpu}, 1); }

static void rig_write(struct disk_run *r) {
  rig_buffer_t *file = NULL;
  BENCH_CHECK(rig_disk_open(r->out, RIG_DISK_READ_WRITE, 0, -1, &file));
  BENCH_CHECK(rig_buffer_copy(r->on_gpu, file));
  BENCH_CHECK(rig_disk_sync(file));
  rig_buffer_unref(file);
}

static void raw_read(struct disk_run *r) {
  run_raw_file(&(struct raw_file){r->path, r->n, r->chunk, r->gpu, r->stream}, 1);
}

/* The loop a hand-written checkpoint writer runs: each chunk to pinned
 * memory, then written; the file flushed at the end. */
static void raw_write(struct disk_run *r) {
  int fd = open(r->out, O_WRONLY | O_CLOEXEC);
  if (fd < 0) bench_fail("cannot open the benchmark's output file");
  for (int64_t at = 0; at < r->n; at += CHUNK) {
    size_t bytes = (size_t)(r->n - at < CHUNK ? r->n - at : CHUNK);
    CU_CHECK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)r->chunk, r->gpu + (CUdeviceptr)at, bytes, r->stream));
    CU_CHECK(cuStreamSynchronize(r->stream));
    if (pwrite(fd, r->chunk, bytes, at) != (ssize_t)bytes) bench_fail("cannot write the benchmark's output file");
  }
  if (fdatasync(fd) != 0) bench_fail("fdatasync failed");
  close(fd);
}

/* The best of ROUNDS cold reads (write false) or durable writes into a
 * new file, in GB/s. */
static double best_disk_gbps(void (*move)(struct disk_run *), struct disk_run *r, bool write) {
  double best_ns = HUGE_VAL;
  for (int i = 0; i < ROUNDS; i++) {
    if (write)
      new_file(r->out, r->n);
    else
      drop_file(r->path);
    double start = bench_now_ns();
    move(r);
    double ns = bench_now_ns() - start;
    if (ns < best_ns) best_ns = ns;
  }
  return (double)r->n / best_ns;
}

/* File -> CUDA:0 from the disk (cold) and CUDA:0 -> file made durable,
 * each beside the disk's own O_DIRECT rate into and out of pinned memory
 * (plain_uring.h) and the loop through pinned memory a user would write;
 * cuMemcpy from pinned memory is the copies' cuda_h2d_raw above.  The
 * goal: rig at 0.9x the disk's rate or better. */
static void bench_disk(rig_device_t *d, const char *path, int64_t n, CUstream stream) {
  if (n % PLAIN_URING_BLOCK != 0) bench_fail("--file-size must be whole MiBs");
  char out[4096];
  snprintf(out, sizeof out, "%s.out", path);
  make_file(path, n);
  struct disk_run r = {.path = path, .out = out, .n = n, .on_gpu = create(d, n, RIG_MEMORY_DEVICE), .stream = stream};
  CU_CHECK(cuMemHostAlloc((void **)&r.pinned, (size_t)n, CU_MEMHOSTALLOC_PORTABLE));
  CU_CHECK(cuMemHostAlloc(&r.chunk, (size_t)CHUNK, CU_MEMHOSTALLOC_PORTABLE));
  CU_CHECK(cuMemAlloc(&r.gpu, (size_t)n));
  plain_uring_init(&r.uring, r.pinned, n);
  const double disk_in = best_disk_gbps(disk_read, &r, false), rig_in = best_disk_gbps(rig_read, &r, false),
               raw_in = best_disk_gbps(raw_read, &r, false);
  /* What rig read is the file; the writes write it back out. */
  rig_buffer_t *host = create(rig_host(), n, RIG_MEMORY_DEVICE);
  BENCH_CHECK(rig_buffer_copy(r.on_gpu, host));
  check_file_bytes(rig_buffer_host(host), n, "file -> CUDA:0");
  memcpy(r.pinned, rig_buffer_host(host), (size_t)n);
  const double disk_out = best_disk_gbps(disk_write, &r, true), raw_out = best_disk_gbps(raw_write, &r, true),
               rig_out = best_disk_gbps(rig_write, &r, true);
  drop_file(out);
  BENCH_CHECK(rig_buffer_fill(host, 0));
  rig_buffer_t *written = NULL;
  BENCH_CHECK(rig_disk_open(out, RIG_DISK_READ, 0, -1, &written));
  BENCH_CHECK(rig_buffer_copy(written, host));
  check_file_bytes(rig_buffer_host(host), n, "CUDA:0 -> file");
  rig_buffer_unref(written);
  const long long mib = (long long)(n / MIB);
  printf("cuda_file_cold_rig %lldM: %.2f GB/s\n", mib, rig_in);
  printf("cuda_file_cold_raw %lldM: %.2f GB/s\n", mib, raw_in);
  printf("disk_read_direct %lldM: %.2f GB/s\n", mib, disk_in);
  printf("cuda_file_write_rig %lldM: %.2f GB/s\n", mib, rig_out);
  printf("cuda_file_write_raw %lldM: %.2f GB/s\n", mib, raw_out);
  printf("disk_write_direct %lldM: %.2f GB/s\n", mib, disk_out);
  printf("ratio cuda_file_cold_disk %lldM: %.3f\n", mib, rig_in / disk_in);
  printf("ratio cuda_file_cold_raw %lldM: %.3f\n", mib, rig_in / raw_in);
  printf("ratio cuda_file_write_disk %lldM: %.3f\n", mib, rig_out / disk_out);
  printf("ratio cuda_file_write_raw %lldM: %.3f\n", mib, rig_out / raw_out);
  fflush(stdout);
  rig_buffer_unref(host);
  plain_uring_exit(&r.uring);
  CU_CHECK(cuMemFree(r.gpu));
  CU_CHECK(cuMemFreeHost(r.chunk));
  CU_CHECK(cuMemFreeHost(r.pinned));
  rig_buffer_unref(r.on_gpu);
  unlink(out);
  unlink(path);
}

int main(int argc, char **argv) {
  const char *path = "/var/tmp/rig-bench-cuda.bin";
  int64_t file_bytes = 512 * MIB, max_copy = 256 * MIB;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
      path = argv[++i];
    else if (strcmp(argv[i], "--file-size") == 0 && i + 1 < argc)
      file_bytes = bench_parse_size(argv[++i]);
    else if (strcmp(argv[i], "--max-copy") == 0 && i + 1 < argc)
      max_copy = bench_parse_size(argv[++i]);
    else
      bench_fail("usage: bench_cuda [--file PATH] [--file-size N[K|M|G]] [--max-copy N[K|M|G]]");
  }
  if (file_bytes <= 0 || max_copy < MIB) bench_fail("bad sizes");

  rig_device_t *d = NULL;
  BENCH_CHECK(rig_open("CUDA:0", NULL, &d));
  /* The raw baselines run on CUDA:0's primary context, the one rig uses. */
  CUdevice device;
  CUcontext context;
  CUstream stream;
  CU_CHECK(cuInit(0));
  CU_CHECK(cuDeviceGet(&device, 0));
  CU_CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CU_CHECK(cuCtxSetCurrent(context));
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  printf("device: CUDA:0 %s at %s\n", rig_device_arch(d), rig_device_bus(d) ? rig_device_bus(d) : "?");

  int64_t cubin_bytes = 0;
  uint8_t *cubin = read_file(RIG_GPU_KERNELS "/kernels.cubin", &cubin_bytes);
  bench_launch(d, cubin, cubin_bytes, stream);
  bench_stream(d, cubin, cubin_bytes, stream);
  free(cubin);
  for (int64_t n = MIB; n <= max_copy; n *= 16) bench_copies(d, n, stream);
  bench_file(d, path, file_bytes, stream);
  bench_disk(d, path, file_bytes, stream);

  CU_CHECK(cuStreamDestroy(stream));
  BENCH_CHECK(rig_close(d));
  CU_CHECK(cuDevicePrimaryCtxRelease(device));
  return 0;
}
