/* Reading a file into host memory through the io devices' file engine
 * (io/uring_file.hpp), beside two readers written here, in the same run:
 *   engine   UringEngine::read with its default options;
 *   staged   UringEngine::read_staged, each chunk copied out by the consumer
 *            (the path a GPU copy takes);
 *   uring    a plain liburing O_DIRECT reader: depth 32, 1 MiB blocks, read
 *            with read_fixed straight into the destination, registered;
 *   pread    a loop of 1 MiB preads through the page cache.
 * Cold runs first drop the file from the page cache (posix_fadvise
 * DONTNEED, and writing 3 to /proc/sys/vm/drop_caches where permitted);
 * warm runs first read the whole file through the page cache.  Prints
 * `file_read_cold: V GB/s` (likewise the others), `ratio file_read_cold: X`
 * and `ratio file_read_warm: X` (engine over uring) and
 * `ratio file_read_vs_pread_cold: X` (engine over pread).
 *
 * Usage: bench_file_read [--file PATH] [--size N[K|M|G]] [--runs N] [--sweep]
 * The file (default /var/tmp/rig_bench_file_read.bin, 1G) is created once
 * and kept for later runs; --remove deletes it at the end.  --sweep also
 * times cold engine reads for chunks of 256K, 1M and 4M at depths 8, 32
 * and 64, which chose the engine's defaults. */
#include "uring_file.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int64_t kBlock = 1 << 20;  // the plain readers' request size
constexpr unsigned kPlainDepth = 32;

[[noreturn]] void die(const std::string &why) {
  std::fprintf(stderr, "bench_file_read: %s\n", why.c_str());
  std::exit(1);
}

double now_s() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

int64_t parse_size(const char *s) {
  char *end = nullptr;
  long long n = std::strtoll(s, &end, 10);
  switch (*end) {
    case 'G': n <<= 10; [[fallthrough]];
    case 'M': n <<= 10; [[fallthrough]];
    case 'K': n <<= 10; ++end; break;
    default: break;
  }
  if (*end != '\0' || n <= 0) die(std::string("not a size: ") + s);
  return n;
}

// Makes path a file of size bytes unless it is one already.
void ensure_file(const std::string &path, int64_t size) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && st.st_size == size) return;
  std::printf("creating %s (%lld bytes)\n", path.c_str(), static_cast<long long>(size));
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die(path + ": " + std::strerror(errno));
  std::vector<uint64_t> block(kBlock / 8);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int64_t at = 0; at < size; at += kBlock) {
    for (uint64_t &word : block) word = (x = x * 6364136223846793005ull + 1442695040888963407ull);
    const size_t n = size_t(std::min<int64_t>(kBlock, size - at));
    if (pwrite(fd, block.data(), n, at) != ssize_t(n)) die("writing the file failed");
  }
  if (fsync(fd) != 0) die("fsync failed");
  close(fd);
}

bool drop_caches_allowed = true;

void make_cold(int fd) {
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  if (!drop_caches_allowed) return;
  sync();
  const int proc = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  drop_caches_allowed = proc >= 0 && write(proc, "3", 1) == 1;
  if (proc >= 0) close(proc);
}

void pread_all(int fd, char *dst, int64_t size) {
  for (int64_t at = 0; at < size;) {
    const ssize_t n = pread(fd, dst + at, size_t(std::min<int64_t>(kBlock, size - at)), at);
    if (n <= 0) die("pread failed");
    at += n;
  }
}

// The plain reader: O_DIRECT, depth 32, 1 MiB blocks into the destination,
// which is registered as fixed buffers of up to 1 GiB each.
class PlainUring {
 public:
  PlainUring(const std::string &path, char *dst, int64_t size) : dst_(dst), size_(size) {
    fd_ = open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd_ < 0) die("O_DIRECT open: " + std::string(std::strerror(errno)) + " (a file system without O_DIRECT?)");
    if (io_uring_queue_init(kPlainDepth, &ring_, 0) != 0) die("io_uring_queue_init failed");
    std::vector<iovec> iovecs;
    for (int64_t at = 0; at < size; at += kRegistered) {
      iovecs.push_back({dst + at, size_t(std::min<int64_t>(kRegistered, size - at))});
    }
    fixed_ = io_uring_register_buffers(&ring_, iovecs.data(), unsigned(iovecs.size())) == 0;
    if (!fixed_) std::printf("note: the plain reader could not register its buffers; it reads without them\n");
  }
  ~PlainUring() {
    io_uring_queue_exit(&ring_);
    close(fd_);
  }

  void read_all() {
    int64_t next = 0, inflight = 0;
    while (next < size_ || inflight > 0) {
      while (next < size_ && inflight < kPlainDepth) {
        io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
        const unsigned n = unsigned(std::min<int64_t>(kBlock, size_ - next));
        if (fixed_) io_uring_prep_read_fixed(sqe, fd_, dst_ + next, n, uint64_t(next), int(next / kRegistered));
        else io_uring_prep_read(sqe, fd_, dst_ + next, n, uint64_t(next));
        io_uring_sqe_set_data64(sqe, uint64_t(next) << 21 | n);
        next += n;
        ++inflight;
      }
      io_uring_cqe *cqe;
      if (io_uring_submit_and_wait(&ring_, 1) < 0 || io_uring_wait_cqe(&ring_, &cqe) != 0) die("io_uring wait failed");
      const uint64_t tag = io_uring_cqe_get_data64(cqe);
      if (cqe->res != int(tag & ((1 << 21) - 1))) die("the plain reader got a short or failed read");
      io_uring_cqe_seen(&ring_, cqe);
      --inflight;
    }
  }

 private:
  static constexpr int64_t kRegistered = int64_t{1} << 30;
  io_uring ring_{};
  int fd_ = -1;
  char *dst_;
  int64_t size_;
  bool fixed_ = false;
};

