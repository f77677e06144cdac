// The file engine of io devices: see uring_file.hpp.
//
// A call runs as one Transfer on a Lane (a ring, a table of two registered
// files and, for the staged calls, registered staging buffers) that it holds
// alone.  The Transfer cuts its bytes into chunks whose boundaries fall on
// file offsets that are multiples of chunk_bytes, and each chunk into at
// most three pieces, one request each: the aligned middle through the
// O_DIRECT descriptor and the unaligned head and tail through the page
// cache.  Chunks retire in file order, so the bytes done are always a
// prefix of the call's bytes, which is what IoError reports.
#include "uring_file.hpp"

#include "page_populator.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef RIG_IO_HAVE_NUMA
#include <numa.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace rig::io {
namespace {

constexpr int64_t kPage = 4096;
constexpr size_t kHugePage = size_t{2} << 20;
// Reissues of one request that moved no byte (EINTR, EAGAIN, ECANCELED, a
// write of 0 bytes) before the call fails with that error.
constexpr int kMaxFruitlessRetries = 64;
// O_DIRECT descriptors kept open for the files the engine has seen.
constexpr size_t kMaxDirectFiles = 64;
// Slots of a lane's registered-file table.
constexpr int kBufferedSlot = 0;
constexpr int kDirectSlot = 1;

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
int64_t align_down(int64_t v, int64_t a) { return v / a * a; }
bool aligned(const void *p, int64_t a) { return reinterpret_cast<uintptr_t>(p) % uint64_t(a) == 0; }

// The O_DIRECT side of one file, shared by the calls on it.
struct DirectFile {
  dev_t dev = 0;
  ino_t ino = 0;
  int fd = -1;  // -1: the file takes no O_DIRECT
  bool owned = false;
  bool writable = false;
  int64_t mem_align = kPage;
  int64_t read_align = kPage;  // of the file offsets and lengths of direct reads
  // Of direct writes: whole pages and file-system blocks besides, so that the
  // page cache's read-modify-write of a buffered head or tail never covers
  // bytes written directly beside it.
  int64_t write_align = kPage;
  std::atomic<bool> refused{false};  // a direct transfer answered EINVAL

  ~DirectFile() {
    if (owned && fd >= 0) close(fd);
  }
  bool usable() const { return fd >= 0 && !refused.load(std::memory_order_relaxed); }
};

struct Lane {
  io_uring ring{};
  bool has_ring = false;
  bool files_registered = false;  // a sparse table with kBufferedSlot and kDirectSlot
  bool broken = false;            // io_uring_enter failed: the lane is not reused
  // Staging, made at the first staged call on the lane: buffers from
  // staging, within the mapping [staging_map, + staging_map_bytes).
  void *staging_map = nullptr;
  size_t staging_map_bytes = 0;
  char *staging = nullptr;
  size_t buffer_stride = 0;
  bool staging_numa = false;
  bool buffers_registered = false;

  ~Lane() {
    if (has_ring) io_uring_queue_exit(&ring);
    if (staging_map == nullptr) return;
#ifdef RIG_IO_HAVE_NUMA
    if (staging_numa) {
      numa_free(staging_map, staging_map_bytes);
      return;
    }
#endif
    munmap(staging_map, staging_map_bytes);
  }
};

struct Counters {
  std::atomic<int64_t> direct_bytes{0};
  std::atomic<int64_t> buffered_bytes{0};
  std::atomic<int64_t> cached_bytes{0};
  std::atomic<int64_t> fixed_bytes{0};
  std::atomic<int64_t> requests{0};
  std::atomic<int64_t> retries{0};
  std::atomic<int64_t> direct_refusals{0};
};

void add(std::atomic<int64_t> &counter, int64_t n) { counter.fetch_add(n, std::memory_order_relaxed); }

enum class Direction { read, write };

// Where a call's bytes lie: count spans of width bytes, span r at file
// offset pos + r * file_pitch and at mem + r * mem_pitch (mem is null for
// the staged calls, whose memory is the staging buffers).
struct Spans {
  int64_t pos;
  int64_t file_pitch;
  char *mem;
  int64_t mem_pitch;
  int64_t width;
  int64_t count;
};

// One request's worth: bytes [pos, pos + len) of the file at mem.
struct Piece {
  int64_t pos = 0;
  char *mem = nullptr;
  int64_t len = 0;
  int64_t done = 0;
  bool direct = false;
  bool cached = false;  // O_DIRECT could read it, but the page cache holds it
  bool finished = false;
  bool failed = false;
  int error = 0;  // when failed: errno, or 0 for the end of the file
  int fruitless = 0;
};

struct Chunk {
  int64_t pos = 0;
  char *mem = nullptr;
  int64_t len = 0;
  int64_t offset = 0;  // of its first byte among the call's bytes
  int buffer = -1;     // staging buffer, or -1
  std::array<Piece, 3> pieces{};
  int count = 0;
  int pending = 0;  // pieces in flight

