// The file engine under the DISK io device: reads and writes between files
// and host memory over io_uring (DESIGN.md, io devices; rig-buffer.txt,
// Copying).  Requests run several at a time, in chunks; O_DIRECT carries
// the parts whose file offset, length and memory address the file system
// accepts, and the page cache the rest.  A file that ends early makes a
// call throw IoError with the bytes that existed; nothing here maps a file,
// so a truncation never raises SIGBUS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace rig::io {

// A file or a range of one: the bytes [offset, offset + length) of fd.
// The engine never closes fd.  Offsets that the engine's calls take are
// relative to the region's start, and a call refuses bytes outside it.
struct FileRegion {
  int fd = -1;
  int64_t offset = 0;
  int64_t length = 0;
  bool writable = false;
  // O_DIRECT may carry aligned parts.  False keeps every byte in the page
  // cache, as for a file that is also mapped.
  bool direct_ok = true;
  // A descriptor of the same file opened with O_DIRECT, which the caller
  // owns, or -1: the engine then opens one through /proc/self/fd/<fd>.
  int direct_fd = -1;
};

// A failed read or write.  errno_value is the system's error, or 0 when
// the file ended before the bytes asked for; bytes_done counts the bytes
// moved from the start of the range (row by row for the row forms), all of
// them in place.
class IoError : public std::runtime_error {
 public:
  IoError(int errno_value, int64_t bytes_done, const std::string &message)
      : std::runtime_error(message), errno_value(errno_value), bytes_done(bytes_done) {}
  int errno_value;
  int64_t bytes_done;
};

// Bytes and requests since the engine started, for tests and benchmarks.
struct Stats {
  int64_t direct_bytes = 0;    // moved with O_DIRECT
  int64_t buffered_bytes = 0;  // moved through the page cache
  int64_t cached_bytes = 0;    // of those, bytes O_DIRECT could have read, all in the cache
  int64_t fixed_bytes = 0;     // of those, through registered staging buffers
  int64_t requests = 0;        // reads and writes issued, retries included
  int64_t retries = 0;         // reissued after a short transfer, EINTR, EAGAIN or ECANCELED
  int64_t direct_refusals = 0; // files whose O_DIRECT open or first transfer failed
};

// One per io device.  Thread-safe: each call takes a ring of its own from a
// small pool, and calls beyond Options::rings wait for one.  Argument errors
// (a negative count, bytes outside the region) throw std::invalid_argument;
// failures of the system throw IoError.
class UringEngine {
 public:
  // The defaults come from bench_file_read --sweep (bench/io), cold reads
  // of 1 GiB on a virtio disk of about 2 GB/s: chunks of 256K, 1M and 4M
  // at depths 8, 32 and 64.  Depth 8 fell short (256K: 1.30 GB/s against
  // 1.55 at depth 32); from 1 MiB at depth 32 on, read reached the plain
  // O_DIRECT reader (1.59 against 1.60 GB/s) and staged reads 2.3 GB/s,
  // with 4 MiB or depth 64 within the run-to-run noise (2.45-2.56) for four
  // times the staging memory or twice the requests in flight.
  struct Options {
    uint32_t queue_depth = 32;       // requests in flight per call
    size_t chunk_bytes = size_t{1} << 20;  // a multiple of 4096
    size_t staging_buffers = 32;     // registered buffers per ring, of chunk_bytes each
    int numa_node = -1;              // where staging memory lives; -1: anywhere
    uint32_t rings = 4;              // calls that run at once
    // False runs the same requests one by one with pread and pwrite, for
    // systems that refuse io_uring (io_uring_disabled, seccomp).  True
    // still falls back to that where io_uring_queue_init fails.
    bool use_io_uring = true;
    // Reads take a range O_DIRECT could read from the page cache where the
    // cache holds all of it (cachestat, Linux 6.5): a warm file reads at
    // memory speed rather than the disk's.  (A probe with RWF_NOWAIT would
    // start readahead on a cold file and read it twice.)
    bool cached_first = true;
  };

  explicit UringEngine(const Options &options);
  UringEngine();
  ~UringEngine();
  UringEngine(const UringEngine &) = delete;
  UringEngine &operator=(const UringEngine &) = delete;

  // Reads n bytes of f at file_offset into dst; returns n.  shared_dst:
  // dst is shared memory (a memfd's pages), whose new pages the reads let
  // the populator fault first (page_populator.hpp).
  int64_t read(const FileRegion &f, int64_t file_offset, void *dst, int64_t n, bool shared_dst = false);
  // Writes n bytes from src into f at file_offset; returns n.  Throws
  // IoError EBADF if f is not writable.
  int64_t write(const FileRegion &f, int64_t file_offset, const void *src, int64_t n);

  // rows rows of width bytes: row r at file_offset + r * file_pitch in the
  // file and at r * dst_pitch (src_pitch) in memory.  With more than one
  // row each pitch is at least width.
  int64_t read_rows(const FileRegion &f, int64_t file_offset, int64_t file_pitch, char *dst,
                    int64_t dst_pitch, int64_t width, int64_t rows);
  int64_t write_rows(const FileRegion &f, int64_t file_offset, int64_t file_pitch,
                     const char *src, int64_t src_pitch, int64_t width, int64_t rows);

  // Reads [file_offset, file_offset + n) chunk by chunk into registered
  // staging buffers and calls consume(chunk, bytes, offset_in_range) for
  // each chunk, in order, while the next chunks are being read; the chunk
  // may be reused once consume returns.  Where the read fails, the bytes
  // before the failure are consumed first, then IoError is thrown.  An
  // exception from consume ends the call (after the reads in flight) and
  // passes through.
  int64_t read_staged(const FileRegion &f, int64_t file_offset, int64_t n,
                      const std::function<void(const void *, int64_t, int64_t)> &consume);
  // Writes [file_offset, file_offset + n): produce(chunk, bytes,
  // offset_in_range) fills each staging chunk, in order, while earlier
  // chunks are being written.
  int64_t write_staged(const FileRegion &f, int64_t file_offset, int64_t n,
                       const std::function<void(void *, int64_t, int64_t)> &produce);

  // Closes the O_DIRECT descriptor the engine opened for fd, once no call
  // uses it.  Call it before closing fd, or the descriptor stays open (and
  // the file with it) until fd's number names another file.
  void forget(int fd);

  Stats stats() const;
  const Options &options() const;

  struct Impl;  // the rings, the descriptor cache and the counters

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rig::io
