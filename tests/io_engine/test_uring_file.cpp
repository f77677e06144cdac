/* Tests of the io devices' file engine (io/uring_file.hpp): reads and writes
 * between files and host memory over io_uring, O_DIRECT where the alignment
 * allows and the page cache otherwise, staged transfers, and files cut short.
 *
 * Asserts: COPY-04 (the io device copies through its reads and writes: every
 * byte here moves through the engine's requests, counted by Stats), COPY-07
 * (no mapping: a file truncated under a read never raises SIGBUS), COPY-08 (a
 * copy from a file cut short fails with the io device's error, IoError, which
 * the core turns into RIG_EIO, and with the bytes that existed in place),
 * ERR-21 (an io error leaves the engine serving later calls).
 *
 * The files live in the working directory (CTest runs the test in its build
 * directory), on whatever file system that is: where it refuses O_DIRECT the
 * tests assert the page-cache fallback instead of the direct path.
 */
#include "page_populator.hpp"
#include "uring_file.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using rig::io::FileRegion;
using rig::io::IoError;
using rig::io::PagePopulator;
using rig::io::Stats;
using rig::io::UringEngine;

namespace {

// The byte at file offset i of a file filled with seed: no period that a
// misplaced chunk, row or block could hide behind.
uint8_t pattern(int64_t i, uint32_t seed) {
  uint64_t x = uint64_t(i) * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  return uint8_t(x >> 56);
}

void fill_pattern(char *p, int64_t file_offset, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; ++i) p[i] = char(pattern(file_offset + i, seed));
}

// The first index in [0, n) where p differs from the file's pattern, or -1.
int64_t first_mismatch(const char *p, int64_t file_offset, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; ++i) {
    if (uint8_t(p[i]) != pattern(file_offset + i, seed)) return i;
  }
  return -1;
}

// A file in the working directory, filled with a pattern, unlinked once
// open (so that no test, failed or crashed, leaves it behind).  It starts
// out of the page cache, so that reads of it go to the disk.
class TestFile {
 public:
  explicit TestFile(int64_t size, uint32_t seed = 1, int flags = O_RDWR) : seed_(seed) {
    char name[] = "rig_io_engine_XXXXXX";
    const int fd = mkstemp(name);
    cr_assert(fd >= 0, "mkstemp: %s", std::strerror(errno));
    const std::string path = name;
    std::vector<char> block(1 << 20);
    for (int64_t at = 0; at < size; at += int64_t(block.size())) {
      const int64_t n = std::min<int64_t>(int64_t(block.size()), size - at);
      fill_pattern(block.data(), at, n, seed);
      cr_assert_eq(pwrite(fd, block.data(), size_t(n), at), n);
    }
    cr_assert_eq(fdatasync(fd), 0);
    drop_cache(fd, 0, size);
    close(fd);
    fd_ = open(path.c_str(), flags | O_CLOEXEC);
    unlink(path.c_str());
    cr_assert(fd_ >= 0, "open: %s", std::strerror(errno));
  }
  // Drops the file's clean pages in [offset, offset + n) from the page cache.
  static void drop_cache(int fd, int64_t offset, int64_t n) {
    cr_assert_eq(posix_fadvise(fd, offset, n, POSIX_FADV_DONTNEED), 0);
  }
  ~TestFile() { close(fd_); }
  int fd() const { return fd_; }
  uint32_t seed() const { return seed_; }
  FileRegion region(int64_t offset, int64_t length, bool writable = true) const {
    return FileRegion{fd_, offset, length, writable, true};
  }
  // Whether this file system takes O_DIRECT, and the file offset alignment
  // it asks of it (4096 where statx does not say).
  bool direct_supported() const {
    const int fd = open(("/proc/self/fd/" + std::to_string(fd_)).c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) return false;
    close(fd);
    return true;
  }
  int64_t direct_align() const {
    struct statx sx;
    if (statx(fd_, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
        sx.stx_dio_offset_align != 0) {
      return sx.stx_dio_offset_align;
    }
    return 4096;
  }

 private:
  int fd_ = -1;
  uint32_t seed_;
};

// Page-aligned host memory.
struct HostBuffer {
  explicit HostBuffer(int64_t n) : bytes(static_cast<char *>(std::aligned_alloc(4096, size_t((n + 4095) / 4096 * 4096 + 4096)))) {
    cr_assert(bytes != nullptr);
  }
  ~HostBuffer() { std::free(bytes); }
  char *bytes;
};

// Holds the first n bytes of a file in the page cache while it lives.  The
// machine may reclaim clean pages at any moment, with no memory pressure, so
// pages merely read could be gone before the engine looks: these are mapped
// and locked.  MADV_RANDOM keeps the faults from reading ahead past n.  The
// lock is the system call itself: ASan's mlock does nothing.
class CachedRange {
 public:
  CachedRange(int fd, int64_t n) : n_(size_t(n)) {
    mapped_ = mmap(nullptr, n_, PROT_READ, MAP_SHARED, fd, 0);
    cr_assert(mapped_ != MAP_FAILED, "mmap: %s", std::strerror(errno));
    cr_assert_eq(madvise(mapped_, n_, MADV_RANDOM), 0, "madvise: %s", std::strerror(errno));
    cr_assert_eq(syscall(SYS_mlock, mapped_, n_), 0, "mlock of %zu bytes (RLIMIT_MEMLOCK too small?): %s", n_,
                 std::strerror(errno));
  }
  ~CachedRange() { munmap(mapped_, n_); }
  CachedRange(const CachedRange &) = delete;
  CachedRange &operator=(const CachedRange &) = delete;