  // The bytes from the chunk's start that are in place.
  int64_t prefix_done() const {
    int64_t n = 0;
    for (int i = 0; i < count; ++i) {
      n += pieces[i].done;
      if (!pieces[i].finished) break;
    }
    return n;
  }
};

std::string describe(int error) { return error == 0 ? "the file ended" : std::strerror(error); }

// The pages of [pos, pos + len) of fd that the page cache holds, from
// cachestat (Linux 6.5), which reads no page and maps nothing; -1 where the
// kernel cannot say.  Its types are declared here for older headers.
#ifndef __NR_cachestat
#define __NR_cachestat 451  // the same on every architecture
#endif
struct CachestatRange {
  uint64_t off;
  uint64_t len;
};
struct Cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};
std::atomic<bool> cachestat_missing{false};

int64_t cached_pages(int fd, int64_t pos, int64_t len) {
  if (cachestat_missing.load(std::memory_order_relaxed)) return -1;
  CachestatRange range{uint64_t(pos), uint64_t(len)};
  Cachestat stat{};
  if (syscall(__NR_cachestat, fd, &range, &stat, 0) != 0) {
    if (errno == ENOSYS) cachestat_missing = true;
    return -1;
  }
  return int64_t(stat.nr_cache);
}

}  // namespace

struct UringEngine::Impl {
  Options options;
  Counters counters;

  std::mutex lanes_mutex;
  std::condition_variable lane_returned;
  std::vector<std::unique_ptr<Lane>> idle_lanes;
  uint32_t lanes_out = 0;
  // The process the lanes belong to.  A ring's queues are memory the kernel
  // shares with the process, and a child of fork shares them with its
  // parent: the child leaves the parent's rings to it and makes its own.
  pid_t lanes_pid = getpid();
  std::atomic<bool> ring_refused{false};  // io_uring_queue_init failed once: run synchronously

  std::mutex files_mutex;
  std::unordered_map<int, std::shared_ptr<DirectFile>> direct_files;  // by the region's fd

  std::unique_ptr<Lane> take_lane();
  void return_lane(std::unique_ptr<Lane> lane);
  std::unique_ptr<Lane> make_lane();
  void make_staging(Lane &lane);
  std::shared_ptr<DirectFile> direct_file(const FileRegion &f);
  std::shared_ptr<DirectFile> open_direct(const FileRegion &f, const struct stat &st);
  // New memory a read populates ahead of itself (PagePopulator), and
  // whether the read stays behind the populated pages (shared memory).
  struct Ahead {
    void *dst;
    int64_t n;
    bool huge, hold_reads;
  };
  int64_t transfer(const FileRegion &f, Direction dir, const Spans &spans,
                   const std::function<void(const void *, int64_t, int64_t)> *consume,
                   const std::function<void(void *, int64_t, int64_t)> *produce, const Ahead *ahead = nullptr);
};

namespace {

// One call's requests on one lane.
class Transfer {
 public:
  using Consume = std::function<void(const void *, int64_t, int64_t)>;
  using Produce = std::function<void(void *, int64_t, int64_t)>;

  // ahead: the populator of a read's new memory, whose pages the reads
  // stay behind (page_populator.hpp), or nullptr.
  Transfer(UringEngine::Impl &engine, Lane &lane, const FileRegion &f,
           std::shared_ptr<DirectFile> direct, Direction dir, const Spans &spans,
           const Consume *consume, const Produce *produce, const PagePopulator *ahead)
      : engine_(engine),
        options_(engine.options),
        lane_(lane),
        region_(f),
        direct_(std::move(direct)),
        dir_(dir),
        spans_(spans),
        consume_(consume),
        produce_(produce),
        ahead_(ahead),
        total_(spans.width * spans.count) {
    if (staged()) {
      for (size_t i = 0; i < options_.staging_buffers; ++i) free_buffers_.push_back(int(i));
    }
    register_files();
  }

  ~Transfer() {
    if (fixed_files_ && !lane_.broken) {
      int none[2] = {-1, -1};
      io_uring_register_files_update(&lane_.ring, 0, none, 2);
    }
  }

  int64_t run() {
    try {
      for (;;) {
        issue();
        reap(false);
        if (deliver()) continue;
        if (inflight_ == 0) {
          if (stopped_ || (!next_ && !more_to_plan())) break;
          continue;  // the completions at hand freed room for more
        }
        reap(true);
      }
    } catch (...) {
      drain();
      throw;
    }
    return finish();
  }

 private:
  bool staged() const { return consume_ != nullptr || produce_ != nullptr; }
  bool more_to_plan() const { return span_index_ < spans_.count; }
  int64_t direct_align() const { return dir_ == Direction::read ? direct_->read_align : direct_->write_align; }
  Chunk &chunk(uint64_t seq) { return window_[seq - base_seq_]; }

