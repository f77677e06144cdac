/* io devices: the disk library (rig/disk.h), files as the memory of the io
 * device DISK, through the C API (rig.h, edge.h).
 *
 * rig.txt's io devices (Devices, Properties, Machines' reaches,
 * Reclamation) and rig-buffer.txt's create on an io device, of_io, io,
 * borrows of an io device's pages and Copying's io paragraphs.  Files lie in
 * /var/tmp (RIG_TEST_IO_DIR overrides it), a disk file system rather than
 * tmpfs, so that O_DIRECT can carry the aligned ranges.  Other devices:
 * MEM:41 (a memory device: the host addresses its memory) and SIM:41 (a sim
 * device, whose Device memory the host does not address: copies go through
 * staging memory).
 *
 * Asserts:
 *   INTRO-01 DEV-01 DEV-05 DEV-43 DEV-50 PROP-16 PROP-18 PROP-20 PROP-24
 *   PROP-29 MACH-14 MACH-17 STOP-27 ERR-21 RECL-14 RECL-16 RECL-27 RECL-35
 *   RECL-45 BUF-12 BUF-13 BUF-14 BUF-27 BUF-37 BUF-38 BUF-39 BUF-40 BUF-41
 *   BUF-42 BUF-43 BUF-65 BPROP-02 BPROP-09 BPROP-12 HACC-18 COPY-04
 *   COPY-02 COPY-07 COPY-08 COPY-09 COPY-38 COPY-45 COPY-57 COPY-64 COPY-65
 *   COPY-75 COPY-93 COPY-100 LOW-10 LOW-11 LOW-12 LOW-18 LOW-36
 *
 * Not reached here, and why:
 *   INTRO-04 DEV-32: open_io with a library of the test's own is the edge
 *     interface's; here DISK is opened through rig_disk_device only.
 *   STOP-28: needs an io device whose stop is under way at a fork; an io
 *     device's stop runs at once (DEV-50).
 *   ERR-39: fail loses every device of the process, which the other tests
 *     of this file would see in the same process under --no-fork.
 *   BUF-30 BUF-62: the disk library refuses no allocation with -EINVAL and
 *     its pages never fail transiently; a library of the test's own would
 *     be needed.
 *   RECL-17: submissions keep no values on an io device (it runs no work).
 *   LOW-30: rig.h has no rig_buffer_dma.
 * Whether a transfer took O_DIRECT or the page cache is the engine's (its
 * statistics are not part of rig.h): the aligned and unaligned tests assert
 * the bytes of both kinds of range.
 */
#define _GNU_SOURCE

#include <criterion/criterion.h>
#include <rig/disk.h>
#include <rig/edge.h>
#include <rig/rig.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "helpers.h"

#define KIB ((int64_t)1024)
#define MIB (1024 * KIB)
#define PAGE ((int64_t)4096)

static const char *const memory_device_name = "MEM:41";
static const char *const sim_device_name = "SIM:41";

/* ---- Checking statuses ------------------------------------------------ */

/* call answers RIG_EIO, with a message and errno_value as rig_error_code(). */
#define FAILS_EIO(errno_value, call)                                                   \
  do {                                                                                 \
    CHECK_FAILS(RIG_EIO, call);                                                        \
    cr_assert(rig_error_code() == (errno_value), "%s: errno %d (%s), want %d (%s)",    \
              #call, rig_error_code(), strerror(rig_error_code()), (errno_value),      \
              strerror(errno_value));                                                  \
  } while (0)

/* FAILS_EIO, with a message that holds each of the texts. */
#define FAILS_EIO_SAYING(errno_value, call, ...)                                       \
  do {                                                                                 \
    FAILS_EIO(errno_value, call);                                                      \
    const char *texts_[] = {__VA_ARGS__};                                              \
    for (size_t t_ = 0; t_ < sizeof texts_ / sizeof texts_[0]; t_++)                   \
      cr_assert(strstr(check_error_copy(), texts_[t_]) != NULL, "%s: \"%s\" does not say \"%s\"", \
                #call, check_error_copy(), texts_[t_]);                                \
  } while (0)

/* ---- Byte patterns ---------------------------------------------------- */

/* Byte i of pattern seed: differs between neighbours and between bytes 256
 * and 65,536 apart, so a shifted or truncated copy shows. */
static uint8_t pattern_byte(int64_t i, uint8_t seed) {
  return (uint8_t)(i * 7 + (i >> 8) * 13 + (i >> 16) * 29 + seed * 101 + 1);
}

/* p[k] = byte first + k of pattern seed. */
static void fill_pattern(uint8_t *p, int64_t n, int64_t first, uint8_t seed) {
  for (int64_t k = 0; k < n; k++) p[k] = pattern_byte(first + k, seed);
}

/* The first k where p[k] is not byte first + k of pattern seed, or -1. */
static int64_t pattern_mismatch(const uint8_t *p, int64_t n, int64_t first, uint8_t seed) {
  for (int64_t k = 0; k < n; k++)
    if (p[k] != pattern_byte(first + k, seed)) return k;
  return -1;
}

#define EXPECT_PATTERN(p, n, first, seed, what)                                        \
  do {                                                                                 \
    int64_t mismatch_ = pattern_mismatch((p), (n), (first), (seed));                   \
    cr_assert(mismatch_ < 0, "%s: byte %lld is %u, want %u", (what), (long long)mismatch_, \
              (unsigned)(p)[mismatch_], (unsigned)pattern_byte((first) + mismatch_, (seed))); \
  } while (0)

#define EXPECT_BYTE(p, n, c, what)                                                     \
  do {                                                                                 \
    for (int64_t k_ = 0; k_ < (n); k_++)                                               \
      cr_assert((p)[k_] == (c), "%s: byte %lld is %u, want %u", (what), (long long)k_, \
                (unsigned)(p)[k_], (unsigned)(c));                                     \
  } while (0)

/* ---- Files ------------------------------------------------------------ */

/* A disk file system, not tmpfs: O_DIRECT needs one. */
static const char *io_directory(void) {
  const char *dir = getenv("RIG_TEST_IO_DIR");
  return dir && *dir ? dir : "/var/tmp";
}

enum { MAX_FILES = 24 };
static char made_files[MAX_FILES][PATH_MAX];
static int made_file_count;

/* Every test's fini: each test runs in a process of its own. */
static void remove_made_files(void) {
  for (int i = 0; i < made_file_count; i++) unlink(made_files[i]);
  made_file_count = 0;
}

TestSuite(io, .fini = remove_made_files);

/* Writes size bytes of pattern seed over the file at path, from byte 0. */
static void write_pattern_file(const char *path, int64_t size, uint8_t seed) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
  cr_assert(ftruncate(fd, size) == 0, "ftruncate: %s", strerror(errno));
  uint8_t *block = allocate_bytes(MIB);
  for (int64_t at = 0; at < size; at += MIB) {
    int64_t n = size - at < MIB ? size - at : MIB;
    fill_pattern(block, n, at, seed);
    cr_assert(pwrite(fd, block, (size_t)n, at) == n, "pwrite: %s", strerror(errno));
  }
  free(block);
  close(fd);
}

/* A new file of size bytes of pattern seed, removed when the test ends. */
static const char *make_file(int64_t size, uint8_t seed) {
  cr_assert(made_file_count < MAX_FILES, "too many files");
  char *path = made_files[made_file_count];
  snprintf(path, PATH_MAX, "%s/rig-io-test-XXXXXX", io_directory());
  int fd = mkostemp(path, O_CLOEXEC);
  cr_assert(fd >= 0, "mkostemp in %s: %s", io_directory(), strerror(errno));
  close(fd);
  made_file_count++;
  write_pattern_file(path, size, seed);
  return path;
}

/* The n bytes of the file at path from offset, read with pread (not through
 * rig).  The caller frees them. */
static uint8_t *file_bytes(const char *path, int64_t offset, int64_t n) {
  uint8_t *out = allocate_bytes(n);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
  for (int64_t done = 0; done < n;) {
    ssize_t r = pread(fd, out + done, (size_t)(n - done), offset + done);
    cr_assert(r > 0, "pread of %s at %lld: %s", path, (long long)(offset + done),
              r == 0 ? "end of file" : strerror(errno));
    done += r;
  }
  close(fd);
  return out;
}

/* How many descriptors of this process are open on the file (dev, ino). */
static int descriptors_on(dev_t dev, ino_t ino) {
  DIR *dir = opendir("/proc/self/fd");
  cr_assert(dir != NULL, "/proc/self/fd: %s", strerror(errno));
  int count = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    struct stat st;
    if (e->d_name[0] != '.' && fstat(atoi(e->d_name), &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_dev == dev && st.st_ino == ino)
      count++;
  }
  closedir(dir);
  return count;
}

static int descriptors_on_path(const char *path) {
  struct stat st;
  cr_assert(stat(path, &st) == 0, "%s: %s", path, strerror(errno));
  return descriptors_on(st.st_dev, st.st_ino);
}