 private:
  size_t n_;
  void *mapped_;
};

Stats delta(const Stats &before, const Stats &after) {
  return Stats{after.direct_bytes - before.direct_bytes,   after.buffered_bytes - before.buffered_bytes,
               after.cached_bytes - before.cached_bytes,   after.fixed_bytes - before.fixed_bytes,
               after.requests - before.requests,           after.retries - before.retries,
               after.direct_refusals - before.direct_refusals};
}

std::optional<IoError> io_error_of(const std::function<void()> &call) {
  try {
    call();
  } catch (const IoError &e) {
    return e;
  }
  return std::nullopt;
}

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
int64_t align_down(int64_t v, int64_t a) { return v / a * a; }

// Reads [offset, offset + n) of f into memory at the same offset within a
// page as the file offset (so the aligned middle is aligned in memory too),
// checks the bytes and returns what moved which way.
Stats read_and_check(UringEngine &engine, const TestFile &f, int64_t offset, int64_t n) {
  HostBuffer buffer(n + 4096);
  char *dst = buffer.bytes + offset % 4096;
  const Stats before = engine.stats();
  cr_assert_eq(engine.read(f.region(0, 1ll << 40), offset, dst, n), n);
  const int64_t bad = first_mismatch(dst, offset, n, f.seed());
  cr_assert_eq(bad, -1, "read at %lld: byte %lld differs", (long long)offset, (long long)bad);
  return delta(before, engine.stats());
}

}  // namespace

Test(io_engine, read_aligned_range_goes_direct) { /* COPY-04 */
  TestFile f(8 << 20);
  UringEngine engine;
  const Stats moved = read_and_check(engine, f, 1 << 20, 5 << 20);
  if (f.direct_supported()) {
    cr_assert_eq(moved.direct_bytes, 5 << 20);
    cr_assert_eq(moved.buffered_bytes, 0);
  } else {
    cr_assert_eq(moved.direct_bytes, 0);
    cr_assert_eq(moved.buffered_bytes, 5 << 20);
  }
  cr_assert_geq(moved.requests, 5, "5 MiB in chunks of at most 1 MiB");
}

Test(io_engine, read_unaligned_range_splits_head_and_tail) { /* COPY-04 */
  TestFile f(8 << 20);
  UringEngine engine;
  const int64_t offset = 1000, n = (3 << 20) + 123;
  const Stats moved = read_and_check(engine, f, offset, n);
  if (!f.direct_supported()) {
    cr_assert_eq(moved.buffered_bytes, n);
    return;
  }
  const int64_t a = f.direct_align();
  const int64_t middle = align_down(offset + n, a) - align_up(offset, a);
  cr_assert_eq(moved.direct_bytes, middle, "the aligned middle goes direct");
  cr_assert_eq(moved.buffered_bytes, n - middle, "the head and tail go through the page cache");
}

Test(io_engine, bytes_in_the_page_cache_are_read_from_it) { /* COPY-04 */
  TestFile f(8 << 20);
  if (!f.direct_supported()) return;  // every byte goes through the cache there, as the tests above assert
  const CachedRange cached(f.fd(), 6 << 20);
  UringEngine engine;
  // All cached.
  const Stats warm_read = read_and_check(engine, f, 1 << 20, 4 << 20);
  cr_assert_eq(warm_read.cached_bytes, 4 << 20);
  cr_assert_eq(warm_read.direct_bytes, 0);
  // The first 6 MiB are cached, the last 2 are not.
  const Stats moved = read_and_check(engine, f, 4 << 20, 4 << 20);
  cr_assert_eq(moved.cached_bytes, 2 << 20, "the cached half from the cache");
  cr_assert_eq(moved.buffered_bytes, 2 << 20);
  cr_assert_eq(moved.direct_bytes, 2 << 20, "the rest direct");
  // Without cached_first, direct all the same.
  UringEngine::Options options;
  options.cached_first = false;
  UringEngine direct_only(options);
  const Stats direct = read_and_check(direct_only, f, 0, 4 << 20);
  cr_assert_eq(direct.direct_bytes, 4 << 20);
  cr_assert_eq(direct.cached_bytes, 0);
}

