/* Reading a file through the io device DISK (rig/disk.h) beside two
 * readers written here, in the same run.  Into one page-aligned host
 * buffer, made and touched once:
 *   io_host   rig_disk_open + rig_buffer_copy into a host buffer;
 *   io_mem    the same into a MEM:0 buffer;
 *   uring     a plain liburing O_DIRECT reader: depth 32, 1 MiB blocks,
 *             read_fixed into the host buffer, registered as fixed buffers;
 *   pread     a loop of 1 MiB preads through the page cache.
 * Into memory each read makes first (the time counts the making, as a
 * load's does; rig's cache is freed after each, so each buffer is new):
 *   new_host  rig_buffer_create on the host + rig_buffer_copy, as rig load;
 *   new_mem   the same on MEM:0;
 *   new_rigd  the same on MEM:0@rigd, a proxy of a rigd the benchmark
 *             starts (its check reads the bytes back after the timing);
 *   new_pread a pread loop into a new malloc'd buffer;
 *   new_sim   rig_buffer_create on SIM:0 + rig_buffer_copy: memory the host
 *             does not address, as a GPU's, which the bytes reach through
 *             staging (its check reads them back after the timing);
 *   new_rigd_sim  the same on SIM:0@rigd.
 * And the same bytes as 64 files (shards of the file, made beside it) into
 * the MEM:0 buffer, each to its place:
 *   shards_serial  a rig_buffer_copy of each file, one after another;
 *   shards_batch   one rig_disk_read_ranges of all 64.
 * Cold runs first drop the files from the page cache (the whole cache
 * where root may write /proc/sys/vm/drop_caches, else posix_fadvise
 * DONTNEED); warm runs first read the file and the shards whole through
 * the page cache.  The readers take
 * turns, run after run, so that a drift of the shared machine hits each
 * alike.  Prints `NAME_cold: V GB/s` and `NAME_warm: V GB/s` for each
 * reader (the best of the runs), and ratios: `ratio io_host_cold: X`
 * (likewise io_host_warm, io_mem_cold, io_mem_warm, new_host_cold,
 * new_mem_cold, new_rigd_cold), X rig's bandwidth over the plain liburing
 * reader's; `ratio new_host_warm_pread: X` (new_mem, new_rigd too), over
 * the pread loop's into new memory; `ratio new_rigd_cold_mem: X` (and
 * _warm), a load through rigd's over the same load in-process, and
 * `ratio new_rigd_sim_cold_sim: X` (and _warm), the same for SIM:0;
 * `ratio shards_batch_cold: X` (and _warm), the batch's over the serial
 * copies'.  The plain reader reads O_DIRECT warm too: a warm
 * ratio above 1 is the page cache, which rig reads first where it holds
 * the bytes.
 *
 * Through rigd (512 MiB, best of 3 runs, a shared 2-core virtio machine):
 * new_rigd over new_mem was 0.39-0.56 cold and 0.58-0.66 warm while rigd
 * filled each new allocation before answering it, which faulted in every
 * page (3.4 s of a traced 512 MiB rig load waited on that answer, 1.29 s
 * loaded); 0.61 cold and 0.52 warm here at load 6 to 14.  With memory
 * fresh from the system left unfilled (rig_buffer_fresh), in three runs
 * at load 14 to 16: 0.89, 0.67 and 0.44 cold, 1.20, 0.51 and 0.58 warm;
 * at that load the in-process readers themselves moved between runs by
 * 2x (new_mem_cold 0.23, 0.13, 0.30 GB/s); 2 GiB, best of 3 at load 14
 * to 18: 0.62 cold (0.19 against 0.31 GB/s), 0.96 warm (0.37 against
 * 0.39).  What remains is rigd's copy out of the shared staging the client
 * reads into, the copy a served GPU makes too (an in-process MEM:0 load
 * reads straight into memory the host addresses).  That copy now faults
 * in a part's new pages with one call before it writes them
 * (rig_internal/new_pages.hpp), and the client's readers hand each 8 MiB
 * part over as soon as it is read (lib/file_staging.hpp).  In a loop of
 * the two loads alternating (1 GiB, warm, 12 pairs, the builds before
 * and after taking turns), the load through rigd over the in-process
 * one rose from a median of 0.66 to 0.81; cold, it stayed about 0.75
 * where the disk ran at its full rate, whose rate here moved between
 * 1.2 and 2.0 GB/s from one load to the next.
 *
 * On a virtual machine whose guest reports its free pages to the host
 * (virtio-balloon's free page reporting), the readers into new memory
 * measure the host as much as rig: memory freed in large blocks goes back
 * to the host, which backs it again page by page when it is next touched,
 * so a reader's figure depends on what the run freed just before it.
 * There, at 2 GiB, new_host_warm (the first new reader) ran at 0.29-0.63
 * GB/s and new_mem_warm (which reuses new_host's pages) at 1.07-2.88 in
 * the same runs, and huge pages came at 0.63 GB/s against 3.2-4.2 for
 * 4 KiB ones.  There, judge a change to new memory by several runs and by
 * its context switches and faults (perf stat), not by one run's ratio.
 *
 * Usage: bench_io_device [--file PATH] [--size N[K|M|G]] [--runs N] [--keep]
 * The file (default /var/tmp/rig-bench-io.bin, 2G, a multiple of 64 MiB)
 * and its shards (FILE.shard-NN) are made unless they exist with the
 * benchmark's bytes, and removed at the end unless --keep. */