  // Fixed files spare the kernel a descriptor lookup per request; the table
  // is set for this call and emptied after it, so that it holds no file
  // beyond the call.  Worth its two system calls only for calls of several
  // chunks.
  void register_files() {
    if (!lane_.files_registered || total_ <= int64_t(options_.chunk_bytes)) return;
    int fds[2] = {region_.fd, direct_ ? direct_->fd : -1};
    fixed_files_ = io_uring_register_files_update(&lane_.ring, 0, fds, 2) == 2;
  }

  // The next chunk of the spans, not yet issued: nullopt when all are
  // planned, or when a staged call has no free buffer.
  std::optional<Chunk> plan() {
    if (!more_to_plan() || (staged() && free_buffers_.empty())) return std::nullopt;
    Chunk c;
    const int64_t chunk_bytes = int64_t(options_.chunk_bytes);
    c.pos = spans_.pos + span_index_ * spans_.file_pitch + span_done_;
    c.len = std::min(spans_.width - span_done_, chunk_bytes - c.pos % chunk_bytes);
    c.offset = span_index_ * spans_.width + span_done_;
    if (!staged()) c.mem = spans_.mem + span_index_ * spans_.mem_pitch + span_done_;
    span_done_ += c.len;
    if (span_done_ == spans_.width) {
      ++span_index_;
      span_done_ = 0;
    }
    const int64_t align = direct_ && direct_->usable() ? direct_align() : 0;
    const int64_t a0 = align ? align_up(c.pos, align) : 0;
    const int64_t a1 = align ? align_down(c.pos + c.len, align) : 0;
    const bool has_middle = align && a0 < a1;
    if (staged()) {
      c.buffer = free_buffers_.back();
      free_buffers_.pop_back();
      // Shift the bytes in the buffer so that the middle starts on an address
      // O_DIRECT takes; the buffer's extra page leaves room for the shift.
      int64_t shift = 0;
      if (has_middle && direct_->mem_align <= kPage) {
        shift = (direct_->mem_align - (a0 - c.pos) % direct_->mem_align) % direct_->mem_align;
      }
      c.mem = lane_.staging + size_t(c.buffer) * lane_.buffer_stride + shift;
    }
    if (has_middle && aligned(c.mem + (a0 - c.pos), direct_->mem_align)) {
      const bool cached = in_page_cache(a0, a1 - a0);
      add_piece(c, c.pos, a0 - c.pos, false);
      add_piece(c, a0, a1 - a0, !cached, cached);
      add_piece(c, a1, c.pos + c.len - a1, false);
    } else {
      add_piece(c, c.pos, c.len, false);
    }
    return c;
  }

  static void add_piece(Chunk &c, int64_t pos, int64_t len, bool direct, bool cached = false) {
    if (len == 0) return;
    Piece &p = c.pieces[c.count++];
    p.pos = pos;
    p.mem = c.mem + (pos - c.pos);
    p.len = len;
    p.direct = direct;
    p.cached = cached;
  }

  // Whether the page cache holds every page of [pos, pos + len) of the
  // region's file, for a read that prefers it (Options::cached_first).  One
  // cachestat of the call's whole range settles the common cases, a file
  // all cold or all warm; a call in between asks again for each chunk.
  bool in_page_cache(int64_t pos, int64_t len) {
    if (dir_ != Direction::read || !options_.cached_first || call_cache_ == CallCache::none) return false;
    if (call_cache_ == CallCache::all) return true;
    if (call_cache_ == CallCache::unknown) {
      const int64_t first = spans_.pos;
      const int64_t end = spans_.pos + (spans_.count - 1) * spans_.file_pitch + spans_.width;
      const int64_t cached = cached_pages(region_.fd, first, end - first);
      const int64_t pages = page_count(first, end - first);
      call_cache_ = cached <= 0 ? CallCache::none : cached >= pages ? CallCache::all : CallCache::some;
      return in_page_cache(pos, len);
    }
    return cached_pages(region_.fd, pos, len) >= page_count(pos, len);
  }

  static int64_t page_count(int64_t pos, int64_t len) { return align_up(pos + len, kPage) / kPage - pos / kPage; }

  // Issues chunks while the depth, the staging buffers and the window allow.
  void issue() {
    while (!stopped_) {
      if (!next_) next_ = plan();
      if (!next_) break;
      const int room = int(options_.queue_depth) - inflight_;
      if (inflight_ > 0 && (next_->count > room || window_.size() >= 4 * options_.queue_depth)) break;
      if (ahead_ != nullptr && !staged() && !ahead_->ready(next_->mem + next_->len)) {
        if (inflight_ > 0) break;  // the populator moves on while those complete
        ahead_->wait_until(next_->mem + next_->len);
      }
      if (produce_ != nullptr && !produce(*next_)) break;
      window_.push_back(*next_);
      next_.reset();
      const uint64_t seq = base_seq_ + window_.size() - 1;
      Chunk &c = window_.back();
      for (int i = 0; i < c.count; ++i) submit_piece(seq, i);
      // A staged write's chunk goes at once, so its write overlaps the
      // production of the next one.
      if (produce_ != nullptr) flush();
    }
    flush();
  }