/* The regular files without a name (anonymous or unlinked) that this
 * process holds open: at most max, by inode. */
enum { MAX_ANONYMOUS = 64 };
typedef struct anonymous_files {
  int count;
  dev_t dev[MAX_ANONYMOUS];
  ino_t ino[MAX_ANONYMOUS];
} anonymous_files_t;

static bool anonymous_holds(const anonymous_files_t *a, dev_t dev, ino_t ino) {
  for (int i = 0; i < a->count; i++)
    if (a->dev[i] == dev && a->ino[i] == ino) return true;
  return false;
}

static anonymous_files_t anonymous_files(void) {
  anonymous_files_t a = {0};
  DIR *dir = opendir("/proc/self/fd");
  cr_assert(dir != NULL, "/proc/self/fd: %s", strerror(errno));
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    struct stat st;
    if (e->d_name[0] == '.' || fstat(atoi(e->d_name), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_nlink != 0 || anonymous_holds(&a, st.st_dev, st.st_ino))
      continue;
    cr_assert(a.count < MAX_ANONYMOUS, "too many anonymous files");
    a.dev[a.count] = st.st_dev;
    a.ino[a.count] = st.st_ino;
    a.count++;
  }
  closedir(dir);
  return a;
}

/* ---- Devices and buffers ---------------------------------------------- */

static rig_device_t *disk_device(void) {
  rig_device_t *d = NULL;
  CHECK_OK(rig_disk_device(&d));
  cr_assert(d != NULL);
  return d;
}

static rig_buffer_t *open_file(const char *path, rig_disk_mode_t mode, int64_t offset, int64_t length) {
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_disk_open(path, mode, offset, length, &b));
  cr_assert(b != NULL);
  return b;
}

/* b's bytes, read back through rig (a staged copy where the host does not
 * address them).  The caller frees them. */
static uint8_t *buffer_bytes(rig_buffer_t *b) {
  int64_t n = rig_buffer_bytes(b);
  uint8_t *out = allocate_bytes(n);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, out, n, 0, n));
  return out;
}

/* Sets b's bytes to pattern seed. */
static void put_pattern(rig_buffer_t *b, uint8_t seed) {
  int64_t n = rig_buffer_bytes(b);
  uint8_t *p = allocate_bytes(n);
  fill_pattern(p, n, 0, seed);
  CHECK_OK(rig_buffer_blit_from_bytes(p, n, 0, b, 0, n));
  free(p);
}

/* Copies the boxes from src into dst where the host or the io device copies
 * (the host addresses the side that is not io memory): the call returns
 * once the copy is done, with a host point already reached (COPY-57). */
static void copy_by_io(rig_buffer_t *src, rig_buffer_t *dst, const rig_box_t *boxes, size_t nboxes) {
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_copy(src, dst, boxes, nboxes, NULL, 0, &p));
  cr_assert(rig_point_device(p) == rig_host(), "the point is %s's, want the host's",
            rig_point_device(p) ? rig_device_name(rig_point_device(p)) : "no device");
  bool reached = false;
  CHECK_OK(rig_point_reached(p, &reached));
  cr_assert(reached, "the io copy returned before its point was reached");
}

/* ---- Copies between files and device memory --------------------------- */

/* A box of rows, with pitches unequal on the two sides. */
static const rig_box_t rows_box = {.src_offset = 100, .dst_offset = 50, .width = 1000, .rows = 7,
                                   .src_pitch = 3000, .dst_pitch = 1200};

/* Byte k of a destination of the rows box: the source's byte it copies
 * from, or -1 where the box writes nothing. */
static int64_t rows_box_source(const rig_box_t *b, int64_t k) {
  if (k < b->dst_offset) return -1;
  int64_t row = (k - b->dst_offset) / b->dst_pitch, x = (k - b->dst_offset) % b->dst_pitch;
  if (row >= b->rows || x >= b->width) return -1;
  return b->src_offset + row * b->src_pitch + x;
}

/* dst (of n bytes) holds, after the box, src_seed's pattern where the box
 * wrote and outside[k] elsewhere. */
static void expect_rows_box(const uint8_t *dst, int64_t n, const rig_box_t *b, uint8_t src_seed,
                            const uint8_t *outside) {
  for (int64_t k = 0; k < n; k++) {
    int64_t from = rows_box_source(b, k);
    uint8_t want = from >= 0 ? pattern_byte(from, src_seed) : outside[k];
    cr_assert(dst[k] == want, "byte %lld is %u, want %u (%s)", (long long)k, (unsigned)dst[k],
              (unsigned)want, from >= 0 ? "in the box" : "outside the box");
  }
}

/* The rows box from a file into a buffer on d, whose other bytes stay. */
static void box_from_file_into(rig_device_t *d) {
  const char *path = make_file(64 * KIB, 4);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ, 0, -1);
  rig_buffer_t *dst = create(d, 16 * KIB);
  CHECK_OK(rig_buffer_fill(dst, 0xEE));
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_copy(file, dst, &rows_box, 1, NULL, 0, &p));
  CHECK_OK(rig_point_wait(p));
  uint8_t *got = buffer_bytes(dst);
  uint8_t outside[16 * KIB];
  memset(outside, 0xEE, sizeof outside);
  expect_rows_box(got, 16 * KIB, &rows_box, 4, outside);
  free(got);
  rig_buffer_unref(dst);
  rig_buffer_unref(file);
}

/* The rows box from a buffer on d into a file, whose other bytes stay. */
static void box_into_file_from(rig_device_t *d) {
  const char *path = make_file(64 * KIB, 4);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  rig_buffer_t *src = create(d, 32 * KIB);
  put_pattern(src, 5);
  rig_box_t box = {.src_offset = 10, .dst_offset = 500, .width = 777, .rows = 5,
                   .src_pitch = 800, .dst_pitch = 4096};
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_copy(src, file, &box, 1, NULL, 0, &p));
  CHECK_OK(rig_point_wait(p));
  uint8_t *got = file_bytes(path, 0, 64 * KIB);
  uint8_t *before = allocate_bytes(64 * KIB);
  fill_pattern(before, 64 * KIB, 0, 4);
  expect_rows_box(got, 64 * KIB, &box, 5, before);
  free(before);
  free(got);
  rig_buffer_unref(src);
  rig_buffer_unref(file);
}

Test(io, box_of_rows_from_a_file_into_a_memory_device) { /* COPY-45 COPY-04 COPY-57 */
  rig_device_t *mem = open_named(memory_device_name);
  box_from_file_into(mem);
  /* The io device copies straight into memory the host addresses. */
  const char *path = make_file(64 * KIB, 4);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ, 0, -1);
  rig_buffer_t *dst = create(mem, 16 * KIB);
  copy_by_io(file, dst, &rows_box, 1);
  rig_buffer_unref(dst);
  rig_buffer_unref(file);
}

Test(io, box_of_rows_from_a_memory_device_into_a_file) { /* COPY-45 COPY-04 */
  box_into_file_from(open_named(memory_device_name));
}

Test(io, box_of_rows_between_a_file_and_a_sim_device_through_staging) { /* COPY-45 */
  rig_device_t *sim = open_named(sim_device_name);
  box_from_file_into(sim);
  box_into_file_from(sim);
}

Test(io, file_into_sim_memory_and_back_through_staging) { /* COPY-04 */
  rig_device_t *sim = open_named(sim_device_name);
  const int64_t n = 3 * MIB + 123;
  const char *source = make_file(n, 6);
  rig_buffer_t *file = open_file(source, RIG_DISK_READ, 0, -1);
  rig_buffer_t *device = create(sim, n);
  cr_assert(rig_buffer_host(device) == NULL, "the host addresses %s's Device memory: no staging",
            sim_device_name);
  CHECK_OK(rig_buffer_copy(file, device));
  /* Back to the host through a host buffer. */
  rig_buffer_t *host = create(rig_host(), n);
  CHECK_OK(rig_buffer_copy(device, host));
  EXPECT_PATTERN((const uint8_t *)rig_buffer_host(host), n, 0, 6, "file -> SIM -> host");

  /* And from sim memory into a file. */
  const char *target = make_file(n, 7);
  rig_buffer_t *out = open_file(target, RIG_DISK_READ_WRITE, 0, -1);
  CHECK_OK(rig_buffer_copy(device, out));
  uint8_t *written = file_bytes(target, 0, n);
  EXPECT_PATTERN(written, n, 0, 6, "SIM -> file");
  free(written);
  rig_buffer_unref(out);
  rig_buffer_unref(host);
  rig_buffer_unref(device);
  rig_buffer_unref(file);
}