Test(io_engine, unaligned_memory_or_direct_refused_uses_page_cache) { /* COPY-04 */
  TestFile f(4 << 20);
  UringEngine engine;
  HostBuffer buffer(4 << 20);
  // Memory one byte off any alignment O_DIRECT takes.
  Stats before = engine.stats();
  cr_assert_eq(engine.read(f.region(0, 4 << 20), 0, buffer.bytes + 1, 2 << 20), 2 << 20);
  cr_assert_eq(first_mismatch(buffer.bytes + 1, 0, 2 << 20, f.seed()), -1);
  Stats moved = delta(before, engine.stats());
  cr_assert_eq(moved.direct_bytes, 0);
  cr_assert_eq(moved.buffered_bytes, 2 << 20);
  // A region that forbids O_DIRECT.
  FileRegion no_direct = f.region(0, 4 << 20);
  no_direct.direct_ok = false;
  before = engine.stats();
  cr_assert_eq(engine.read(no_direct, 1 << 20, buffer.bytes, 2 << 20), 2 << 20);
  cr_assert_eq(first_mismatch(buffer.bytes, 1 << 20, 2 << 20, f.seed()), -1);
  moved = delta(before, engine.stats());
  cr_assert_eq(moved.direct_bytes, 0);
  cr_assert_eq(moved.buffered_bytes, 2 << 20);
}

Test(io_engine, region_offsets_are_relative_and_bounded) {
  TestFile f(1 << 20);
  UringEngine engine;
  const FileRegion region = f.region(12345, 100000);
  std::vector<char> dst(5000);
  cr_assert_eq(engine.read(region, 777, dst.data(), 5000), 5000);
  cr_assert_eq(first_mismatch(dst.data(), 12345 + 777, 5000, f.seed()), -1);
  cr_assert_eq(engine.read(region, 0, dst.data(), 0), 0);
  auto refused = [&](int64_t offset, int64_t n) {
    try {
      engine.read(region, offset, dst.data(), n);
    } catch (const std::invalid_argument &) {
      return true;
    }
    return false;
  };
  cr_assert(refused(100000 - 10, 11), "past the region's end");
  cr_assert(refused(-1, 1));
  cr_assert(refused(0, -1));
  cr_assert(!refused(100000 - 10, 10));
}

Test(io_engine, read_rows_places_each_row_and_leaves_gaps) {
  TestFile f(2 << 20);
  UringEngine engine;
  const int64_t rows = 64, width = 3000, file_pitch = 5000, dst_pitch = 4000, offset = 333;
  std::vector<char> dst(size_t(rows * dst_pitch), char(0x5a));
  const Stats before = engine.stats();
  cr_assert_eq(engine.read_rows(f.region(0, 2 << 20), offset, file_pitch, dst.data(), dst_pitch, width, rows),
               rows * width);
  for (int64_t r = 0; r < rows; ++r) {
    const char *row = dst.data() + r * dst_pitch;
    cr_assert_eq(first_mismatch(row, offset + r * file_pitch, width, f.seed()), -1, "row %lld", (long long)r);
    for (int64_t i = width; i < dst_pitch; ++i) cr_assert_eq(row[i], char(0x5a), "gap after row %lld", (long long)r);
  }
  cr_assert_geq(delta(before, engine.stats()).requests, rows, "one request per row at least");
}

Test(io_engine, write_rows_then_read_back) {
  TestFile f(1 << 20);
  UringEngine engine;
  const int64_t rows = 40, width = 4096, file_pitch = 8192, src_pitch = 5000;
  std::vector<char> src(size_t(rows * src_pitch));
  for (int64_t r = 0; r < rows; ++r) fill_pattern(src.data() + r * src_pitch, r * width, width, 99);
  cr_assert_eq(engine.write_rows(f.region(0, 1 << 20), 4096, file_pitch, src.data(), src_pitch, width, rows),
               rows * width);
  std::vector<char> file(1 << 20);
  cr_assert_eq(pread(f.fd(), file.data(), file.size(), 0), 1 << 20);
  for (int64_t r = 0; r < rows; ++r) {
    const char *row = file.data() + 4096 + r * file_pitch;
    cr_assert_eq(first_mismatch(row, r * width, width, 99), -1, "row %lld", (long long)r);
    cr_assert_eq(first_mismatch(row + width, 4096 + r * file_pitch + width, file_pitch - width, f.seed()), -1,
                 "the gap after row %lld is untouched", (long long)r);
  }
}

