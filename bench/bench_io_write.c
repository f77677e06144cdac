/* Writing a checkpoint through the io device DISK (rig/disk.h) beside two
 * writers written here, in the same run.  Each run of each writer writes a
 * new file (made sparse, of the benchmark's size, as a checkpoint's file is
 * new) and makes it durable; the time counts both:
 *   io_mem   rig_disk_open + rig_buffer_copy from a MEM:0 buffer +
 *            rig_disk_sync;
 *   io_host  the same from a host buffer;
 *   uring    a plain liburing O_DIRECT writer from the host buffer (depth
 *            32, 1 MiB blocks, write_fixed: plain_uring.h) + fdatasync;
 *   pwrite   a loop of 1 MiB pwrites through the page cache + fdatasync;
 *   io_sim   as io_mem, from SIM:0's memory, which the host does not
 *            address (a GPU's): the bytes cross staging on their way;
 *   io_rigd_mem, io_rigd_sim  as io_mem and io_sim, from MEM:0@rigd and
 *            SIM:0@rigd, proxies of a rigd the benchmark starts, whose
 *            bytes rigd copies into the staging it shares with the client.
 * The writers take turns, run after run, so that a drift of the shared
 * machine hits each alike.  After each timing the first word of every
 * block of the file is read back and checked, so that a writer that wrote
 * nothing cannot pass for a fast one.  Prints `NAME: V GB/s` for each
 * writer (the best of the runs) and `ratio io_mem: X` (io_host, io_sim
 * too), rig's bandwidth over the plain O_DIRECT writer's, `ratio
 * io_mem_pwrite: X`, over the pwrite loop's, and `ratio io_rigd_mem_mem:
 * X` (io_rigd_sim_sim too), a write through rigd's over the same write
 * in-process.
 *
 * Usage: bench_io_write [--file PATH] [--size N[K|M|G]] [--runs N]
 * The file (default /var/tmp/rig-bench-write.bin, 1G, whole MiBs) is made
 * anew for each write and removed after it. */
#define _GNU_SOURCE

#include "bench.h"
#include "plain_uring.h"
#include "rigd_child.h"

#include <rig/disk.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#define MIB ((int64_t)1 << 20)
#define BLOCK PLAIN_URING_BLOCK

typedef struct writer writer_t;
struct writer {
  const char *name;
  void (*write)(writer_t *w); /* writes the whole file and flushes it */
  const char *path;
  int64_t size;
  uint64_t tag; /* what the first word of block b holds: tag + b */
  double best_s;
  /* rig */
  rig_buffer_t *from;
  /* plain writers: from is host memory, which they write in place */
  plain_uring_t *uring; /* its ring, made and registered before the runs */
};

/* The source's first word of each block, tagged anew for each write, so
 * that a file left from an earlier write fails the check: in place where
 * the host addresses the source, else in the host buffer, then copied. */
static void tag_blocks(writer_t *w, rig_buffer_t *host) {
  w->tag += (uint64_t)(w->size / BLOCK);
  uint8_t *p = rig_buffer_host(w->from);
  for (int64_t b = 0; b < w->size / BLOCK; b++) {
    uint64_t word = w->tag + (uint64_t)b;
    memcpy((p ? p : rig_buffer_host(host)) + b * BLOCK, &word, sizeof word);
  }
  if (!p) BENCH_CHECK(rig_buffer_copy(host, w->from));
}

static void check_file(const writer_t *w) {
  int fd = open(w->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) bench_fail(strerror(errno));
  for (int64_t b = 0; b < w->size / BLOCK; b++) {
    uint64_t word = 0;
    if (pread(fd, &word, sizeof word, b * BLOCK) != (ssize_t)sizeof word || word != w->tag + (uint64_t)b) {
      fprintf(stderr, "%s: block %lld of the file is not the one written\n", w->name, (long long)b);
      exit(1);
    }
  }
  close(fd);
}

/* A new sparse file of the benchmark's size, as a checkpoint writer makes. */
static void new_file(const writer_t *w) {
  unlink(w->path);
  int fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate(fd, w->size) != 0) bench_fail(strerror(errno));
  close(fd);
}

static void flush(const char *path) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || fdatasync(fd) != 0) bench_fail(strerror(errno));
  close(fd);
}

static void write_by_rig(writer_t *w) {
  rig_buffer_t *file = NULL;
  BENCH_CHECK(rig_disk_open(w->path, RIG_DISK_READ_WRITE, 0, -1, &file));
  BENCH_CHECK(rig_buffer_copy(w->from, file));
  BENCH_CHECK(rig_disk_sync(file));
  rig_buffer_unref(file);
}

static void write_by_uring(writer_t *w) {
  plain_uring_open(w->uring, w->path, true);
  plain_uring_move(w->uring);
  if (fdatasync(w->uring->fd) != 0) bench_fail(strerror(errno));
  plain_uring_close(w->uring);
}

static void write_by_pwrite(writer_t *w) {
  int fd = open(w->path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) bench_fail(strerror(errno));
  for (int64_t at = 0; at < w->size; at += BLOCK)
    if (pwrite(fd, (uint8_t *)rig_buffer_host(w->from) + at, BLOCK, at) != BLOCK) bench_fail("pwrite failed");
  if (fdatasync(fd) != 0) bench_fail(strerror(errno));
  close(fd);
}