Test(io, host_memory_into_a_file_and_back) { /* COPY-04 COPY-57 */
  const int64_t n = MIB + 17;
  const char *path = make_file(n, 1);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  rig_buffer_t *src = create(rig_host(), n);
  fill_pattern(rig_buffer_host(src), n, 0, 2);
  rig_box_t all = rig_row(0, 0, n);
  copy_by_io(src, file, &all, 1);
  uint8_t *written = file_bytes(path, 0, n);
  EXPECT_PATTERN(written, n, 0, 2, "host -> file");
  free(written);

  rig_buffer_t *back = create(rig_host(), n);
  copy_by_io(file, back, &all, 1);
  EXPECT_PATTERN((const uint8_t *)rig_buffer_host(back), n, 0, 2, "file -> host");
  rig_buffer_unref(back);
  rig_buffer_unref(src);
  rig_buffer_unref(file);
}

/* Reads the file range [offset, offset + n) into host bytes at host_offset
 * of a page-aligned host buffer, and writes it back from pattern seed 9 at
 * the same place: the bytes around both ranges stay. */
static void round_trip_range(const char *path, int64_t file_size, int64_t offset, int64_t n,
                             int64_t host_offset) {
  const int64_t host_bytes = 256 * KIB;
  rig_buffer_t *host = create(rig_host(), host_bytes);
  uint8_t *h = rig_buffer_host(host);
  cr_assert((uintptr_t)h % PAGE == 0, "a host buffer of 256 KiB does not start on a page");
  memset(h, 0xEE, (size_t)host_bytes);

  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, offset, n);
  rig_buffer_t *part = view(host, host_offset, n);
  CHECK_OK(rig_buffer_copy(file, part));
  EXPECT_PATTERN(h + host_offset, n, offset, 8, "file -> host");
  EXPECT_BYTE(h, host_offset, 0xEE, "host bytes before the range");
  EXPECT_BYTE(h + host_offset + n, host_bytes - host_offset - n, 0xEE, "host bytes after the range");

  fill_pattern(h + host_offset, n, 0, 9);
  CHECK_OK(rig_buffer_copy(part, file));
  uint8_t *now = file_bytes(path, 0, file_size);
  EXPECT_PATTERN(now, offset, 0, 8, "file bytes before the range");
  EXPECT_PATTERN(now + offset, n, 0, 9, "host -> file");
  EXPECT_PATTERN(now + offset + n, file_size - offset - n, offset + n, 8, "file bytes after the range");
  free(now);
  write_pattern_file(path, file_size, 8);
  rig_buffer_unref(part);
  rig_buffer_unref(file);
  rig_buffer_unref(host);
}

Test(io, aligned_ranges_of_a_file_on_disk) { /* COPY-04 */
  const int64_t size = MIB;
  const char *path = make_file(size, 8);
  /* 4096-multiple offsets and lengths into page-aligned memory: what
   * O_DIRECT carries. */
  round_trip_range(path, size, 64 * KIB, 128 * KIB, 0);
  round_trip_range(path, size, 3 * PAGE, 5 * PAGE, 2 * PAGE);
  round_trip_range(path, size, size - 64 * KIB, 64 * KIB, 64 * KIB);
}

Test(io, unaligned_ranges_of_a_file_on_disk) { /* COPY-04 */
  const int64_t size = MIB;
  const char *path = make_file(size, 8);
  /* Offsets, lengths or addresses off the file system's alignment: the
   * page cache carries them, alone or beside aligned parts. */
  round_trip_range(path, size, 1001, 70001, 3);
  round_trip_range(path, size, PAGE, 5 * PAGE, 1);
  round_trip_range(path, size, 3, 100 * KIB, PAGE);
  round_trip_range(path, size, size - 7, 7, 0);
}

Test(io, fill_of_a_file_is_written_through_the_io_device) { /* COPY-38 COPY-93 */
  const int64_t size = 5 * MIB / 2;
  const char *path = make_file(size, 3);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  const int64_t first = 1000, n = size - 3000;
  rig_buffer_t *part = view(file, first, n);
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_fill(part, 0x5A, NULL, 0, &p));
  cr_assert(rig_point_device(p) == rig_host(), "a fill the io device writes has a host point");
  bool reached = false;
  CHECK_OK(rig_point_reached(p, &reached));
  cr_assert(reached, "the fill returned before its point was reached");
  uint8_t *now = file_bytes(path, 0, size);
  EXPECT_PATTERN(now, first, 0, 3, "bytes before the fill");
  EXPECT_BYTE(now + first, n, 0x5A, "filled bytes");
  EXPECT_PATTERN(now + first + n, size - first - n, first + n, 3, "bytes after the fill");
  free(now);

  /* rig_buffer_fill of the whole file. */
  CHECK_OK(rig_buffer_fill(file, 0xA5));
  now = file_bytes(path, 0, size);
  EXPECT_BYTE(now, size, 0xA5, "the whole file filled");
  free(now);
  rig_buffer_unref(part);
  rig_buffer_unref(file);
}

Test(io, a_region_opened_for_reading_refuses_writes) { /* BUF-37 BPROP-12 COPY-64 */
  const int64_t n = 64 * KIB;
  const char *path = make_file(n, 2);
  rig_buffer_t *ro = open_file(path, RIG_DISK_READ, 0, -1);
  rig_buffer_t *rw = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  cr_assert(rig_buffer_access(ro) == RIG_ACCESS_READ, "a region opened for reading admits Read only");
  cr_assert(rig_buffer_access(rw) == RIG_ACCESS_READ_WRITE, "a region opened for writing admits Read_write");
  rig_buffer_t *ro_part = view(ro, 4096, 4096);
  cr_assert(rig_buffer_access(ro_part) == RIG_ACCESS_READ, "a view admits what its buffer admits");

  rig_buffer_t *host = create(rig_host(), n);
  memset(rig_buffer_host(host), 0x11, (size_t)n);
  rig_box_t all = rig_row(0, 0, n);
  rig_point_t p;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(host, ro, &all, 1, NULL, 0, &p));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(host, ro));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_fill(ro, 0));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_fill(ro_part, 0));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_blit_from_bytes(rig_buffer_host(host), n, 0, ro, 0, 16));
  uint8_t *now = file_bytes(path, 0, n);
  EXPECT_PATTERN(now, n, 0, 2, "the file after the refused writes");
  free(now);
  rig_buffer_unref(host);
  rig_buffer_unref(ro_part);
  rig_buffer_unref(rw);
  rig_buffer_unref(ro);
}

/* ---- Files cut short -------------------------------------------------- */

Test(io, a_copy_from_a_truncated_file_answers_eio) { /* COPY-08 COPY-75 ERR-21 */
  const int64_t n = MIB;
  const char *path = make_file(n, 5);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ, 0, -1);
  cr_assert(truncate(path, 256 * KIB) == 0, "truncate: %s", strerror(errno));
  /* Each kind of destination: host memory, a memory device's, a sim
   * device's through staging.  A SIGBUS would end the test as a crash. */
  rig_device_t *targets[] = {rig_host(), open_named(memory_device_name), open_named(sim_device_name)};
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    rig_buffer_t *dst = create(targets[i], n);
    FAILS_EIO(EIO, rig_buffer_copy(file, dst));
    rig_buffer_unref(dst);
  }
  rig_point_t p;
  rig_buffer_t *dst = create(rig_host(), n);
  rig_box_t all = rig_row(0, 0, n);
  FAILS_EIO(EIO, rig_buffer_submit_copy(file, dst, &all, 1, NULL, 0, &p));
  /* The error names the file that was cut short. */
  FAILS_EIO_SAYING(EIO, rig_buffer_copy(file, dst), path, "cut short after 262144 bytes");

  /* The device serves on: the bytes that remain copy. */
  rig_buffer_t *left = view(file, 0, 256 * KIB);
  rig_buffer_t *dst_part = view(dst, 0, 256 * KIB);
  CHECK_OK(rig_buffer_copy(left, dst_part));
  EXPECT_PATTERN((const uint8_t *)rig_buffer_host(dst), 256 * KIB, 0, 5, "the bytes the file kept");
  cr_assert(rig_lost(disk_device()) == NULL, "an io error lost DISK");
  rig_buffer_unref(dst_part);
  rig_buffer_unref(left);
  rig_buffer_unref(dst);
  rig_buffer_unref(file);
}

Test(io, a_copy_never_reads_a_truncated_files_mapped_pages) { /* COPY-07 COPY-08 MACH-17 */
  const int64_t n = 256 * KIB;
  const char *path = make_file(n, 5);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ, 0, -1);
  rig_buffer_t *pages = borrow_or_null(rig_host(), file);
  cr_assert(pages != NULL && rig_buffer_host(pages) != NULL, "the host maps no page of the file");
  cr_assert(truncate(path, 0) == 0, "truncate: %s", strerror(errno));
  /* A copy that read the mapped pages would raise SIGBUS here. */
  rig_buffer_t *dst = create(rig_host(), n);
  FAILS_EIO(EIO, rig_buffer_copy(file, dst));
  rig_buffer_unref(dst);
  rig_buffer_unref(pages);
  rig_buffer_unref(file);
}