Test(io_engine, write_then_read_back_through_both_paths) { /* COPY-04 */
  TestFile f(8 << 20);
  UringEngine engine;
  const int64_t offset = 777, n = (5 << 20) + 3;
  HostBuffer src(n + 4096);
  char *from = src.bytes + offset % 4096;
  fill_pattern(from, 0, n, 7);
  const Stats before = engine.stats();
  cr_assert_eq(engine.write(f.region(0, 8 << 20), offset, from, n), n);
  const Stats moved = delta(before, engine.stats());
  cr_assert_eq(moved.direct_bytes + moved.buffered_bytes, n);
  if (f.direct_supported()) {
    cr_assert_gt(moved.direct_bytes, 0, "the aligned middle goes direct");
    cr_assert_gt(moved.buffered_bytes, 0, "the unaligned ends go through the page cache");
  }
  // Read back independently of the engine, the bytes around included.
  std::vector<char> file(8 << 20);
  cr_assert_eq(pread(f.fd(), file.data(), file.size(), 0), 8 << 20);
  cr_assert_eq(first_mismatch(file.data(), 0, offset, f.seed()), -1);
  cr_assert_eq(first_mismatch(file.data() + offset, 0, n, 7), -1);
  cr_assert_eq(first_mismatch(file.data() + offset + n, offset + n, (8 << 20) - offset - n, f.seed()), -1);
  // And through the engine.
  HostBuffer back(n + 4096);
  cr_assert_eq(engine.read(f.region(0, 8 << 20), offset, back.bytes + offset % 4096, n), n);
  cr_assert_eq(first_mismatch(back.bytes + offset % 4096, 0, n, 7), -1);
}

Test(io_engine, write_extends_a_file) {
  TestFile f(0);
  UringEngine engine;
  HostBuffer src(3 << 20);
  fill_pattern(src.bytes, 0, (3 << 20) - 5, 3);
  cr_assert_eq(engine.write(f.region(0, 4 << 20), 0, src.bytes, (3 << 20) - 5), (3 << 20) - 5);
  struct stat st;
  cr_assert_eq(fstat(f.fd(), &st), 0);
  cr_assert_eq(st.st_size, (3 << 20) - 5);
  std::vector<char> file((3 << 20) - 5);
  cr_assert_eq(pread(f.fd(), file.data(), file.size(), 0), int64_t(file.size()));
  cr_assert_eq(first_mismatch(file.data(), 0, int64_t(file.size()), 3), -1);
}

Test(io_engine, read_only_region_refuses_writes) {
  TestFile f(1 << 20);
  UringEngine engine;
  std::vector<char> src(4096, 'x');
  const FileRegion read_only = f.region(0, 1 << 20, false);
  const auto error = io_error_of([&] { engine.write(read_only, 0, src.data(), 4096); });
  cr_assert(error.has_value());
  cr_assert_eq(error->errno_value, EBADF);
  cr_assert_eq(error->bytes_done, 0);
  const auto staged = io_error_of([&] { engine.write_staged(read_only, 0, 4096, [](void *, int64_t, int64_t) {}); });
  cr_assert(staged.has_value());
  cr_assert_eq(staged->errno_value, EBADF);
  std::vector<char> file(4096);
  cr_assert_eq(pread(f.fd(), file.data(), 4096, 0), 4096);
  cr_assert_eq(first_mismatch(file.data(), 0, 4096, f.seed()), -1, "the file is unchanged");
}

Test(io_engine, file_truncated_before_the_read) { /* COPY-08, ERR-21 */
  TestFile f(4 << 20);
  UringEngine engine;
  const int64_t kept = (1 << 20) + 100;
  cr_assert_eq(ftruncate(f.fd(), kept), 0);
  HostBuffer dst(4 << 20);
  for (int64_t offset : {int64_t(0), int64_t(512 << 10), int64_t(4099)}) {
    std::memset(dst.bytes, 0, 4 << 20);
    const auto error = io_error_of([&] { engine.read(f.region(0, 4 << 20), offset, dst.bytes, (4 << 20) - offset); });
    cr_assert(error.has_value(), "a read past the end fails");
    cr_assert_eq(error->errno_value, 0, "the file ended (errno 0), not %d", error->errno_value);
    cr_assert_eq(error->bytes_done, kept - offset, "the bytes that existed, from offset %lld", (long long)offset);
    cr_assert_eq(first_mismatch(dst.bytes, offset, kept - offset, f.seed()), -1, "and they are in place");
  }
  // The engine serves later calls.
  std::vector<char> tail(100);
  cr_assert_eq(engine.read(f.region(0, 4 << 20), 1 << 20, tail.data(), 100), 100);
  cr_assert_eq(first_mismatch(tail.data(), 1 << 20, 100, f.seed()), -1);
}