#define _GNU_SOURCE

#include "bench.h"
#include "plain_uring.h"
#include "rigd_child.h"

#include <rig/disk.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KIB ((int64_t)1024)
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)

/* The plain readers' request size. */
#define BLOCK PLAIN_URING_BLOCK

/* ---- The file --------------------------------------------------------- */

/* Word w of block b: every block differs, so a misplaced block shows. */
static uint64_t file_word(int64_t block, int64_t w) {
  uint64_t x = (uint64_t)block * 0x9E3779B97F4A7C15ull + (uint64_t)w * 0xBF58476D1CE4E5B9ull + 1;
  x ^= x >> 31;
  return x * 0x94D049BB133111EBull;
}

static void fill_block(uint64_t *words, int64_t block) {
  for (int64_t w = 0; w < BLOCK / 8; w++) words[w] = file_word(block, w);
}

/* True iff the file at path has size bytes and its first and last blocks
 * are blocks first, first + 1, ... of the benchmark's. */
static bool file_is_ready(const char *path, int64_t first, int64_t size) {
  struct stat st;
  if (stat(path, &st) != 0 || st.st_size != size) return false;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  uint64_t *got = malloc(BLOCK), *want = malloc(BLOCK);
  if (!got || !want) bench_fail("malloc failed");
  bool ready = true;
  const int64_t samples[] = {0, size / BLOCK - 1};
  for (int i = 0; ready && i < 2; i++) {
    fill_block(want, first + samples[i]);
    ready = pread(fd, got, BLOCK, samples[i] * BLOCK) == BLOCK && memcmp(got, want, BLOCK) == 0;
  }
  free(got);
  free(want);
  close(fd);
  return ready;
}

/* The file at path: size bytes, blocks first, first + 1, ... */
static void make_file(const char *path, int64_t first, int64_t size) {
  if (file_is_ready(path, first, size)) return;
  printf("creating %s (%lld bytes)\n", path, (long long)size);
  fflush(stdout);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) bench_fail(strerror(errno));
  uint64_t *words = malloc(BLOCK);
  if (!words) bench_fail("malloc failed");
  for (int64_t block = 0; block < size / BLOCK; block++) {
    fill_block(words, first + block);
    if (pwrite(fd, words, BLOCK, block * BLOCK) != BLOCK) bench_fail("writing the file failed");
  }
  /* Clean pages, so DONTNEED can drop them. */
  if (fsync(fd) != 0) bench_fail("fsync failed");
  free(words);
  close(fd);
}

/* The shards: SHARDS files whose blocks, one after another, are the
 * benchmark file's. */
enum { SHARDS = 64 };

static void shard_path(char *out, size_t n, const char *path, int shard) {
  snprintf(out, n, "%s.shard-%02d", path, shard);
}

/* Reads the file at path whole through the page cache. */
static void read_into_page_cache(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) bench_fail(strerror(errno));
  char *block = malloc(BLOCK);
  if (!block) bench_fail("malloc failed");
  while (read(fd, block, BLOCK) > 0) {
  }
  free(block);
  close(fd);
}

static void forget_file(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) bench_fail("posix_fadvise failed");
  close(fd);
}

/* The file and its shards out of the page cache: the whole cache where root
 * allows it, so that nothing of them stays; their pages otherwise. */
static void drop_from_page_cache(const char *path) {
  forget_file(path);
  for (int k = 0; k < SHARDS; k++) {
    char shard[4096];
    shard_path(shard, sizeof shard, path, k);
    forget_file(shard);
  }
  int caches = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (caches < 0) return;
  if (write(caches, "1", 1) != 1) { /* DONTNEED has dropped the files' pages */ }
  close(caches);
}