typedef struct truncation {
  int fd;
  int64_t size;
  atomic_int go;
} truncation_t;

static void *truncate_when_told(void *context) {
  truncation_t *t = context;
  while (!atomic_load(&t->go)) {
  }
  if (ftruncate(t->fd, t->size) != 0) return (void *)(intptr_t)errno;
  return NULL;
}

/* Copies a file of n bytes into a buffer on d while another thread cuts the
 * file to cut_to bytes: the copy has all the bytes, or answers RIG_EIO. */
static void copy_while_truncated(const char *path, int64_t n, rig_device_t *d, int64_t cut_to) {
  write_pattern_file(path, n, 7);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
  /* Out of the page cache, so the copy reads the disk and lasts. */
  cr_assert(fdatasync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ, 0, -1);
  rig_buffer_t *dst = create(d, n);
  truncation_t t = {.fd = fd, .size = cut_to};
  pthread_t thread;
  cr_assert(pthread_create(&thread, NULL, truncate_when_told, &t) == 0);
  atomic_store(&t.go, 1);
  rig_status_t status = rig_buffer_copy(file, dst);
  int code = rig_error_code();
  char why[512];
  snprintf(why, sizeof why, "%s", rig_last_error());
  void *failed = NULL;
  pthread_join(thread, &failed);
  cr_assert(failed == NULL, "ftruncate: %s", strerror((int)(intptr_t)failed));
  close(fd);
  cr_assert(status == RIG_OK || status == RIG_EIO, "copy during truncation: %s (%s)",
            rig_status_name(status), why);
  if (status == RIG_OK) {
    uint8_t *got = buffer_bytes(dst);
    EXPECT_PATTERN(got, n, 0, 7, "a copy that succeeded during truncation");
    free(got);
  } else {
    cr_assert(code == EIO && why[0] != '\0', "RIG_EIO with errno %d (%s)", code, why);
  }
  rig_buffer_unref(dst);
  rig_buffer_unref(file);
}

Test(io, a_file_truncated_during_a_long_copy) { /* COPY-08 COPY-75 */
  const int64_t n = 32 * MIB;
  const char *path = make_file(0, 7);
  copy_while_truncated(path, n, rig_host(), 0);
  copy_while_truncated(path, n, rig_host(), n / 2 + 1);
  copy_while_truncated(path, n, open_named(sim_device_name), n / 2);
}

/* ---- Two opens, io memory and borrows of it --------------------------- */

Test(io, two_opens_of_one_file_share_no_byte) { /* COPY-09 COPY-65 */
  const int64_t n = 64 * KIB;
  const char *path = make_file(n, 3);
  rig_buffer_t *a = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  rig_buffer_t *b = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  cr_assert(!rig_buffer_overlaps(a, b), "two opens of one file overlap");
  cr_assert(!rig_buffer_share_byte(a, b), "two opens of one file share a byte");
  /* Bytes 0..4K of one into bytes 8K..12K of the other: allowed. */
  rig_buffer_t *from = view(a, 0, 4 * KIB), *to = view(b, 8 * KIB, 4 * KIB);
  CHECK_OK(rig_buffer_copy(from, to));
  uint8_t *now = file_bytes(path, 0, n);
  EXPECT_PATTERN(now + 8 * KIB, 4 * KIB, 0, 3, "bytes copied between two opens");
  EXPECT_PATTERN(now, 8 * KIB, 0, 3, "bytes before");
  EXPECT_PATTERN(now + 12 * KIB, n - 12 * KIB, 12 * KIB, 3, "bytes after");
  free(now);

  /* Between io memory and a borrow of it: refused, even on bytes apart. */
  rig_buffer_t *pages = borrow_or_null(rig_host(), a);
  cr_assert(pages != NULL, "the host maps no page of the file");
  rig_buffer_t *page_part = view(pages, 8 * KIB, 4 * KIB);
  CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(from, page_part));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(page_part, from));
  rig_buffer_unref(page_part);
  rig_buffer_unref(pages);
  rig_buffer_unref(to);
  rig_buffer_unref(from);
  rig_buffer_unref(b);
  rig_buffer_unref(a);
}

Test(io, borrows_of_file_memory_map_its_pages) { /* MACH-17 */
  const int64_t n = 64 * KIB;
  const char *path = make_file(n, 6);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  rig_device_t *borrowers[] = {rig_host(), open_named(memory_device_name)};
  for (size_t i = 0; i < sizeof borrowers / sizeof borrowers[0]; i++) {
    const char *name = rig_device_name(borrowers[i]);
    rig_buffer_t *pages = borrow_or_null(borrowers[i], file);
    cr_assert(pages != NULL, "%s does not borrow file memory that starts on a page", name);
    cr_assert(rig_buffer_device(pages) == borrowers[i]);
    cr_assert(rig_buffer_is_borrowed(pages) && rig_buffer_bytes(pages) == n);
    const uint8_t *h = rig_buffer_host(pages);
    cr_assert(h != NULL, "a borrow of file memory on %s has no host address", name);
    EXPECT_PATTERN(h, n, 0, 6, name);
    rig_buffer_unref(pages);
  }
  /* The pages are the file's: a host write through them reaches it. */
  rig_buffer_t *pages = borrow_or_null(rig_host(), file);
  memset(rig_buffer_host(pages), 0x77, 100);
  rig_buffer_unref(pages);
  uint8_t *now = file_bytes(path, 0, 200);
  EXPECT_BYTE(now, 100, 0x77, "bytes written through the pages");
  EXPECT_PATTERN(now + 100, 100, 100, 6, "bytes after them");
  free(now);
  rig_buffer_unref(file);
}

Test(io, the_io_device_and_other_devices_never_reach_each_other) { /* MACH-14 BUF-12 BUF-13 */
  rig_device_t *disk = disk_device();
  rig_device_t *others[] = {rig_host(), open_named(memory_device_name), open_named(sim_device_name)};
  cr_assert(rig_reaches(disk, disk), "a device reaches its own memory");
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    const char *name = rig_device_name(others[i]);
    cr_assert(!rig_reaches(disk, others[i]), "DISK reaches %s", name);
    cr_assert(!rig_reaches(others[i], disk), "%s reaches DISK", name);
    /* Memory of another device never borrows on DISK, on a page or empty. */
    rig_buffer_t *b = create(others[i], 64 * KIB), *empty = create(others[i], 0);
    rig_buffer_t *out = (rig_buffer_t *)1;
    CHECK_OK(rig_buffer_borrow(disk, b, &out));
    cr_assert(out == NULL, "%s's memory borrows on DISK", name);
    out = (rig_buffer_t *)1;
    CHECK_OK(rig_buffer_borrow(disk, empty, &out));
    cr_assert(out == NULL, "%s's empty memory borrows on DISK", name);
    rig_buffer_unref(empty);
    rig_buffer_unref(b);
  }
  /* DISK's empty memory borrows on every other device. */
  const char *path = make_file(4 * KIB, 0);
  rig_buffer_t *empties[] = {open_file(path, RIG_DISK_READ, 0, 0), create(disk, 0)};
  for (size_t e = 0; e < 2; e++)
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
      rig_buffer_t *out = borrow_or_null(others[i], empties[e]);
      cr_assert(out != NULL, "DISK's empty memory does not borrow on %s", rig_device_name(others[i]));
      cr_assert(rig_buffer_bytes(out) == 0);
      rig_buffer_unref(out);
    }
  rig_buffer_unref(empties[1]);
  rig_buffer_unref(empties[0]);
}

/* ---- The io device and its memory ------------------------------------- */

Test(io, properties_of_the_io_device) { /* DEV-01 PROP-16 PROP-18 PROP-20 PROP-24 PROP-29 RECL-45 INTRO-01 */
  unsetenv("RIG_DISK");
  rig_device_t *disk = disk_device();
  cr_assert(rig_device_equal(disk, disk_device()) && disk == disk_device(),
            "a second rig_disk_device opened a second device");
  cr_assert_str_eq(rig_device_name(disk), "DISK");
  cr_assert_str_eq(rig_device_arch(disk), "");
  cr_assert_str_eq(rig_device_instruction_set(disk), "");
  cr_assert(rig_device_bus(disk) == NULL, "DISK has a bus address");
  cr_assert(rig_device_alignment(disk) == 1, "alignment %lld", (long long)rig_device_alignment(disk));
  cr_assert(rig_device_cache_bytes(disk) == 0, "cache_bytes %lld", (long long)rig_device_cache_bytes(disk));
  cr_assert(!rig_device_runs_on_host(disk), "DISK runs work on the host");
  cr_assert(rig_budget(disk) == INT64_MAX, "budget %lld without RIG_DISK", (long long)rig_budget(disk));
  cr_assert(rig_lost(disk) == NULL);

  /* It runs no work: its timeline does not move as it copies and fills. */
  uint64_t submitted = rig_submitted(disk);
  const char *path = make_file(64 * KIB, 1);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  rig_buffer_t *host = create(rig_host(), 64 * KIB);
  CHECK_OK(rig_buffer_copy(file, host));
  CHECK_OK(rig_buffer_copy(host, file));
  CHECK_OK(rig_buffer_fill(file, 1));
  cr_assert(rig_submitted(disk) == submitted, "DISK's timeline moved from %llu to %llu",
            (unsigned long long)submitted, (unsigned long long)rig_submitted(disk));
  rig_buffer_unref(host);
  rig_buffer_unref(file);
}