  bool produce(Chunk &c) {
    try {
      (*produce_)(c.mem, c.len, c.offset);
      return true;
    } catch (...) {
      callback_error_ = std::current_exception();
      stopped_ = true;
      return false;
    }
  }

  void submit_piece(uint64_t seq, int index) {
    Chunk &c = chunk(seq);
    Piece &p = c.pieces[index];
    ++c.pending;
    ++inflight_;
    add(engine_.counters.requests, 1);
    const uint64_t tag = seq * 4 + uint64_t(index);
    if (!lane_.has_ring) {
      sync_queue_.push_back(tag);
      return;
    }
    io_uring_sqe *sqe = io_uring_get_sqe(&lane_.ring);
    if (sqe == nullptr) {  // not expected: the ring's entries outnumber the requests in flight
      io_uring_submit(&lane_.ring);
      sqe = io_uring_get_sqe(&lane_.ring);
    }
    const int fd = fixed_files_ ? (p.direct ? kDirectSlot : kBufferedSlot) : (p.direct ? direct_->fd : region_.fd);
    char *mem = p.mem + p.done;
    const unsigned len = unsigned(p.len - p.done);
    const uint64_t pos = uint64_t(p.pos + p.done);
    const bool fixed = c.buffer >= 0 && lane_.buffers_registered;
    if (dir_ == Direction::read) {
      if (fixed) io_uring_prep_read_fixed(sqe, fd, mem, len, pos, c.buffer);
      else io_uring_prep_read(sqe, fd, mem, len, pos);
    } else {
      if (fixed) io_uring_prep_write_fixed(sqe, fd, mem, len, pos, c.buffer);
      else io_uring_prep_write(sqe, fd, mem, len, pos);
    }
    if (fixed_files_) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, tag);
  }

  // The same request run by the system call, for a lane without a ring.
  int sync_transfer(const Piece &p) {
    const int fd = p.direct ? direct_->fd : region_.fd;
    const ssize_t n = dir_ == Direction::read ? pread(fd, p.mem + p.done, size_t(p.len - p.done), p.pos + p.done)
                                              : pwrite(fd, p.mem + p.done, size_t(p.len - p.done), p.pos + p.done);
    return n < 0 ? -errno : int(n);
  }