/* ---- Checking what a reader wrote ------------------------------------- */

/* The first and last word of each block: poisoned before a run, checked
 * after it, so a reader that moved nothing cannot pass for a fast one.
 * MEM:0's memory is written and read in place: no work on it is in flight
 * between the synchronous copies. */
static void poison_samples(uint8_t *dst, int64_t size) {
  for (int64_t at = 0; at < size; at += BLOCK) {
    memset(dst + at, 0, 8);
    memset(dst + at + BLOCK - 8, 0, 8);
  }
}

static void check_samples(const uint8_t *dst, int64_t size, const char *reader) {
  for (int64_t block = 0; block < size / BLOCK; block++) {
    uint64_t first, last;
    memcpy(&first, dst + block * BLOCK, 8);
    memcpy(&last, dst + (block + 1) * BLOCK - 8, 8);
    if (first != file_word(block, 0) || last != file_word(block, BLOCK / 8 - 1)) {
      fprintf(stderr, "%s: block %lld does not hold the file's bytes\n", reader, (long long)block);
      exit(1);
    }
  }
}

/* ---- The readers ------------------------------------------------------ */

typedef struct reader reader_t;
struct reader {
  const char *name;
  void (*read)(reader_t *r); /* reads the whole file into dst */
  uint8_t *dst;              /* where read leaves the bytes, for the check */
  double best_cold_s, best_warm_s;
  /* rig */
  rig_buffer_t *file, *into;
  rig_device_t *fresh_on; /* the device of a new buffer per read */
  /* plain */
  const char *path;
  int64_t size;
  plain_uring_t uring;
  bool fresh; /* reads into memory it makes first */
  /* where the check finds the bytes of memory the host does not address:
   * a host buffer they are copied into after the timing */
  rig_buffer_t *readback;
  /* the shards, each to its place in into */
  const rig_disk_range_t *ranges;
};

static void read_by_pread(reader_t *r) {
  int fd = open(r->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) bench_fail(strerror(errno));
  for (int64_t at = 0; at < r->size; at += BLOCK)
    if (pread(fd, r->dst + at, BLOCK, at) != BLOCK) bench_fail("pread failed");
  close(fd);
}

static void read_by_rig(reader_t *r) { BENCH_CHECK(rig_buffer_copy(r->file, r->into)); }

static void read_shards_one_by_one(reader_t *r) {
  for (int k = 0; k < SHARDS; k++) BENCH_CHECK(rig_buffer_copy(r->ranges[k].file, r->ranges[k].dst));
}

static void read_shards_in_a_batch(reader_t *r) { BENCH_CHECK(rig_disk_read_ranges(r->ranges, SHARDS)); }

static void read_into_new_buffer(reader_t *r) {
  BENCH_CHECK(rig_buffer_create(r->fresh_on, r->size, RIG_MEMORY_DEVICE, &r->into));
  read_by_rig(r);
  r->dst = rig_buffer_host(r->into);
}

static void read_by_pread_into_new(reader_t *r) {
  r->dst = malloc((size_t)r->size);
  if (!r->dst) bench_fail("malloc failed");
  read_by_pread(r);
}

/* What a reader into new memory made, released after its check: back to
 * the system, not into rig's cache, so that the next read's is new too. */
static void release_new(reader_t *r) {
  if (r->fresh_on) {
    rig_buffer_unref(r->into);
    r->into = NULL;
    BENCH_CHECK(rig_free_cache(r->fresh_on));
    /* rigd keeps what a client frees for its next allocation until the
     * client has been idle for a second (service/poller.cpp), when it
     * goes back to the drivers: past that, a load through rigd makes new
     * memory too, as the in-process loads do. */
    if (strstr(rig_device_name(r->fresh_on), "@rigd")) usleep(1500 * 1000);
  } else {
    free(r->dst);
  }
  r->dst = NULL;
}

static void read_by_uring(reader_t *r) { plain_uring_move(&r->uring); }

/* One timed read; returns seconds.  New memory needs no poison: it
 * starts as zeros, which are none of the file's words. */
static double time_read(reader_t *r) {
  if (!r->fresh) poison_samples(r->dst, r->size);
  double start = bench_now_ns();
  r->read(r);
  double seconds = (bench_now_ns() - start) * 1e-9;
  if (r->readback) {
    r->dst = rig_buffer_host(r->readback);
    poison_samples(r->dst, r->size);
    BENCH_CHECK(rig_buffer_copy(r->into, r->readback));
  }
  check_samples(r->dst, r->size, r->name);
  if (r->fresh) release_new(r);
  return seconds;
}