Test(io, buffers_over_file_memory) { /* BPROP-02 BPROP-09 BUF-14 HACC-18 BUF-38 BUF-65 LOW-18 LOW-36 */
  const int64_t n = 10000;
  const char *path = make_file(n, 2);
  rig_device_t *disk = disk_device();
  rig_buffer_t *file = open_file(path, RIG_DISK_READ, 1000, 5000);
  cr_assert(rig_buffer_device(file) == disk && rig_buffer_bytes(file) == 5000);
  cr_assert(rig_buffer_spans(file) && !rig_buffer_is_borrowed(file));
  cr_assert(rig_buffer_host(file) == NULL, "the host addresses io memory directly");
  rig_buffer_t *part = view(file, 10, 100);
  cr_assert(!rig_buffer_spans(part) && rig_buffer_device(part) == disk);
  rig_buffer_t *whole = view(file, 0, 5000);
  cr_assert(rig_buffer_spans(whole));

  /* New memory with empty stamps, which no device borrowed: nothing to wait for. */
  bool reached = false;
  CHECK_OK(rig_buffer_reached(file, RIG_ACCESS_READ_WRITE, &reached));
  cr_assert(reached, "new file memory has work to wait for");
  CHECK_OK(rig_buffer_wait(file, RIG_ACCESS_READ_WRITE));

  /* Outside the claims: free returns false and changes nothing. */
  bool freed = true;
  CHECK_OK(rig_buffer_free(file, NULL, &freed));
  cr_assert(!freed && rig_buffer_dead(file) == NULL, "free took file memory");

  bool aligned;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_aligned(file, 0, 1, &aligned));
  uint64_t handle;
  int64_t offset;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_handle(file, &handle, &offset));

  /* The range is the file's bytes from its offset. */
  uint8_t *got = buffer_bytes(file);
  EXPECT_PATTERN(got, 5000, 1000, 2, "a range of a file");
  free(got);
  rig_buffer_unref(whole);
  rig_buffer_unref(part);
  rig_buffer_unref(file);
}

Test(io, disk_open_refusals) { /* rig/disk.h */
  const char *path = make_file(4096, 0);
  rig_buffer_t *b = (rig_buffer_t *)1;
  CHECK_FAILS(RIG_EINVAL, rig_disk_open(NULL, RIG_DISK_READ, 0, -1, &b));
  cr_assert(b == NULL);
  CHECK_FAILS(RIG_EINVAL, rig_disk_open(path, (rig_disk_mode_t)7, 0, -1, &b));
  CHECK_FAILS(RIG_EINVAL, rig_disk_open(path, RIG_DISK_READ, 4097, -1, &b));
  CHECK_FAILS(RIG_EINVAL, rig_disk_open(path, RIG_DISK_READ, 4000, 97, &b));
  CHECK_FAILS(RIG_EINVAL, rig_disk_open(path, RIG_DISK_READ, -1, 1, &b));
  CHECK_FAILS(RIG_EINVAL, rig_disk_open(path, RIG_DISK_READ, 0, -2, &b));
  char missing[PATH_MAX];
  snprintf(missing, sizeof missing, "%s.missing", path);
  FAILS_EIO(ENOENT, rig_disk_open(missing, RIG_DISK_READ, 0, -1, &b));
  /* The range up to the end, and an empty one at the end, open. */
  b = open_file(path, RIG_DISK_READ, 4000, -1);
  cr_assert(rig_buffer_bytes(b) == 96);
  rig_buffer_unref(b);
  b = open_file(path, RIG_DISK_READ, 4096, -1);
  cr_assert(rig_buffer_bytes(b) == 0);
  rig_buffer_unref(b);
}

/* Opens of what is not a regular file answer at once (the old library
 * blocked in the open of a FIFO: the test's timeout). */