/* One timed write into a new file; returns seconds. */
static double time_write(writer_t *w, rig_buffer_t *host) {
  tag_blocks(w, host);
  new_file(w);
  double start = bench_now_ns();
  w->write(w);
  double seconds = (bench_now_ns() - start) * 1e-9;
  check_file(w);
  flush(w->path); /* nothing of it left for the next writer to flush */
  unlink(w->path);
  return seconds;
}

static int usage(const char *program) {
  fprintf(stderr, "usage: %s [--file PATH] [--size N[K|M|G]] [--runs N]\n", program);
  return 2;
}

int main(int argc, char **argv) {
  const char *path = "/var/tmp/rig-bench-write.bin";
  int64_t size = 1024 * MIB;
  int runs = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
      path = argv[++i];
    else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
      size = bench_parse_size(argv[++i]);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else
      return usage(argv[0]);
  }
  if (size <= 0 || size % BLOCK != 0 || runs < 1) return usage(argv[0]);

  /* SIM:0, here and in rigd, with room for the buffer. */
  char sim_budget[64];
  snprintf(sim_budget, sizeof sim_budget, "budget=%lld", (long long)(size + 1024 * MIB));
  if (setenv("RIG_SIM", sim_budget, 1) != 0) bench_fail("setenv failed");
  bench_pid = getpid();
  start_rigd("MEM:0,SIM:0", "");
  rig_device_t *mem = NULL, *sim = NULL, *rigd_mem = NULL, *rigd_sim = NULL;
  BENCH_CHECK(rig_open("MEM:0", NULL, &mem));
  BENCH_CHECK(rig_open("SIM:0", NULL, &sim));
  BENCH_CHECK(rig_open("MEM:0@rigd", NULL, &rigd_mem));
  BENCH_CHECK(rig_open("SIM:0@rigd", NULL, &rigd_sim));
  rig_buffer_t *host = NULL, *on_mem = NULL, *on_sim = NULL, *on_rigd_mem = NULL, *on_rigd_sim = NULL;
  BENCH_CHECK(rig_buffer_create(rig_host(), size, RIG_MEMORY_DEVICE, &host));
  BENCH_CHECK(rig_buffer_create(mem, size, RIG_MEMORY_DEVICE, &on_mem));
  BENCH_CHECK(rig_buffer_create(sim, size, RIG_MEMORY_DEVICE, &on_sim));
  BENCH_CHECK(rig_buffer_create(rigd_mem, size, RIG_MEMORY_DEVICE, &on_rigd_mem));
  BENCH_CHECK(rig_buffer_create(rigd_sim, size, RIG_MEMORY_DEVICE, &on_rigd_sim));
  rig_buffer_t *all[] = {host, on_mem, on_sim, on_rigd_mem, on_rigd_sim};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) BENCH_CHECK(rig_buffer_fill(all[i], 0x5A));
  if (!rig_buffer_host(on_mem)) bench_fail("the host does not address MEM:0's memory");

  /* The plain writers write the host buffer; their tags go into it. */
  plain_uring_t plain;
  plain_uring_init(&plain, rig_buffer_host(host), size);
  writer_t writers[] = {
      {.name = "uring", .write = write_by_uring, .from = host, .uring = &plain},
      {.name = "io_mem", .write = write_by_rig, .from = on_mem},
      {.name = "io_host", .write = write_by_rig, .from = host},
      {.name = "pwrite", .write = write_by_pwrite, .from = host},
      {.name = "io_sim", .write = write_by_rig, .from = on_sim},
      {.name = "io_rigd_mem", .write = write_by_rig, .from = on_rigd_mem},
      {.name = "io_rigd_sim", .write = write_by_rig, .from = on_rigd_sim},
  };
  enum { WRITERS = sizeof writers / sizeof writers[0] };
  for (int i = 0; i < WRITERS; i++) {
    writers[i].path = path;
    writers[i].size = size;
    writers[i].tag = (uint64_t)i << 40;
    writers[i].best_s = HUGE_VAL;
  }
  for (int run = 0; run < runs; run++)
    for (int i = 0; i < WRITERS; i++) {
      double s = time_write(&writers[i], host);
      if (s < writers[i].best_s) writers[i].best_s = s;
    }

  for (int i = 0; i < WRITERS; i++)
    printf("%s: %.2f GB/s\n", writers[i].name, (double)size / writers[i].best_s / 1e9);
  const writer_t *uring = &writers[0], *pwrite_loop = &writers[3];
  printf("ratio io_mem: %.3f\n", uring->best_s / writers[1].best_s);
  printf("ratio io_host: %.3f\n", uring->best_s / writers[2].best_s);
  printf("ratio io_mem_pwrite: %.3f\n", pwrite_loop->best_s / writers[1].best_s);
  printf("ratio io_sim: %.3f\n", uring->best_s / writers[4].best_s);
  printf("ratio io_rigd_mem_mem: %.3f\n", writers[1].best_s / writers[5].best_s);
  printf("ratio io_rigd_sim_sim: %.3f\n", writers[4].best_s / writers[6].best_s);
  plain_uring_exit(&plain);
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) rig_buffer_unref(all[i]);
  return 0;
}