// The best bandwidth of runs, in GB/s, each run after prepare.
double best_gbps(int runs, int64_t size, const std::function<void()> &prepare, const std::function<void()> &read) {
  double best = 0;
  for (int i = 0; i < runs; ++i) {
    prepare();
    const double start = now_s();
    read();
    best = std::max(best, double(size) / (now_s() - start) / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char **argv) {
  std::string path = "/var/tmp/rig_bench_file_read.bin";
  int64_t size = int64_t{1} << 30;
  int runs = 3;
  bool sweep = false, remove_file = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--file" && i + 1 < argc) path = argv[++i];
    else if (arg == "--size" && i + 1 < argc) size = parse_size(argv[++i]);
    else if (arg == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--sweep") sweep = true;
    else if (arg == "--remove") remove_file = true;
    else die("usage: bench_file_read [--file PATH] [--size N[K|M|G]] [--runs N] [--sweep] [--remove]");
  }
  if (size % 4096 != 0) die("the size must be a multiple of 4096");
  ensure_file(path, size);

  char *dst = static_cast<char *>(mmap(nullptr, size_t(size), PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0));
  if (dst == MAP_FAILED) die("no memory for the destination");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) die(path + ": " + std::strerror(errno));
  const rig::io::FileRegion region{fd, 0, size, false, true};

  rig::io::UringEngine engine;
  PlainUring plain(path, dst, size);
  const auto cold = [&] { make_cold(fd); };
  const auto warm = [&] { pread_all(fd, dst, size); };
  const auto engine_read = [&] { engine.read(region, 0, dst, size); };
  const auto staged_read = [&] {
    engine.read_staged(region, 0, size, [&](const void *p, int64_t n, int64_t at) { std::memcpy(dst + at, p, size_t(n)); });
  };
  const auto plain_read = [&] { plain.read_all(); };
  const auto pread_read = [&] { pread_all(fd, dst, size); };

  // Each figure's runs interleave with the others', so drift spreads evenly.
  double engine_cold = 0, staged_cold = 0, plain_cold = 0, pread_cold = 0;
  double engine_warm = 0, staged_warm = 0, plain_warm = 0, pread_warm = 0;
  for (int i = 0; i < runs; ++i) {
    engine_cold = std::max(engine_cold, best_gbps(1, size, cold, engine_read));
    plain_cold = std::max(plain_cold, best_gbps(1, size, cold, plain_read));
    staged_cold = std::max(staged_cold, best_gbps(1, size, cold, staged_read));
    pread_cold = std::max(pread_cold, best_gbps(1, size, cold, pread_read));
  }
  for (int i = 0; i < runs; ++i) {
    engine_warm = std::max(engine_warm, best_gbps(1, size, warm, engine_read));
    plain_warm = std::max(plain_warm, best_gbps(1, size, warm, plain_read));
    staged_warm = std::max(staged_warm, best_gbps(1, size, warm, staged_read));
    pread_warm = std::max(pread_warm, best_gbps(1, size, warm, pread_read));
  }
  const rig::io::Stats stats = engine.stats();
  std::printf("file: %s, %lld bytes, best of %d runs; drop_caches %s\n", path.c_str(),
              static_cast<long long>(size), runs, drop_caches_allowed ? "used" : "not permitted");
  std::printf("engine bytes: %lld direct, %lld buffered, %lld through staging\n",
              static_cast<long long>(stats.direct_bytes), static_cast<long long>(stats.buffered_bytes),
              static_cast<long long>(stats.fixed_bytes));
  std::printf("file_read_cold: %.2f GB/s\n", engine_cold);
  std::printf("file_read_staged_cold: %.2f GB/s\n", staged_cold);
  std::printf("plain_uring_cold: %.2f GB/s\n", plain_cold);
  std::printf("pread_cold: %.2f GB/s\n", pread_cold);
  std::printf("file_read_warm: %.2f GB/s\n", engine_warm);
  std::printf("file_read_staged_warm: %.2f GB/s\n", staged_warm);
  std::printf("plain_uring_warm: %.2f GB/s\n", plain_warm);
  std::printf("pread_warm: %.2f GB/s\n", pread_warm);
  std::printf("ratio file_read_cold: %.3f\n", engine_cold / plain_cold);
  std::printf("ratio file_read_warm: %.3f\n", engine_warm / plain_warm);
  std::printf("ratio file_read_vs_pread_cold: %.3f\n", engine_cold / pread_cold);
  std::printf("ratio file_read_staged_cold: %.3f\n", staged_cold / plain_cold);

  if (sweep) {
    for (size_t chunk : {size_t{256} << 10, size_t{1} << 20, size_t{4} << 20}) {
      for (uint32_t depth : {8u, 32u, 64u}) {
        rig::io::UringEngine::Options options;
        options.chunk_bytes = chunk;
        options.queue_depth = depth;
        options.staging_buffers = depth;  // so that the staged pipeline runs as deep
        rig::io::UringEngine tuned(options);
        const double gbps = best_gbps(runs, size, cold, [&] { tuned.read(region, 0, dst, size); });
        const double staged = best_gbps(runs, size, cold, [&] {
          tuned.read_staged(region, 0, size, [&](const void *p, int64_t n, int64_t at) { std::memcpy(dst + at, p, size_t(n)); });
        });
        std::printf("sweep chunk %zuK depth %u: read %.2f GB/s, staged %.2f GB/s\n", chunk >> 10, depth, gbps, staged);
      }
    }
  }
  close(fd);
  munmap(dst, size_t(size));
  if (remove_file) unlink(path.c_str());
  return 0;
}