Test(io, disk_open_refuses_what_is_not_a_regular_file, .timeout = 20) { /* rig/disk.h */
  char dir[PATH_MAX], fifo[PATH_MAX + 8];
  snprintf(dir, sizeof dir, "%s/rig-io-test-XXXXXX", io_directory());
  cr_assert(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  cr_assert(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
  rig_buffer_t *b = (rig_buffer_t *)1;
  FAILS_EIO_SAYING(EINVAL, rig_disk_open(fifo, RIG_DISK_READ, 0, -1, &b), fifo, "a FIFO");
  cr_assert_null(b);
  FAILS_EIO_SAYING(EINVAL, rig_disk_open(fifo, RIG_DISK_READ_WRITE, 0, -1, &b), fifo, "a FIFO");
  FAILS_EIO_SAYING(EISDIR, rig_disk_open(dir, RIG_DISK_READ, 0, -1, &b), dir, "a directory");
  FAILS_EIO_SAYING(EISDIR, rig_disk_open(dir, RIG_DISK_READ_WRITE, 0, -1, &b), dir, "directory");
  FAILS_EIO_SAYING(EINVAL, rig_disk_open("/dev/null", RIG_DISK_READ, 0, -1, &b), "/dev/null",
                   "a character device");
  cr_assert_null(b);
  unlink(fifo);
  rmdir(dir);
}

Test(io, the_file_closes_once_no_buffer_over_it_remains) { /* BUF-39 */
  const char *path = make_file(MIB, 4);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ, 0, -1);
  rig_buffer_t *part = view(file, PAGE, 64 * KIB);
  rig_buffer_t *host = create(rig_host(), MIB);
  CHECK_OK(rig_buffer_copy(file, host)); /* the engine may open the file again, for O_DIRECT */
  rig_buffer_unref(file);
  cr_assert(descriptors_on_path(path) > 0, "the file closed while a view over it remains");
  rig_buffer_t *dst = view(host, 0, 64 * KIB);
  CHECK_OK(rig_buffer_copy(part, dst));
  rig_buffer_unref(dst);
  rig_buffer_unref(part);
  /* A call that moves collected memory (RECL-16). */
  rig_buffer_t *other = open_file(make_file(4096, 0), RIG_DISK_READ, 0, -1);
  int open_descriptors = descriptors_on_path(path);
  cr_assert(open_descriptors == 0, "%d descriptors stay open on the file after its last buffer went",
            open_descriptors);
  rig_buffer_unref(other);
  rig_buffer_unref(host);
}

Test(io, scratch_memory_on_disk_returns_when_released) { /* BUF-27 RECL-14 RECL-16 RECL-27 */
  rig_device_t *disk = disk_device();
  const int64_t before = rig_allocated(disk);
  anonymous_files_t files_before = anonymous_files();
  /* Whatever memory kind is asked, the io library's alloc makes it. */
  const rig_memory_t kinds[] = {RIG_MEMORY_DEVICE, RIG_MEMORY_PINNED, RIG_MEMORY_MAPPED};
  rig_buffer_t *scratch[3];
  const int64_t n = MIB + 3; /* counts as MIB + 4: whole words */
  for (int i = 0; i < 3; i++) {
    CHECK_OK(rig_buffer_create(disk, n, kinds[i], &scratch[i]));
    cr_assert(rig_buffer_device(scratch[i]) == disk && rig_buffer_bytes(scratch[i]) == n);
    cr_assert(rig_buffer_host(scratch[i]) == NULL);
    void *region = NULL;
    CHECK_OK(rig_buffer_io(scratch[i], RIG_DISK_KEY, &region));
    cr_assert(region != NULL, "scratch memory is not the disk library's");
    put_pattern(scratch[i], (uint8_t)i);
  }
  cr_assert(rig_allocated(disk) == before + 3 * (MIB + 4), "allocated %lld, want %lld",
            (long long)rig_allocated(disk), (long long)(before + 3 * (MIB + 4)));
  for (int i = 0; i < 3; i++) {
    uint8_t *got = buffer_bytes(scratch[i]);
    EXPECT_PATTERN(got, n, 0, (uint8_t)i, "scratch memory");
    free(got);
  }
  anonymous_files_t files_held = anonymous_files();
  for (int i = 0; i < 3; i++) rig_buffer_unref(scratch[i]);
  /* No cache holds io memory: a call that moves collected memory on DISK
   * (RECL-16) returns it, without free_cache. */
  rig_buffer_t *empty = NULL;
  CHECK_OK(rig_buffer_create(disk, 0, RIG_MEMORY_DEVICE, &empty));
  rig_buffer_unref(empty);
  cr_assert(rig_allocated(disk) == before, "allocated %lld after the release, want %lld",
            (long long)rig_allocated(disk), (long long)before);
  /* The anonymous files went back: none of those the scratch made is open. */
  anonymous_files_t files_after = anonymous_files();
  int made = 0;
  for (int i = 0; i < files_held.count; i++) {
    if (anonymous_holds(&files_before, files_held.dev[i], files_held.ino[i])) continue;
    made++;
    cr_assert(!anonymous_holds(&files_after, files_held.dev[i], files_held.ino[i]),
              "an anonymous file of released scratch memory is still open");
  }
  cr_assert(made >= 3, "the scratch memory held %d anonymous files, want 3", made);
}

Test(io, an_allocation_over_the_io_budget_answers_enomem) { /* RECL-35 RECL-45 */
  /* Before the first rig_disk_device of this process: each test runs in
   * a process of its own. */
  cr_assert(setenv("RIG_DISK", "budget=1M", 1) == 0);
  rig_device_t *disk = disk_device();
  cr_assert(rig_budget(disk) == MIB, "budget %lld with RIG_DISK=budget=1M", (long long)rig_budget(disk));
  rig_buffer_t *b = (rig_buffer_t *)1;
  CHECK_NO_MEMORY(disk, 2 * MIB, rig_buffer_create(disk, 2 * MIB, RIG_MEMORY_DEVICE, &b));
  cr_assert(rig_allocated(disk) == 0);
  /* Within the budget: allowed; counted. */
  CHECK_OK(rig_buffer_create(disk, 512 * KIB, RIG_MEMORY_DEVICE, &b));
  cr_assert(rig_allocated(disk) == 512 * KIB);
  rig_buffer_unref(b);
}

Test(io, a_budget_rig_cannot_read_refuses_the_disk_device) { /* ERR-03 */
  /* Before the first rig_disk_device of this process, as above. */
  cr_assert(setenv("RIG_DISK", "budget=lots", 1) == 0);
  rig_device_t *disk = (rig_device_t *)1;
  cr_assert_eq(rig_disk_device(&disk), RIG_EOPEN, "DISK opened with RIG_DISK=budget=lots");
  cr_assert_null(disk);
  cr_assert(strstr(rig_last_error(), "RIG_DISK") && strstr(rig_last_error(), "budget"),
            "the refusal does not name RIG_DISK's budget: %s", rig_last_error());
  /* ERR-03: once the variable reads, DISK opens, with its budget. */
  cr_assert(setenv("RIG_DISK", "budget=1M", 1) == 0);
  CHECK_OK(rig_disk_device(&disk));
  cr_assert(rig_budget(disk) == MIB, "budget %lld with RIG_DISK=budget=1M", (long long)rig_budget(disk));
}

Test(io, buffer_io_answers_the_region_for_its_key) { /* LOW-10 LOW-11 LOW-12 */
  const char *path = make_file(64 * KIB, 1);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  void *region = NULL, *again = (void *)1;
  CHECK_OK(rig_buffer_io(file, RIG_DISK_KEY, &region));
  cr_assert(region != NULL, "rig_buffer_io answers no region for the disk library's key");
  /* A view and a borrow lie in the same region. */
  rig_buffer_t *part = view(file, 100, 100);
  CHECK_OK(rig_buffer_io(part, RIG_DISK_KEY, &again));
  cr_assert(again == region, "a view lies in another region");
  rig_buffer_t *pages = borrow_or_null(rig_host(), file);
  again = (void *)1;
  CHECK_OK(rig_buffer_io(pages, RIG_DISK_KEY, &again));
  cr_assert(again == region, "a borrow of file memory lies in another region");
  /* Another open of the file is another region. */
  rig_buffer_t *second = open_file(path, RIG_DISK_READ, 0, -1);
  CHECK_OK(rig_buffer_io(second, RIG_DISK_KEY, &again));
  cr_assert(again != NULL && again != region, "two opens share a region");

  /* Another key, or memory that is not an io device's: NULL. */
  again = (void *)1;
  CHECK_OK(rig_buffer_io(file, "another.library", &again));
  cr_assert(again == NULL, "a region for another library's key");
  rig_buffer_t *host = create(rig_host(), 4096);
  rig_buffer_t *mem = create(open_named(memory_device_name), 4096);
  rig_buffer_t *not_io[] = {host, mem};
  for (int i = 0; i < 2; i++) {
    again = (void *)1;
    CHECK_OK(rig_buffer_io(not_io[i], RIG_DISK_KEY, &again));
    cr_assert(again == NULL, "a region for %s's memory", rig_device_name(rig_buffer_device(not_io[i])));
  }
  /* A dead buffer. */
  bool freed = false;
  CHECK_OK(rig_buffer_free(host, NULL, &freed));
  cr_assert(freed && rig_buffer_dead(host) != NULL);
  CHECK_FAILS(RIG_EINVAL, rig_buffer_io(host, RIG_DISK_KEY, &again));
  rig_buffer_unref(mem);
  rig_buffer_unref(host);
  rig_buffer_unref(second);
  rig_buffer_unref(pages);
  rig_buffer_unref(part);
  rig_buffer_unref(file);
}

/* A region of the test's own: of_io refuses it before anything uses it. */
static int never_used_region;

Test(io, of_io_refusals) { /* BUF-40 BUF-41 BUF-42 */
  rig_device_t *disk = disk_device();
  rig_device_t *not_io[] = {rig_host(), open_named(memory_device_name), open_named(sim_device_name)};
  rig_buffer_t *b = (rig_buffer_t *)1;
  for (size_t i = 0; i < sizeof not_io / sizeof not_io[0]; i++) {
    CHECK_FAILS(RIG_EINVAL,
                rig_buffer_of_io(not_io[i], RIG_DISK_KEY, &never_used_region, RIG_ACCESS_READ, 4, &b));
    cr_assert(b == NULL);
  }
  CHECK_FAILS(RIG_EINVAL,
              rig_buffer_of_io(NULL, RIG_DISK_KEY, &never_used_region, RIG_ACCESS_READ, 4, &b));
  CHECK_FAILS(RIG_EINVAL,
              rig_buffer_of_io(disk, "another.library", &never_used_region, RIG_ACCESS_READ, 4, &b));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_of_io(disk, NULL, &never_used_region, RIG_ACCESS_READ, 4, &b));
  CHECK_FAILS(RIG_EINVAL,
              rig_buffer_of_io(disk, RIG_DISK_KEY, &never_used_region, RIG_ACCESS_READ, -1, &b));
  cr_assert(b == NULL);
}

Test(io, close_of_the_io_device) { /* DEV-50 DEV-43 BUF-43 DEV-05 */
  const char *path = make_file(64 * KIB, 2);
  rig_device_t *disk = disk_device();
  rig_buffer_t *file = open_file(path, RIG_DISK_READ, 0, -1);
  CHECK_OK(rig_close(disk));
  cr_assert(rig_lost(disk) != NULL && strcmp(rig_lost(disk), "closed") == 0, "lost: %s",
            rig_lost(disk) ? rig_lost(disk) : "(live)");
  rig_buffer_t *b = (rig_buffer_t *)1;
  CHECK_LOST(disk, rig_buffer_of_io(disk, RIG_DISK_KEY, &never_used_region, RIG_ACCESS_READ, 4, &b));
  cr_assert(b == NULL);
  rig_buffer_t *host = create(rig_host(), 64 * KIB);
  CHECK_LOST(disk, rig_buffer_copy(file, host));
  CHECK_LOST(disk, rig_buffer_create(disk, 16, RIG_MEMORY_DEVICE, &b));
  rig_buffer_unref(file);

  /* The name opens a new device, which serves. */
  rig_device_t *next = disk_device();
  cr_assert(!rig_device_equal(next, disk) && rig_lost(next) == NULL);
  file = open_file(path, RIG_DISK_READ, 0, -1);
  cr_assert(rig_buffer_device(file) == next);
  CHECK_OK(rig_buffer_copy(file, host));
  EXPECT_PATTERN((const uint8_t *)rig_buffer_host(host), 64 * KIB, 0, 2, "a file read after a reopen");
  rig_buffer_unref(file);
  rig_buffer_unref(host);
}

Test(io, a_child_of_fork_keeps_the_io_device) { /* STOP-27 */
  rig_device_t *disk = disk_device();
  const char *path = make_file(4096, 1);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ, 0, -1);
  fflush(NULL);
  pid_t child = fork();
  cr_assert(child >= 0, "fork: %s", strerror(errno));
  if (child == 0) {
    rig_device_t *again = NULL;
    int failed = rig_lost(disk) != NULL;                           /* 1: lost */
    if (!failed && (rig_disk_device(&again) != RIG_OK || again != disk)) failed = 2; /* 2: another device */
    _exit(failed);
  }
  int status = 0;
  cr_assert(waitpid(child, &status, 0) == child);
  cr_assert(WIFEXITED(status), "the child ended by signal %d", WTERMSIG(status));
  cr_assert(WEXITSTATUS(status) != 1, "DISK is lost in the child of a fork");
  cr_assert(WEXITSTATUS(status) == 0, "rig_disk_device in the child answers another device");
  rig_buffer_unref(file);
}