  void flush() {
    if (!lane_.has_ring || lane_.broken) return;
    const int r = io_uring_submit(&lane_.ring);
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) break_lane(-r);
  }

  // io_uring_enter failed for a reason a retry will not cure: the requests
  // the kernel never took are dropped, with the lane, and the call fails
  // once those it took are done.
  void break_lane(int error) {
    lane_.broken = true;
    lane_error_ = error;
    stopped_ = true;
    inflight_ -= int(io_uring_sq_ready(&lane_.ring));
  }

  // Handles the completions at hand; with wait, first waits for one.
  void reap(bool wait) {
    if (!lane_.has_ring) {
      if (!wait) return;
      std::vector<uint64_t> queue;
      queue.swap(sync_queue_);
      for (uint64_t tag : queue) complete(tag, sync_transfer(chunk(tag / 4).pieces[tag % 4]));
      return;
    }
    if (wait) {
      io_uring_cqe *cqe = nullptr;
      for (;;) {
        const int r = lane_.broken ? io_uring_wait_cqe(&lane_.ring, &cqe) : io_uring_submit_and_wait(&lane_.ring, 1);
        if (r >= 0) break;
        if (r == -EINTR || r == -EAGAIN || r == -EBUSY) continue;
        if (lane_.broken) std::terminate();  // requests in flight on memory we cannot wait for
        break_lane(-r);
        if (inflight_ == 0) return;
      }
    }
    unsigned head;
    unsigned seen = 0;
    io_uring_cqe *cqe;
    io_uring_for_each_cqe(&lane_.ring, head, cqe) {
      complete(io_uring_cqe_get_data64(cqe), cqe->res);
      ++seen;
    }
    io_uring_cq_advance(&lane_.ring, seen);
  }

  void complete(uint64_t tag, int res) {
    --inflight_;
    Chunk &c = chunk(tag / 4);
    Piece &p = c.pieces[tag % 4];
    --c.pending;
    if (res > 0) {
      p.done += res;
      p.fruitless = 0;
      add(p.direct ? engine_.counters.direct_bytes : engine_.counters.buffered_bytes, res);
      if (p.cached) add(engine_.counters.cached_bytes, res);
      if (c.buffer >= 0 && lane_.buffers_registered) add(engine_.counters.fixed_bytes, res);
      if (p.done == p.len) {
        p.finished = true;
        return;
      }
      // A short transfer: the rest follows, through the page cache once it
      // is no longer aligned (a direct read that met the end of the file).
      if (p.direct && !direct_fits(p.pos + p.done, p.len - p.done, p.mem + p.done)) p.direct = false;
      return retry(tag);
    }
    const int error = res < 0 ? -res : (dir_ == Direction::read ? 0 : EIO);
    if (res == 0 && dir_ == Direction::read) return fail(p, 0);
    if (res == 0 || error == EINTR || error == EAGAIN || error == ECANCELED) {
      if (++p.fruitless <= kMaxFruitlessRetries) return retry(tag);
      return fail(p, error);
    }
    if ((error == EINVAL || error == EOPNOTSUPP) && p.direct) {
      // The file system takes no O_DIRECT here after all: every later chunk
      // of the file goes through the page cache.
      if (!direct_->refused.exchange(true)) add(engine_.counters.direct_refusals, 1);
      p.direct = false;
      return retry(tag);
    }
    fail(p, error);
  }

  bool direct_fits(int64_t pos, int64_t len, const char *mem) const {
    const int64_t align = direct_align();
    return pos % align == 0 && len % align == 0 && aligned(mem, direct_->mem_align);
  }

  void retry(uint64_t tag) {
    add(engine_.counters.retries, 1);
    if (stopped_ && lane_.broken) return fail(chunk(tag / 4).pieces[tag % 4], lane_error_);
    submit_piece(tag / 4, int(tag % 4));
  }

  void fail(Piece &p, int error) {
    p.failed = true;
    p.error = error;
    stopped_ = true;
  }

  // Retires the complete chunks at the front of the window, handing a
  // staged read's chunks to the consumer.  Returns true if it retired a
  // staged chunk, whose buffer another chunk may now take.
  bool deliver() {
    if (callback_error_) return false;
    while (!window_.empty()) {
      Chunk &c = window_.front();
      if (c.pending > 0 || c.prefix_done() < c.len) break;
      if (consume_ != nullptr) {
        try {
          (*consume_)(c.mem, c.len, c.offset);
        } catch (...) {
          callback_error_ = std::current_exception();
          stopped_ = true;
          return false;
        }
      }
      done_ += c.len;
      if (c.buffer >= 0) free_buffers_.push_back(c.buffer);
      window_.pop_front();
      ++base_seq_;
      if (staged()) return true;
    }
    return false;
  }

  void drain() {
    while (inflight_ > 0) reap(true);
  }

  // After the last completion: the bytes done, or the failure.
  int64_t finish() {
    if (callback_error_) std::rethrow_exception(callback_error_);
    if (done_ == total_) return total_;
    int error = lane_error_;
    int64_t prefix = 0;
    if (!window_.empty()) {
      const Chunk &c = window_.front();
      for (int i = 0; i < c.count; ++i) {
        if (c.pieces[i].failed) {
          error = c.pieces[i].error;
          break;
        }
      }
      prefix = c.prefix_done();
      // The bytes that exist before the failure reach the consumer too.
      if (consume_ != nullptr && prefix > 0) (*consume_)(c.mem, prefix, c.offset);
    }
    done_ += prefix;
    char message[256];
    std::snprintf(message, sizeof message, "%s of %lld bytes at offset %lld of the file: %s after %lld bytes",
                  dir_ == Direction::read ? "read" : "write", static_cast<long long>(total_),
                  static_cast<long long>(spans_.pos), describe(error).c_str(), static_cast<long long>(done_));
    throw IoError(error, done_, message);
  }

  UringEngine::Impl &engine_;
  const UringEngine::Options &options_;
  Lane &lane_;
  const FileRegion &region_;
  const std::shared_ptr<DirectFile> direct_;
  const Direction dir_;
  const Spans spans_;
  const Consume *consume_;
  const Produce *produce_;
  const PagePopulator *ahead_;
  const int64_t total_;

  int64_t span_index_ = 0;  // the next chunk's span, and its bytes already planned
  int64_t span_done_ = 0;
  std::optional<Chunk> next_;  // planned, waiting for room
  std::deque<Chunk> window_;   // issued and not retired, in file order
  uint64_t base_seq_ = 0;      // the sequence number of window_.front()
  std::vector<int> free_buffers_;
  std::vector<uint64_t> sync_queue_;  // requests of a lane without a ring
  int inflight_ = 0;
  int64_t done_ = 0;
  bool stopped_ = false;  // a failure: issue nothing more
  bool fixed_files_ = false;
  enum class CallCache { unknown, none, some, all } call_cache_ = CallCache::unknown;
  int lane_error_ = EIO;
  std::exception_ptr callback_error_;
};

}  // namespace