static double gb_per_s(int64_t size, double seconds) { return (double)size / seconds / 1e9; }

/* ---- main ------------------------------------------------------------- */


static int usage(const char *program) {
  fprintf(stderr, "usage: %s [--file PATH] [--size N[K|M|G]] [--runs N] [--keep]\n"
                  "  --size: at least 1G unless smaller is asked, a multiple of 64M\n", program);
  return 2;
}

int main(int argc, char **argv) {
  const char *path = "/var/tmp/rig-bench-io.bin";
  int64_t size = 2 * GIB;
  int runs = 3;
  bool keep = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
      path = argv[++i];
    else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
      size = bench_parse_size(argv[++i]);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--keep") == 0)
      keep = true;
    else
      return usage(argv[0]);
  }
  if (size <= 0 || size % (SHARDS * BLOCK) != 0 || runs < 1) return usage(argv[0]);
  if (size < GIB) printf("note: a file under 1 GiB measures the start of each read more than its pace\n");
  make_file(path, 0, size);
  const int64_t shard_bytes = size / SHARDS;
  char shard_paths[SHARDS][4096];
  rig_disk_range_t ranges[SHARDS];
  for (int k = 0; k < SHARDS; k++) {
    shard_path(shard_paths[k], sizeof shard_paths[k], path, k);
    make_file(shard_paths[k], k * (shard_bytes / BLOCK), shard_bytes);
  }

  /* One page-aligned host buffer, pre-faulted, for every reader but io_mem. */
  rig_buffer_t *host = NULL, *on_mem = NULL, *file = NULL;
  rig_device_t *mem = NULL, *rigd_mem = NULL, *sim = NULL, *rigd_sim = NULL;
  bench_pid = getpid();
  /* SIM:0, here and in rigd, with room for the file. */
  char sim_budget[64];
  snprintf(sim_budget, sizeof sim_budget, "budget=%lld", (long long)(size + GIB));
  if (setenv("RIG_SIM", sim_budget, 1) != 0) bench_fail("setenv failed");
  start_rigd("MEM:0,SIM:0", "");
  BENCH_CHECK(rig_open("MEM:0@rigd", NULL, &rigd_mem));
  BENCH_CHECK(rig_open("SIM:0@rigd", NULL, &rigd_sim));
  BENCH_CHECK(rig_open("SIM:0", NULL, &sim));
  BENCH_CHECK(rig_buffer_create(rig_host(), size, RIG_MEMORY_DEVICE, &host));
  uint8_t *dst = rig_buffer_host(host);
  if ((uintptr_t)dst % 4096 != 0) bench_fail("the host buffer does not start on a page");
  memset(dst, 0, (size_t)size);
  BENCH_CHECK(rig_open("MEM:0", NULL, &mem));
  BENCH_CHECK(rig_buffer_create(mem, size, RIG_MEMORY_DEVICE, &on_mem));
  BENCH_CHECK(rig_buffer_fill(on_mem, 0));
  BENCH_CHECK(rig_disk_open(path, RIG_DISK_READ, 0, -1, &file));
  for (int k = 0; k < SHARDS; k++) {
    ranges[k] = (rig_disk_range_t){.file = NULL, .dst = NULL, .bytes = shard_bytes};
    BENCH_CHECK(rig_disk_open(shard_paths[k], RIG_DISK_READ, 0, -1, &ranges[k].file));
    BENCH_CHECK(rig_buffer_view(on_mem, k * shard_bytes, shard_bytes, &ranges[k].dst));
  }

  reader_t readers[] = {
      {.name = "uring", .read = read_by_uring, .dst = dst},
      {.name = "io_host", .read = read_by_rig, .dst = dst, .file = file, .into = host},
      {.name = "io_mem", .read = read_by_rig, .dst = rig_buffer_host(on_mem), .file = file, .into = on_mem},
      {.name = "pread", .read = read_by_pread, .dst = dst},
      {.name = "new_host", .read = read_into_new_buffer, .file = file, .fresh_on = rig_host(), .fresh = true},
      {.name = "new_mem", .read = read_into_new_buffer, .file = file, .fresh_on = mem, .fresh = true},
      {.name = "new_rigd", .read = read_into_new_buffer, .file = file, .fresh_on = rigd_mem, .fresh = true,
       .readback = host},
      {.name = "new_pread", .read = read_by_pread_into_new, .fresh = true},
      {.name = "shards_serial", .read = read_shards_one_by_one, .dst = rig_buffer_host(on_mem), .ranges = ranges},
      {.name = "shards_batch", .read = read_shards_in_a_batch, .dst = rig_buffer_host(on_mem), .ranges = ranges},
      {.name = "new_sim", .read = read_into_new_buffer, .file = file, .fresh_on = sim, .fresh = true, .readback = host},
      {.name = "new_rigd_sim", .read = read_into_new_buffer, .file = file, .fresh_on = rigd_sim, .fresh = true,
       .readback = host},
  };
  enum { READERS = sizeof readers / sizeof readers[0] };
  for (int i = 0; i < READERS; i++) {
    readers[i].path = path;
    readers[i].size = size;
    readers[i].best_cold_s = readers[i].best_warm_s = HUGE_VAL;
  }
  if (!readers[2].dst) bench_fail("the host does not address MEM:0's memory");
  plain_uring_init(&readers[0].uring, dst, size);
  plain_uring_open(&readers[0].uring, path, false);

  /* Interleaved, so a drift of the shared machine hits every reader alike. */
  for (int run = 0; run < runs; run++) {
    for (int i = 0; i < READERS; i++) {
      drop_from_page_cache(path);
      double s = time_read(&readers[i]);
      if (s < readers[i].best_cold_s) readers[i].best_cold_s = s;
    }
    read_into_page_cache(path);
    for (int k = 0; k < SHARDS; k++) read_into_page_cache(shard_paths[k]);
    for (int i = 0; i < READERS; i++) {
      double s = time_read(&readers[i]);
      if (s < readers[i].best_warm_s) readers[i].best_warm_s = s;
    }
  }

  for (int i = 0; i < READERS; i++) {
    printf("%s_cold: %.2f GB/s\n", readers[i].name, gb_per_s(size, readers[i].best_cold_s));
    printf("%s_warm: %.2f GB/s\n", readers[i].name, gb_per_s(size, readers[i].best_warm_s));
  }
  const reader_t *base = &readers[0], *new_mem = &readers[5], *new_rigd = &readers[6], *new_pread = &readers[7];
  for (int i = 1; i <= 2; i++) {
    printf("ratio %s_cold: %.3f\n", readers[i].name, base->best_cold_s / readers[i].best_cold_s);
    printf("ratio %s_warm: %.3f\n", readers[i].name, base->best_warm_s / readers[i].best_warm_s);
  }
  for (int i = 4; i <= 6; i++) {
    printf("ratio %s_cold: %.3f\n", readers[i].name, base->best_cold_s / readers[i].best_cold_s);
    printf("ratio %s_warm_pread: %.3f\n", readers[i].name, new_pread->best_warm_s / readers[i].best_warm_s);
  }
  printf("ratio new_rigd_cold_mem: %.3f\n", new_mem->best_cold_s / new_rigd->best_cold_s);
  printf("ratio new_rigd_warm_mem: %.3f\n", new_mem->best_warm_s / new_rigd->best_warm_s);
  const reader_t *new_sim = &readers[10], *new_rigd_sim = &readers[11];
  printf("ratio new_rigd_sim_cold_sim: %.3f\n", new_sim->best_cold_s / new_rigd_sim->best_cold_s);
  printf("ratio new_rigd_sim_warm_sim: %.3f\n", new_sim->best_warm_s / new_rigd_sim->best_warm_s);
  const reader_t *serial = &readers[8], *batch = &readers[9];
  printf("ratio shards_batch_cold: %.3f\n", serial->best_cold_s / batch->best_cold_s);
  printf("ratio shards_batch_warm: %.3f\n", serial->best_warm_s / batch->best_warm_s);

  plain_uring_close(&readers[0].uring);
  plain_uring_exit(&readers[0].uring);
  for (int k = 0; k < SHARDS; k++) {
    rig_buffer_unref(ranges[k].dst);
    rig_buffer_unref(ranges[k].file);
    if (!keep && unlink(shard_paths[k]) != 0) fprintf(stderr, "removing %s: %s\n", shard_paths[k], strerror(errno));
  }
  rig_buffer_unref(file);
  rig_buffer_unref(on_mem);
  rig_buffer_unref(host);
  if (!keep && unlink(path) != 0) fprintf(stderr, "removing %s: %s\n", path, strerror(errno));
  return 0;
}