/* ---- Write errors ----------------------------------------------------- */

Test(io, a_write_the_file_system_refuses_answers_eio) { /* COPY-75 COPY-100 ERR-21 */
  const int64_t n = 256 * KIB;
  const char *path = make_file(n, 1);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  rig_buffer_t *host = create(rig_host(), n);
  memset(rig_buffer_host(host), 0x33, (size_t)n);
  /* Writes past the file size limit fail with EFBIG (SIGXFSZ ignored). */
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit old, limit = {.rlim_cur = 64 * KIB, .rlim_max = RLIM_INFINITY};
  cr_assert(getrlimit(RLIMIT_FSIZE, &old) == 0);
  limit.rlim_max = old.rlim_max;
  cr_assert(setrlimit(RLIMIT_FSIZE, &limit) == 0, "setrlimit: %s", strerror(errno));
  rig_status_t fill = rig_buffer_fill(file, 0x44);
  int fill_code = rig_error_code();
  rig_status_t copy = rig_buffer_copy(host, file);
  int copy_code = rig_error_code();
  cr_assert(setrlimit(RLIMIT_FSIZE, &old) == 0);
  cr_assert(fill == RIG_EIO && fill_code == EFBIG, "fill past the limit: %s, errno %d",
            rig_status_name(fill), fill_code);
  cr_assert(copy == RIG_EIO && copy_code == EFBIG && check_error_copy()[0] != '\0',
            "copy past the limit: %s, errno %d (%s)", rig_status_name(copy), copy_code,
            check_error_copy());
  /* Within the limit again, the device writes. */
  CHECK_OK(rig_buffer_copy(host, file));
  uint8_t *now = file_bytes(path, 0, n);
  EXPECT_BYTE(now, n, 0x33, "the file after the limit was lifted");
  free(now);
  rig_buffer_unref(host);
  rig_buffer_unref(file);
}

/* Mounts a tmpfs of bytes bytes on a new directory in a mount namespace of
 * the test's process (Criterion runs each test in a process of its own),
 * as root or in a user namespace of its own; false where the system allows
 * neither.  Call it before any call into rig: unshare needs one thread. */
static bool mount_small_tmpfs(char dir[PATH_MAX], int64_t bytes) {
  if (unshare(CLONE_NEWNS) != 0 && (errno != EPERM || unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)) return false;
  if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return false;
  snprintf(dir, PATH_MAX, "/tmp/rig-io-test-XXXXXX");
  if (!mkdtemp(dir)) return false;
  char size[64];
  snprintf(size, sizeof size, "size=%lld", (long long)bytes);
  return mount("tmpfs", dir, "tmpfs", 0, size) == 0;
}

Test(io, a_write_out_of_room_reports_the_bytes_it_wrote) { /* COPY-75 ERR-21 */
  const int64_t room = 64 * KIB, n = 256 * KIB;
  char dir[PATH_MAX], path[PATH_MAX + 8];
  if (!mount_small_tmpfs(dir, room)) cr_skip_test("no tmpfs can be mounted here: %s", strerror(errno));
  snprintf(path, sizeof path, "%s/file", dir);
  /* A sparse file of n bytes on a file system with room for fewer. */
  int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  cr_assert(fd >= 0 && ftruncate(fd, n) == 0, "%s: %s", path, strerror(errno));
  close(fd);
  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  rig_buffer_t *host = create(rig_host(), n);
  fill_pattern(rig_buffer_host(host), n, 0, 9);
  CHECK_FAILS(RIG_EIO, rig_buffer_copy(host, file));
  cr_assert_eq(rig_error_code(), ENOSPC, "errno %d (%s)", rig_error_code(), strerror(rig_error_code()));
  const char *why = check_error_copy();
  cr_assert(strstr(why, path) != NULL, "\"%s\" does not name %s", why, path);
  /* The message says how many bytes the write put in place; they are. */
  const char *after = strstr(why, "after ");
  cr_assert_not_null(after, "\"%s\" says no count", why);
  long long written = atoll(after + strlen("after "));
  cr_assert(written > 0 && written <= room, "\"%s\": %lld bytes written on a file system of %lld", why, written,
            (long long)room);
  uint8_t *now = file_bytes(path, 0, written);
  EXPECT_PATTERN(now, written, 0, 9, "the bytes the write reports");
  free(now);
  rig_buffer_unref(host);
  rig_buffer_unref(file);
}

/* ---- Batched reads (rig_disk_read_ranges) ----------------------------- */

/* The range of bytes bytes of file from file_offset into dst at dst_offset. */
static rig_disk_range_t disk_range(rig_buffer_t *file, int64_t file_offset, rig_buffer_t *dst, int64_t dst_offset,
                                   int64_t bytes) {
  return (rig_disk_range_t){file, file_offset, dst, dst_offset, bytes};
}

enum { SHARDS = 16 };

/* A sharded checkpoint: SHARDS files of sizes around a MiB, odd ones
 * unaligned, each read whole into its place in one MEM buffer, a range of
 * the first read again into a host buffer and another into a SIM buffer
 * (through staging); every byte lands where its range says. */
Test(io, read_ranges_of_many_files_in_one_call) { /* COPY-04 COPY-57 */
  rig_buffer_t *files[SHARDS];
  int64_t sizes[SHARDS], at[SHARDS], total = 0;
  for (int i = 0; i < SHARDS; i++) {
    sizes[i] = MIB + (i % 2 ? 4093 * i : 64 * KIB * i);
    at[i] = total;
    total += sizes[i] + (i % 3);  /* gaps of 0 to 2 bytes between the shards */
    files[i] = open_file(make_file(sizes[i], (uint8_t)(20 + i)), RIG_DISK_READ, 0, -1);
  }
  rig_buffer_t *mem = create(open_named(memory_device_name), total);
  rig_buffer_t *host = create(rig_host(), 300 * KIB);
  rig_buffer_t *sim = create(open_named(sim_device_name), 200 * KIB);
  CHECK_OK(rig_buffer_fill(mem, 0xEE));
  rig_disk_range_t ranges[SHARDS + 3];
  for (int i = 0; i < SHARDS; i++) ranges[i] = disk_range(files[i], 0, mem, at[i], sizes[i]);
  ranges[SHARDS] = disk_range(files[0], 4097, host, 3, 300 * KIB - 3);
  ranges[SHARDS + 1] = disk_range(files[1], 0, sim, 0, 200 * KIB);
  ranges[SHARDS + 2] = disk_range(files[2], 10, host, 0, 0); /* an empty range reads nothing */
  CHECK_OK(rig_disk_read_ranges(ranges, SHARDS + 3));

  const uint8_t *m = rig_buffer_host(mem);
  for (int i = 0; i < SHARDS; i++) {
    EXPECT_PATTERN(m + at[i], sizes[i], 0, (uint8_t)(20 + i), "a shard in the MEM buffer");
    int64_t gap_end = i + 1 < SHARDS ? at[i + 1] : total;
    EXPECT_BYTE(m + at[i] + sizes[i], gap_end - at[i] - sizes[i], 0xEE, "the gap after a shard");
  }
  EXPECT_PATTERN((const uint8_t *)rig_buffer_host(host) + 3, 300 * KIB - 3, 4097, 20, "a range into host memory");
  uint8_t *s = buffer_bytes(sim);
  EXPECT_PATTERN(s, 200 * KIB, 0, 21, "a range into SIM memory");
  free(s);
  rig_buffer_unref(sim);
  rig_buffer_unref(host);
  rig_buffer_unref(mem);
  for (int i = 0; i < SHARDS; i++) rig_buffer_unref(files[i]);
}

/* A range into SIM memory whose earlier fill is still running there: the
 * read writes after it, and the fill's bytes stay outside the range. */
Test(io, read_ranges_are_ordered_by_the_destinations_stamps) { /* COPY-02 */
  rig_device_t *slow = open_with("SIM:44", "latency_us=200000");
  const int64_t n = 256 * KIB;
  rig_buffer_t *file = open_file(make_file(n, 31), RIG_DISK_READ, 0, -1);
  rig_buffer_t *dst = create(slow, 2 * n);
  rig_point_t filled;
  CHECK_OK(rig_buffer_submit_fill(dst, 0x5A, NULL, 0, &filled));
  rig_disk_range_t r = disk_range(file, 0, dst, n / 2, n);
  CHECK_OK(rig_disk_read_ranges(&r, 1));
  uint8_t *got = buffer_bytes(dst);
  EXPECT_BYTE(got, n / 2, 0x5A, "the fill before the range");
  EXPECT_PATTERN(got + n / 2, n, 0, 31, "the range, written after the fill");
  EXPECT_BYTE(got + n / 2 + n, n / 2, 0x5A, "the fill after the range");
  free(got);
  rig_buffer_unref(dst);
  rig_buffer_unref(file);
}