// Reads a large file while another thread truncates it at a random point:
// the read returns every byte or throws IoError, and the bytes it reports
// done are the file's.
static void read_while_truncating(bool direct_ok) {
  const int64_t size = 64 << 20;
  HostBuffer dst(size);
  std::mt19937 rng{direct_ok ? 1u : 2u};
  int failures = 0;
  for (int round = 0; round < 6; ++round) {
    TestFile f(size, uint32_t(round + 10));
    UringEngine engine;
    FileRegion region = f.region(0, size);
    region.direct_ok = direct_ok;
    const int64_t cut = int64_t(rng() % uint32_t(size));
    const auto delay = std::chrono::microseconds(rng() % 20000);
    std::atomic<int> truncated{-1};
    std::thread truncator([&] {
      std::this_thread::sleep_for(delay);
      truncated = ftruncate(f.fd(), cut);
    });
    int64_t done = size;
    const auto error = io_error_of([&] { cr_assert_eq(engine.read(region, 0, dst.bytes, size), size); });
    truncator.join();
    cr_assert_eq(truncated.load(), 0);
    if (error) {
      ++failures;
      done = error->bytes_done;
      cr_assert_eq(error->errno_value, 0, "the file ended (errno 0), not %d", error->errno_value);
      cr_assert(done >= cut && done < size, "done %lld, cut at %lld: %s", (long long)done, (long long)cut, error->what());
    }
    cr_assert_eq(first_mismatch(dst.bytes, 0, done, f.seed()), -1);
  }
  cr_log_info("%d of 6 reads met the truncation", failures);
}

Test(io_engine, file_truncated_during_a_direct_read, .timeout = 120) { /* COPY-07, COPY-08 */
  read_while_truncating(true);
}

Test(io_engine, file_truncated_during_a_buffered_read, .timeout = 120) { /* COPY-07, COPY-08 */
  read_while_truncating(false);
}

// Options with small chunks so that a few MiB make many of them.
static UringEngine::Options small_chunks() {
  UringEngine::Options options;
  options.chunk_bytes = 64 << 10;
  options.queue_depth = 8;
  options.staging_buffers = 4;
  return options;
}

Test(io_engine, staged_read_hands_every_chunk_in_order) {
  TestFile f(4 << 20);
  UringEngine engine(small_chunks());
  const int64_t offset = 100, n = (1 << 20) + 333;
  int64_t expected_offset = 0;
  int chunks = 0;
  const Stats before = engine.stats();
  const int64_t got = engine.read_staged(f.region(0, 4 << 20), offset, n, [&](const void *p, int64_t bytes, int64_t at) {
    cr_assert_eq(at, expected_offset, "chunks come in order, back to back");
    cr_assert(bytes > 0 && bytes <= 64 << 10, "a chunk of %lld bytes", (long long)bytes);
    cr_assert_eq(first_mismatch(static_cast<const char *>(p), offset + at, bytes, f.seed()), -1);
    expected_offset += bytes;
    ++chunks;
  });
  cr_assert_eq(got, n);
  cr_assert_eq(expected_offset, n);
  cr_assert_geq(chunks, 17);
  const Stats moved = delta(before, engine.stats());
  cr_assert_eq(moved.fixed_bytes, n, "through the registered staging buffers");
  if (f.direct_supported()) cr_assert_gt(moved.direct_bytes, 0);
}

Test(io_engine, staged_write_takes_every_chunk_in_order) {
  TestFile f(4 << 20);
  UringEngine engine(small_chunks());
  const int64_t offset = (1 << 20) + 17, n = (2 << 20) + 1000;
  int64_t expected_offset = 0;
  const int64_t put = engine.write_staged(f.region(0, 4 << 20), offset, n, [&](void *p, int64_t bytes, int64_t at) {
    cr_assert_eq(at, expected_offset);
    cr_assert(bytes > 0 && bytes <= 64 << 10);
    fill_pattern(static_cast<char *>(p), at, bytes, 55);
    expected_offset += bytes;
  });
  cr_assert_eq(put, n);
  std::vector<char> file(4 << 20);
  cr_assert_eq(pread(f.fd(), file.data(), file.size(), 0), 4 << 20);
  cr_assert_eq(first_mismatch(file.data(), 0, offset, f.seed()), -1);
  cr_assert_eq(first_mismatch(file.data() + offset, 0, n, 55), -1);
  cr_assert_eq(first_mismatch(file.data() + offset + n, offset + n, (4 << 20) - offset - n, f.seed()), -1);
}