std::unique_ptr<Lane> UringEngine::Impl::take_lane() {
  std::unique_lock lock(lanes_mutex);
  if (getpid() != lanes_pid) {
    // Closing the child's copies of the idle rings leaves the parent's
    // alone; those the parent's threads held at the fork are not the child's.
    idle_lanes.clear();
    lanes_out = 0;
    lanes_pid = getpid();
  }
  lane_returned.wait(lock, [&] { return !idle_lanes.empty() || lanes_out + idle_lanes.size() < options.rings; });
  ++lanes_out;
  if (!idle_lanes.empty()) {
    std::unique_ptr<Lane> lane = std::move(idle_lanes.back());
    idle_lanes.pop_back();
    return lane;
  }
  lock.unlock();
  try {
    return make_lane();
  } catch (...) {
    return_lane(nullptr);
    throw;
  }
}

void UringEngine::Impl::return_lane(std::unique_ptr<Lane> lane) {
  {
    std::lock_guard lock(lanes_mutex);
    --lanes_out;
    if (lane && !lane->broken) idle_lanes.push_back(std::move(lane));
  }
  lane_returned.notify_one();
}

std::unique_ptr<Lane> UringEngine::Impl::make_lane() {
  auto lane = std::make_unique<Lane>();
  if (!options.use_io_uring || ring_refused.load()) return lane;
  const unsigned entries = std::max(options.queue_depth, 4u);
  // COOP_TASKRUN (5.19) runs completions when we enter the kernel anyway,
  // instead of interrupting the thread.
  int r = io_uring_queue_init(entries, &lane->ring, IORING_SETUP_COOP_TASKRUN);
  if (r == -EINVAL) r = io_uring_queue_init(entries, &lane->ring, 0);
  if (r < 0) {
    ring_refused = true;
    return lane;
  }
  lane->has_ring = true;
  lane->files_registered = io_uring_register_files_sparse(&lane->ring, 2) == 0;
  return lane;
}

// Staging buffers of chunk_bytes and a page each (room to shift a chunk so
// that its aligned middle starts on an address O_DIRECT takes), on huge
// pages where the system gives them, locked in memory and registered with
// the ring.  Huge pages matter: a 1 MiB read into 4 KiB pages needs 256
// segments, more than a virtio disk takes in one request (254), and the
// split requests ran staged reads at half the disk's bandwidth (2.4 against
// 1.3 GB/s, bench_file_read).  Neither the lock nor the registration is
// needed for the bytes to move: where the system refuses them
// (RLIMIT_MEMLOCK), the buffers serve unlocked, through plain reads.
void UringEngine::Impl::make_staging(Lane &lane) {
  if (lane.staging != nullptr) return;
  const size_t stride = options.chunk_bytes + size_t(kPage);
  const size_t bytes = stride * options.staging_buffers;
  const size_t map_bytes = bytes + kHugePage;  // room to start on a huge page
  void *map = nullptr;
#ifdef RIG_IO_HAVE_NUMA
  if (options.numa_node >= 0 && numa_available() >= 0) {
    map = numa_alloc_onnode(map_bytes, options.numa_node);
    lane.staging_numa = map != nullptr;
  }
#endif
  if (map == nullptr) {
    map = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) throw IoError(errno, 0, "staging memory: " + std::string(std::strerror(errno)));
  }
  lane.staging_map = map;
  lane.staging_map_bytes = map_bytes;
  lane.staging = reinterpret_cast<char *>(align_up(int64_t(reinterpret_cast<uintptr_t>(map)), int64_t(kHugePage)));
  lane.buffer_stride = stride;
  madvise(lane.staging, bytes, MADV_HUGEPAGE);  // before the pages exist
  mlock(lane.staging, bytes);
  if (!lane.has_ring) return;
  std::vector<iovec> iovecs(options.staging_buffers);
  for (size_t i = 0; i < iovecs.size(); ++i) iovecs[i] = {lane.staging + i * stride, stride};
  lane.buffers_registered = io_uring_register_buffers(&lane.ring, iovecs.data(), unsigned(iovecs.size())) == 0;
}