/* call answers RIG_EINVAL with a message that holds text. */
#define FAILS_INVALID_SAYING(call, text)                                                          \
  do {                                                                                            \
    CHECK_FAILS(RIG_EINVAL, call);                                                                \
    cr_assert(strstr(check_error_copy(), (text)) != NULL, "%s: \"%s\" does not say \"%s\"", #call, \
              check_error_copy(), (text));                                                        \
  } while (0)

/* Each wrong batch is refused before a byte of any of its ranges moves. */
Test(io, read_ranges_refusals) { /* rig/disk.h */
  const int64_t n = 64 * KIB;
  rig_buffer_t *file = open_file(make_file(n, 41), RIG_DISK_READ, 0, -1);
  rig_buffer_t *dst = create(open_named(memory_device_name), 2 * n);
  rig_buffer_t *not_disk = create(open_named(memory_device_name), n);
  rig_buffer_t *first_half = view(dst, 0, n), *middle = view(dst, n / 2, n);
  CHECK_OK(rig_buffer_fill(dst, 0));
  rig_disk_range_t good = disk_range(file, 0, dst, n, n);

  FAILS_INVALID_SAYING(rig_disk_read_ranges(&good, 0), "count is 0");
  FAILS_INVALID_SAYING(rig_disk_read_ranges(NULL, 1), "ranges is NULL");
  struct {
    rig_disk_range_t bad;
    const char *said;
  } cases[] = {
      {disk_range(NULL, 0, dst, 0, 1), "range 1's file"},
      {disk_range(file, 0, NULL, 0, 1), "range 1's dst"},
      {disk_range(not_disk, 0, dst, 0, 1), "not on DISK"},
      {disk_range(file, 0, file, 100, 1), "memory of its own file"},
      {disk_range(file, -1, dst, 0, 1), "file_offset -1"},
      {disk_range(file, 0, dst, 0, -5), "bytes -5"},
      {disk_range(file, n - 10, dst, 0, 11), "past the end of its file's 65536 bytes"},
      {disk_range(file, 0, dst, 2 * n - 10, 11), "past the end of its dst's 131072 bytes"},
      {disk_range(file, INT64_MAX, dst, 0, 1), "past the end of its file's"},
      /* Overlapping good's bytes [n, 2n) of the allocation through a view. */
      {disk_range(file, 0, middle, n / 2 + 1, 10), "range 0 and range 1 write overlapping bytes"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rig_disk_range_t pair[2] = {good, cases[i].bad};
    FAILS_INVALID_SAYING(rig_disk_read_ranges(pair, 2), cases[i].said);
    uint8_t *got = buffer_bytes(dst);
    EXPECT_BYTE(got, 2 * n, 0, "dst after a refused batch");
    free(got);
  }
  /* Two views of one buffer that meet without sharing a byte are fine. */
  rig_disk_range_t apart[2] = {disk_range(file, 0, first_half, 0, n), disk_range(file, 0, middle, n / 2, n / 2)};
  CHECK_OK(rig_disk_read_ranges(apart, 2));
  uint8_t *got = buffer_bytes(dst);
  EXPECT_PATTERN(got, n, 0, 41, "the first view's range");
  EXPECT_PATTERN(got + n, n / 2, 0, 41, "the second view's range");
  free(got);
  rig_buffer_t *made[] = {middle, first_half, not_disk, dst, file};
  for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) rig_buffer_unref(made[i]);
}

/* A file cut short after the batch was made: RIG_EIO naming it, and the
 * disk serves on (the bytes of the whole file ranges are in place). */
Test(io, read_ranges_of_a_truncated_file_answer_eio) { /* COPY-08 COPY-75 ERR-21 */
  const int64_t n = MIB;
  const char *cut = make_file(n, 51);
  rig_buffer_t *whole = open_file(make_file(n, 52), RIG_DISK_READ, 0, -1);
  rig_buffer_t *file = open_file(cut, RIG_DISK_READ, 0, -1);
  cr_assert(truncate(cut, 100 * KIB) == 0, "truncate: %s", strerror(errno));
  rig_buffer_t *dst = create(rig_host(), 2 * n);
  rig_disk_range_t ranges[2] = {disk_range(whole, 0, dst, 0, n), disk_range(file, 0, dst, n, n)};
  FAILS_EIO_SAYING(EIO, rig_disk_read_ranges(ranges, 2), cut, "cut short");
  cr_assert(rig_lost(disk_device()) == NULL, "an io error lost DISK");
  CHECK_OK(rig_disk_read_ranges(ranges, 1));
  EXPECT_PATTERN((const uint8_t *)rig_buffer_host(dst), n, 0, 52, "the file that is whole");
  rig_buffer_unref(dst);
  rig_buffer_unref(file);
  rig_buffer_unref(whole);
}

/* ---- Durability (rig_disk_sync) --------------------------------------- */

/* The extents of fd whose bytes lie in the page cache alone, with no block
 * of the disk given them yet (FIEMAP_EXTENT_DELALLOC), or -1 where the file
 * system answers no FIEMAP. */
static int delayed_extents(int fd) {
  struct {
    struct fiemap map;
    struct fiemap_extent extents[64];
  } f;
  memset(&f, 0, sizeof f);
  f.map.fm_length = FIEMAP_MAX_OFFSET;
  f.map.fm_extent_count = 64;
  if (ioctl(fd, FS_IOC_FIEMAP, &f.map) != 0) return -1;
  int delayed = 0;
  for (unsigned i = 0; i < f.map.fm_mapped_extents; i++) delayed += (f.extents[i].fe_flags & FIEMAP_EXTENT_DELALLOC) != 0;
  return delayed;
}

/* A copy into a file through a view at an odd offset (the page cache's
 * path) is done with its bytes in the page cache, where a file system that
 * allocates late (ext4, XFS) has given them no block yet; rig_disk_sync
 * writes them back to the disk: no extent stays delayed, the bytes read
 * back, and the sync of a file's scratch memory answers RIG_OK too. */
Test(io, sync_writes_a_files_bytes_back_to_the_disk) { /* rig/disk.h */
  const int64_t n = 3 * MIB + 123;
  const char *path = make_file(0, 0);
  cr_assert(truncate(path, n) == 0, "truncate: %s", strerror(errno));
  rig_buffer_t *file = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  rig_buffer_t *tail = view(file, 1, n - 1);
  rig_buffer_t *host = create(rig_host(), n - 1);
  fill_pattern(rig_buffer_host(host), n - 1, 1, 61);
  CHECK_OK(rig_buffer_copy(host, tail));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
  int before = delayed_extents(fd);
  if (before <= 0) {
    close(fd);
    cr_skip_test("%s's file system %s, so its extents cannot tell written-back bytes from bytes in the page cache",
                 io_directory(), before < 0 ? "answers no FIEMAP" : "gives written bytes blocks at once");
  }
  CHECK_OK(rig_disk_sync(tail));
  int after = delayed_extents(fd);
  cr_assert(after == 0, "%d of the file's extents are still delayed after the sync (%d before)", after, before);
  close(fd);
  uint8_t *now = file_bytes(path, 1, n - 1);
  EXPECT_PATTERN(now, n - 1, 1, 61, "the file after the sync");
  free(now);
  rig_buffer_t *scratch = create(disk_device(), 64 * KIB);
  CHECK_OK(rig_buffer_fill(scratch, 7));
  CHECK_OK(rig_disk_sync(scratch));
  rig_buffer_t *made[] = {scratch, host, tail, file};
  for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) rig_buffer_unref(made[i]);
}

/* What is no file rig writes is refused, saying why; a file system that
 * cannot flush answers RIG_EIO with the errno, naming the file. */
Test(io, sync_refusals) { /* rig/disk.h */
  FAILS_INVALID_SAYING(rig_disk_sync(NULL), "file");
  const char *path = make_file(64 * KIB, 62);
  rig_buffer_t *read_only = open_file(path, RIG_DISK_READ, 0, -1);
  FAILS_INVALID_SAYING(rig_disk_sync(read_only), "is open RIG_DISK_READ");
  rig_buffer_t *host = create(rig_host(), 64);
  FAILS_INVALID_SAYING(rig_disk_sync(host), "not a file of DISK");
  rig_buffer_t *released = open_file(path, RIG_DISK_READ_WRITE, 0, -1);
  rig_buffer_unref(released);
  CHECK_FAILS(RIG_EINVAL, rig_disk_sync(released));
  /* procfs has no flush: its files answer fdatasync EINVAL. */
  rig_buffer_t *comm = open_file("/proc/self/comm", RIG_DISK_READ_WRITE, 0, -1);
  FAILS_EIO_SAYING(EINVAL, rig_disk_sync(comm), "/proc/self/comm", "fdatasync");
  rig_buffer_unref(comm);
  rig_buffer_unref(host);
  rig_buffer_unref(read_only);
}