Test(io_engine, staged_read_of_a_short_file_consumes_what_exists) { /* COPY-08 */
  TestFile f(1 << 20);
  UringEngine engine(small_chunks());
  const int64_t kept = (300 << 10) + 5;
  cr_assert_eq(ftruncate(f.fd(), kept), 0);
  int64_t consumed = 0;
  const auto error = io_error_of([&] {
    engine.read_staged(f.region(0, 1 << 20), 0, 1 << 20, [&](const void *p, int64_t bytes, int64_t at) {
      cr_assert_eq(at, consumed);
      cr_assert_eq(first_mismatch(static_cast<const char *>(p), at, bytes, f.seed()), -1);
      consumed += bytes;
    });
  });
  cr_assert(error.has_value());
  cr_assert_eq(error->errno_value, 0);
  cr_assert_eq(error->bytes_done, kept);
  cr_assert_eq(consumed, kept, "every byte that existed reached the consumer");
}

Test(io_engine, a_throwing_consumer_ends_the_call_and_the_engine_goes_on) {
  TestFile f(2 << 20);
  UringEngine engine(small_chunks());
  int calls = 0;
  try {
    engine.read_staged(f.region(0, 2 << 20), 0, 2 << 20, [&](const void *, int64_t, int64_t) {
      if (++calls == 3) throw std::runtime_error("consumer");
    });
    cr_assert_fail("the consumer's exception passes through");
  } catch (const std::runtime_error &e) {
    cr_assert_str_eq(e.what(), "consumer");
  }
  cr_assert_eq(calls, 3, "no chunk after the throw");
  int64_t total = 0;
  cr_assert_eq(engine.read_staged(f.region(0, 2 << 20), 0, 2 << 20, [&](const void *, int64_t b, int64_t) { total += b; }),
               2 << 20);
  cr_assert_eq(total, 2 << 20);
}

Test(io_engine, four_threads_share_one_engine) {
  TestFile f(16 << 20);
  UringEngine::Options options;
  options.rings = 2;  // fewer rings than threads: calls wait for one
  options.chunk_bytes = 256 << 10;
  UringEngine engine(options);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng{uint32_t(t)};
      HostBuffer dst(2 << 20);
      for (int i = 0; i < 20; ++i) {
        const int64_t n = 1 + int64_t(rng() % (2 << 20));
        const int64_t offset = int64_t(rng() % uint32_t((16 << 20) - n));
        try {
          if (t % 2 == 0) {
            engine.read(f.region(0, 16 << 20), offset, dst.bytes, n);
            if (first_mismatch(dst.bytes, offset, n, f.seed()) != -1) ++bad;
          } else {
            engine.read_staged(f.region(0, 16 << 20), offset, n, [&](const void *p, int64_t b, int64_t at) {
              if (first_mismatch(static_cast<const char *>(p), offset + at, b, f.seed()) != -1) ++bad;
            });
          }
        } catch (const std::exception &) {
          ++bad;
        }
      }
    });
  }
  for (auto &thread : threads) thread.join();
  cr_assert_eq(bad.load(), 0);
}

Test(io_engine, small_chunks_and_depth_run_many_requests) {
  TestFile f(2 << 20);
  UringEngine::Options options;
  options.chunk_bytes = 4096;
  options.queue_depth = 3;
  options.cached_first = false;  // one request per chunk, no probe of the cache
  UringEngine engine(options);
  const Stats moved = read_and_check(engine, f, 0, 1 << 20);
  cr_assert_eq(moved.requests, 256);
  cr_assert_eq(moved.retries, 0);
}

Test(io_engine, synchronous_fallback_moves_the_same_bytes) { /* COPY-08 */
  TestFile f(4 << 20);
  UringEngine::Options options = small_chunks();
  options.use_io_uring = false;
  UringEngine engine(options);
  read_and_check(engine, f, 1000, 3 << 20);
  HostBuffer src(1 << 20);
  fill_pattern(src.bytes, 0, 1 << 20, 5);
  cr_assert_eq(engine.write(f.region(0, 4 << 20), 4096, src.bytes, 1 << 20), 1 << 20);
  int64_t consumed = 0;
  engine.read_staged(f.region(0, 4 << 20), 4096, 1 << 20, [&](const void *p, int64_t b, int64_t at) {
    cr_assert_eq(first_mismatch(static_cast<const char *>(p), at, b, 5), -1);
    consumed += b;
  });
  cr_assert_eq(consumed, 1 << 20);
  cr_assert_eq(ftruncate(f.fd(), 5000), 0);
  std::vector<char> dst(8192);
  const auto error = io_error_of([&] { engine.read(f.region(0, 4 << 20), 0, dst.data(), 8192); });
  cr_assert(error.has_value());
  cr_assert_eq(error->errno_value, 0);
  cr_assert_eq(error->bytes_done, 5000);
}