std::shared_ptr<DirectFile> UringEngine::Impl::direct_file(const FileRegion &f) {
  if (!f.direct_ok) return nullptr;
  struct stat st;
  if (fstat(f.fd, &st) != 0) throw IoError(errno, 0, "fstat of the region's descriptor: " + std::string(std::strerror(errno)));
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) return nullptr;
  std::lock_guard lock(files_mutex);
  auto found = direct_files.find(f.fd);
  if (found != direct_files.end()) {
    const DirectFile &d = *found->second;
    // The same file (the number may name another since), opened for what
    // this region needs, with the descriptor it gives if it gives one.
    const bool same_file = d.dev == st.st_dev && d.ino == st.st_ino;
    const bool same_descriptor = f.direct_fd >= 0 ? d.fd == f.direct_fd : d.owned || d.fd < 0;
    if (same_file && same_descriptor && (d.writable || !f.writable)) return found->second;
  }
  std::shared_ptr<DirectFile> d = open_direct(f, st);
  if (direct_files.size() >= kMaxDirectFiles && found == direct_files.end()) direct_files.erase(direct_files.begin());
  direct_files[f.fd] = d;
  return d;
}

std::shared_ptr<DirectFile> UringEngine::Impl::open_direct(const FileRegion &f, const struct stat &st) {
  auto d = std::make_shared<DirectFile>();
  d->dev = st.st_dev;
  d->ino = st.st_ino;
  d->writable = f.writable;
  if (f.direct_fd >= 0) {
    d->fd = f.direct_fd;
  } else {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", f.fd);
    d->fd = open(path, (f.writable ? O_RDWR : O_RDONLY) | O_DIRECT | O_CLOEXEC);
    d->owned = true;
  }
  if (d->fd < 0) {
    add(counters.direct_refusals, 1);
    return d;
  }
  // The alignment the file system asks of direct transfers (Linux 6.1);
  // elsewhere a page, which every file system that takes O_DIRECT accepts.
  struct statx sx;
  if (statx(d->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
    if (sx.stx_dio_offset_align == 0) {  // this file takes no O_DIRECT
      add(counters.direct_refusals, 1);
      d->refused = true;
      return d;
    }
    d->mem_align = sx.stx_dio_mem_align;
    d->read_align = sx.stx_dio_offset_align;
  }
  d->write_align = std::max({d->read_align, int64_t(st.st_blksize), kPage});
  return d;
}

int64_t UringEngine::Impl::transfer(const FileRegion &f, Direction dir, const Spans &spans,
                                    const std::function<void(const void *, int64_t, int64_t)> *consume,
                                    const std::function<void(void *, int64_t, int64_t)> *produce,
                                    const Ahead *ahead) {
  if (dir == Direction::write && !f.writable) throw IoError(EBADF, 0, "write into a region opened for reading");
  if (spans.width == 0 || spans.count == 0) return 0;
  std::shared_ptr<DirectFile> direct = direct_file(f);
  std::unique_ptr<Lane> lane = take_lane();
  try {
    if (consume != nullptr || produce != nullptr) make_staging(*lane);
    // Populating starts once the lane's ring and staging are mapped: their
    // mmap takes the address space's lock for writing, which would wait
    // behind each window the populator faults in (the reading thread slept
    // over 1,200 times so on a loaded machine, before its first read).
    std::optional<PagePopulator> populator;
    if (ahead != nullptr) populator.emplace(ahead->dst, ahead->n, ahead->huge);
    const PagePopulator *hold = ahead != nullptr && ahead->hold_reads ? &*populator : nullptr;
    const int64_t n = Transfer(*this, *lane, f, std::move(direct), dir, spans, consume, produce, hold).run();
    return_lane(std::move(lane));
    return n;
  } catch (...) {
    return_lane(std::move(lane));
    throw;
  }
}

namespace {

void require(bool ok, const char *what) {
  if (!ok) throw std::invalid_argument(what);
}

// Checks that bytes [offset, offset + n) lie in f.
void check_range(const FileRegion &f, int64_t offset, int64_t n) {
  require(f.length >= 0 && f.offset >= 0, "rig::io: negative region");
  require(offset >= 0 && n >= 0, "rig::io: negative offset or count");
  require(offset <= f.length && n <= f.length - offset, "rig::io: bytes outside the region");
}

// The spans of a row form, after its checks; rows of adjacent bytes on both
// sides make one span.
Spans row_spans(const FileRegion &f, int64_t file_offset, int64_t file_pitch, char *mem, int64_t mem_pitch,
                int64_t width, int64_t rows) {
  require(width >= 0 && rows >= 0, "rig::io: negative width or rows");
  if (rows == 0 || width == 0) return Spans{f.offset + file_offset, 0, mem, 0, 0, 0};
  if (rows > 1) {
    require(file_pitch >= width && mem_pitch >= width, "rig::io: a pitch shorter than a row");
    int64_t last = 0;
    require(!__builtin_mul_overflow(rows - 1, file_pitch, &last) && !__builtin_add_overflow(last, width, &last),
            "rig::io: rows too large");
    check_range(f, file_offset, last);
  } else {
    check_range(f, file_offset, width);
  }
  if (rows == 1 || (file_pitch == width && mem_pitch == width)) {
    return Spans{f.offset + file_offset, 0, mem, 0, width * rows, 1};
  }
  return Spans{f.offset + file_offset, file_pitch, mem, mem_pitch, width, rows};
}

}  // namespace

UringEngine::UringEngine() : UringEngine(Options{}) {}

UringEngine::UringEngine(const Options &options) : impl_(std::make_unique<Impl>()) {
  require(options.queue_depth >= 1 && options.queue_depth <= 4096, "rig::io: queue_depth outside [1, 4096]");
  require(options.chunk_bytes >= size_t(kPage) && options.chunk_bytes <= (size_t{1} << 30) &&
              options.chunk_bytes % size_t(kPage) == 0,
          "rig::io: chunk_bytes must be a multiple of 4096 up to 1 GiB");
  require(options.staging_buffers >= 1 && options.staging_buffers <= 1024, "rig::io: staging_buffers outside [1, 1024]");
  require(options.rings >= 1, "rig::io: no rings");
  impl_->options = options;
}

UringEngine::~UringEngine() = default;

namespace {

// Whether a read of n bytes of f from pos goes to the disk (O_DIRECT where
// the alignment allows) rather than copying from the page cache, which
// holds every page of it (Options::cached_first).  New memory for such a
// read takes huge pages: populated ahead of a cold read they loaded new
// buffers faster than 4 KiB pages, and ahead of a warm one slower (the
// figures are in page_populator.hpp).
bool reads_from_disk(const FileRegion &f, int64_t pos, int64_t n, bool cached_first) {
  if (!f.direct_ok) return false;
  if (!cached_first) return true;
  const int64_t cached = cached_pages(f.fd, pos, n);
  return cached < 0 || cached < align_up(pos + n, kPage) / kPage - pos / kPage;
}

}  // namespace

int64_t UringEngine::read(const FileRegion &f, int64_t file_offset, void *dst, int64_t n, bool shared_dst) {
  check_range(f, file_offset, n);
  const bool huge = n >= PagePopulator::kMinBytes &&
                    reads_from_disk(f, f.offset + file_offset, n, impl_->options.cached_first);
  const Impl::Ahead ahead{dst, n, huge, shared_dst};
  return impl_->transfer(f, Direction::read, Spans{f.offset + file_offset, 0, static_cast<char *>(dst), 0, n, 1},
                         nullptr, nullptr, &ahead);
}

int64_t UringEngine::write(const FileRegion &f, int64_t file_offset, const void *src, int64_t n) {
  check_range(f, file_offset, n);
  // The engine never writes into src: the write path only reads memory.
  char *mem = const_cast<char *>(static_cast<const char *>(src));
  return impl_->transfer(f, Direction::write, Spans{f.offset + file_offset, 0, mem, 0, n, 1}, nullptr, nullptr);
}

int64_t UringEngine::read_rows(const FileRegion &f, int64_t file_offset, int64_t file_pitch, char *dst,
                               int64_t dst_pitch, int64_t width, int64_t rows) {
  return impl_->transfer(f, Direction::read, row_spans(f, file_offset, file_pitch, dst, dst_pitch, width, rows),
                         nullptr, nullptr);
}

int64_t UringEngine::write_rows(const FileRegion &f, int64_t file_offset, int64_t file_pitch, const char *src,
                                int64_t src_pitch, int64_t width, int64_t rows) {
  char *mem = const_cast<char *>(src);  // read only, as in write
  return impl_->transfer(f, Direction::write, row_spans(f, file_offset, file_pitch, mem, src_pitch, width, rows),
                         nullptr, nullptr);
}

int64_t UringEngine::read_staged(const FileRegion &f, int64_t file_offset, int64_t n,
                                 const std::function<void(const void *, int64_t, int64_t)> &consume) {
  check_range(f, file_offset, n);
  return impl_->transfer(f, Direction::read, Spans{f.offset + file_offset, 0, nullptr, 0, n, 1}, &consume, nullptr);
}

int64_t UringEngine::write_staged(const FileRegion &f, int64_t file_offset, int64_t n,
                                  const std::function<void(void *, int64_t, int64_t)> &produce) {
  check_range(f, file_offset, n);
  return impl_->transfer(f, Direction::write, Spans{f.offset + file_offset, 0, nullptr, 0, n, 1}, nullptr, &produce);
}

void UringEngine::forget(int fd) {
  std::lock_guard lock(impl_->files_mutex);
  impl_->direct_files.erase(fd);
}

Stats UringEngine::stats() const {
  const Counters &c = impl_->counters;
  auto get = [](const std::atomic<int64_t> &v) { return v.load(std::memory_order_relaxed); };
  return Stats{get(c.direct_bytes), get(c.buffered_bytes), get(c.cached_bytes), get(c.fixed_bytes),
               get(c.requests),     get(c.retries),        get(c.direct_refusals)};
}

const UringEngine::Options &UringEngine::options() const { return impl_->options; }

}  // namespace rig::io