Test(io_engine, a_reused_descriptor_number_reads_the_new_file) {
  UringEngine engine;
  auto first = std::make_unique<TestFile>(1 << 20, 21);
  const int number = first->fd();
  HostBuffer aligned(1 << 20);
  cr_assert_eq(engine.read(first->region(0, 1 << 20), 0, aligned.bytes, 1 << 20), 1 << 20);
  cr_assert_eq(first_mismatch(aligned.bytes, 0, 1 << 20, 21), -1);
  first.reset();  // closes the descriptor; the engine was not told
  TestFile second(1 << 20, 22);
  cr_assert_eq(second.fd(), number, "the lowest free number comes back");
  cr_assert_eq(engine.read(second.region(0, 1 << 20), 0, aligned.bytes, 1 << 20), 1 << 20);
  cr_assert_eq(first_mismatch(aligned.bytes, 0, 1 << 20, 22), -1, "the new file's bytes, not the old one's");
  engine.forget(second.fd());
  cr_assert_eq(engine.read(second.region(0, 1 << 20), 4096, aligned.bytes, 4096), 4096);
}

// A child of fork reads through the engine while its parent does: each on
// rings of its own (STOP-27: the io device lives on in the child).
Test(io_engine, a_child_of_fork_and_its_parent_both_read) { /* STOP-27 */
  TestFile f(8 << 20);
  UringEngine engine;
  read_and_check(engine, f, 0, 8 << 20);  // the parent's ring exists and is idle
  const pid_t child = fork();
  cr_assert(child >= 0);
  auto read_rounds = [&](int rounds) {
    HostBuffer dst(8 << 20);
    for (int i = 0; i < rounds; ++i) {
      if (engine.read(f.region(0, 8 << 20), 4096 * i, dst.bytes, 4 << 20) != 4 << 20) return false;
      if (first_mismatch(dst.bytes, 4096 * i, 4 << 20, f.seed()) != -1) return false;
    }
    return true;
  };
  if (child == 0) _exit(read_rounds(40) ? 0 : 1);
  const bool parent_ok = read_rounds(40);
  int status = 0;
  cr_assert_eq(waitpid(child, &status, 0), child);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's reads failed (status %#x)", status);
  cr_assert(parent_ok, "the parent's reads failed");
}

Test(io_engine, options_are_checked) {
  auto refused = [](UringEngine::Options options) {
    try {
      UringEngine engine(options);
    } catch (const std::invalid_argument &) {
      return true;
    }
    return false;
  };
  UringEngine::Options options;
  options.chunk_bytes = 5000;
  cr_assert(refused(options), "chunks of whole pages");
  options = {};
  options.queue_depth = 0;
  cr_assert(refused(options));
  options = {};
  options.staging_buffers = 0;
  cr_assert(refused(options));
  cr_assert(!refused(UringEngine::Options{}));
}

namespace {

// Fresh anonymous memory of n bytes (a multiple of 2 MiB) starting on a
// huge page, none of it touched yet.
struct NewMemory {
  explicit NewMemory(size_t n) : n(n) {
    raw = mmap(nullptr, n + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(raw != MAP_FAILED, "mmap: %s", std::strerror(errno));
    bytes = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) / kHuge * kHuge);
  }
  ~NewMemory() { munmap(raw, n + kHuge); }
  // The pages of [at, at + len) that are resident.
  size_t resident_pages(size_t at, size_t len) const {
    std::vector<unsigned char> v(len / 4096);
    cr_assert_eq(mincore(bytes + at, len, v.data()), 0, "mincore: %s", std::strerror(errno));
    return size_t(std::count_if(v.begin(), v.end(), [](unsigned char r) { return (r & 1) != 0; }));
  }
  // AnonHugePages of the mapping that holds bytes, in kB (/proc/self/smaps).
  long huge_kb() const {
    FILE *smaps = std::fopen("/proc/self/smaps", "r");
    cr_assert(smaps != nullptr);
    char line[512];
    bool inside = false;
    long kb = 0;
    const auto at = reinterpret_cast<uintptr_t>(bytes);
    while (std::fgets(line, sizeof line, smaps)) {
      unsigned long start, end;
      if (std::sscanf(line, "%lx-%lx ", &start, &end) == 2) inside = start <= at && at < end;
      long value;
      if (inside && std::sscanf(line, "AnonHugePages: %ld kB", &value) == 1) kb += value;
    }
    std::fclose(smaps);
    return kb;
  }
  static constexpr size_t kHuge = size_t{2} << 20;
  size_t n;
  void *raw;
  char *bytes;
};

// Whether the system gives transparent huge pages to memory that asks.
bool huge_pages_on_request() {
  FILE *f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return false;
  char text[128] = {};
  const bool read = std::fgets(text, sizeof text, f) != nullptr;
  std::fclose(f);
  return read && std::strstr(text, "[never]") == nullptr;
}

}  // namespace

// A read from the disk into new memory asks for huge pages on it (page
// faults of 2 MiB, a few long O_DIRECT segments), populated ahead.
Test(io_engine, a_cold_read_into_new_memory_takes_huge_pages) { /* COPY-04 */
  if (!huge_pages_on_request()) cr_skip_test("the system gives no transparent huge pages");
  const int64_t n = 32 << 20;
  TestFile f(n);
  if (!f.direct_supported()) cr_skip_test("the file system refuses O_DIRECT: reads go through the page cache");
  NewMemory dst(size_t(n) + NewMemory::kHuge);
  UringEngine engine;
  cr_assert_eq(engine.read(f.region(0, n), 0, dst.bytes, n), n);
  cr_assert_eq(first_mismatch(dst.bytes, 0, n, f.seed()), -1);
  cr_assert_gt(dst.huge_kb(), 0, "no huge page under a cold read of 32 MiB into new memory");
}

// The pages populated ahead are the destination's: memory past it stays
// untouched, and a read into part of a mapping leaves the rest alone.
Test(io_engine, pages_populated_ahead_stay_within_the_destination) { /* COPY-04 */
  const int64_t n = 24 << 20;
  TestFile f(n);
  NewMemory dst(64 << 20);
  UringEngine engine;
  const size_t at = 4 << 20;
  cr_assert_eq(engine.read(f.region(0, n), 0, dst.bytes + at, n), n);
  cr_assert_eq(first_mismatch(dst.bytes + at, 0, n, f.seed()), -1);
  cr_assert_eq(dst.resident_pages(0, at), 0, "pages before the destination were touched");
  cr_assert_eq(dst.resident_pages(at + size_t(n), (64 << 20) - at - size_t(n)), 0,
               "pages after the destination were touched");
  cr_assert_eq(dst.resident_pages(at, size_t(n)), size_t(n) / 4096);
}

namespace {

// The voluntary context switches of the calling thread so far.
long voluntary_switches() {
  rusage usage{};
  cr_assert_eq(getrusage(RUSAGE_THREAD, &usage), 0);
  return usage.ru_nvcsw;
}

}  // namespace

// A read into new shared memory (a memfd's pages, as a process connected to
// rigd makes its large host buffers), said to be shared, stays behind the
// pages populated ahead of it.  Had it overtaken them where it reads
// faster than they are populated (from the page cache), the reading
// thread and the populator would fault the same pages and queue on each
// page's lock: 319 to 741 sleeps of the reading thread here, where held
// behind it slept 11 to 60 times (once per window it waited for, and the
// kernel's own), and 34 to 69 under ASan on a loaded machine.
Test(io_engine, a_read_into_new_shared_memory_stays_behind_its_populated_pages) { /* COPY-04 */
#if defined(__SANITIZE_ADDRESS__)
  // The count would mean nothing: ASan's allocator maps memory on the
  // reading thread, which then sleeps while the populator holds the address
  // space (1400 to 2100 such sleeps beside other suites).
  cr_skip_test("ASan's allocator sleeps on the address space the populator holds");
#endif
  const int64_t n = 64 << 20;
  TestFile f(n);  // out of the page cache: read from the disk, O_DIRECT
  const int fd = memfd_create("rig-test-shared", MFD_CLOEXEC);
  cr_assert(fd >= 0 && ftruncate(fd, n) == 0, "memfd: %s", std::strerror(errno));
  void *mapped = mmap(nullptr, size_t(n), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  cr_assert(mapped != MAP_FAILED, "mmap: %s", std::strerror(errno));
  UringEngine engine;
  const long before = voluntary_switches();
  cr_assert_eq(engine.read(f.region(0, n), 0, mapped, n, true), n);
  const long slept = voluntary_switches() - before;
  cr_assert_eq(first_mismatch(static_cast<char *>(mapped), 0, n, f.seed()), -1);
  cr_expect_lt(slept, 160, "%ld sleeps reading %ld pages into new shared memory", slept, long(n / 4096));
  munmap(mapped, size_t(n));
  close(fd);
}

// The pages below the populator's mark are there: a read that waits for
// the mark writes into populated pages only.  The mark ends past the
// range once the populator is done.
Test(io_engine, pages_below_the_populated_mark_are_resident) { /* COPY-04 */
  const size_t n = 64 << 20;
  NewMemory dst(n);
  {
    PagePopulator ahead(dst.bytes, int64_t(n), false);
    const size_t half = n / 2;
    ahead.wait_until(dst.bytes + half);
    cr_assert(ahead.ready(dst.bytes + half));
    cr_assert_eq(dst.resident_pages(0, half), half / 4096, "pages below the mark are missing");
    ahead.wait_until(dst.bytes + n);
    cr_assert_eq(dst.resident_pages(0, n), n / 4096);
  }
  // Under its least size it populates nothing and holds no read back.
  NewMemory small(4 << 20);
  PagePopulator none(small.bytes, 4 << 20, false);
  cr_assert(none.ready(small.bytes + (4 << 20)));
  cr_assert_eq(small.resident_pages(0, 4 << 20), 0);
}
