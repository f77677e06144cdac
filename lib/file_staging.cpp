#include "file_staging.hpp"

#include "allocation.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace rig {
namespace {

// Readers at once: their reads keep the disk's queue full while one
// reader's read drains.
constexpr int kFileReaders = 4;
constexpr int64_t kPartsPerAllocation = kStagingBytes / kFilePartBytes;
static_assert(kStagingBytes % kFilePartBytes == 0);

// The bytes are cut into slots of one staging allocation each, slot s in
// allocation s % 2, and each slot into parts.  Readers take parts in
// order; the reader of a slot's first part opens the slot: once every
// part of the allocation's previous slot is handed over, it waits for
// their work and makes the allocation ready for the slot's bytes.
class StagedRead {
 public:
  StagedRead(int64_t n, int node, const std::function<void(int64_t, int64_t, char *)> &read,
             const std::function<uint64_t(const StagingLease &, int64_t, int64_t)> &hand_over)
      : n_(n), node_(node), read_(read), hand_over_(hand_over),
        parts_((n + kFilePartBytes - 1) / kFilePartBytes),
        allocations_(n > kStagingBytes ? 2 : 1) {
    for (int64_t i = 0; i < count(); i++) allocations_[static_cast<size_t>(i)].slot = i - count();
  }

  ~StagedRead() {
    for (Held &a : allocations_)
      if (a.lease.alloc) release_staging(a.lease);
  }

  uint64_t run() {
    const int64_t readers = std::min<int64_t>(kFileReaders, parts_);
    std::vector<std::thread> others;
    try {
      for (int64_t r = 1; r < readers; r++) others.emplace_back([this] { read_parts(); });
    } catch (const std::system_error &) {
      // No thread for another reader: fewer read.
    }
    read_parts();
    for (std::thread &t : others) t.join();
    if (error_) std::rethrow_exception(error_);
    return last_;
  }

 private:
  struct Held {
    StagingLease lease;  // none (alloc null) before its first slot
    // The slot whose bytes it takes now, once ready; before its first, a
    // slot before the bytes' start, with no parts.
    int64_t slot = 0;
    bool ready = true;
    int64_t handed_over = 0;  // of that slot's parts
  };

  int64_t slot_bytes(int64_t slot) const { return std::min(kStagingBytes, n_ - slot * kStagingBytes); }
  int64_t slot_parts(int64_t slot) const {
    return slot < 0 ? 0 : (slot_bytes(slot) + kFilePartBytes - 1) / kFilePartBytes;
  }
  int64_t count() const { return static_cast<int64_t>(allocations_.size()); }

  void fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> g(mu_);
    if (!error_) error_ = e;
    cv_.notify_all();
  }

  void read_parts() {
    try {
      for (;;) {
        std::unique_lock<std::mutex> g(mu_);
        if (error_ || next_ == parts_) return;
        const int64_t part = next_++;
        const int64_t slot = part / kPartsPerAllocation;
        Held &a = allocations_[static_cast<size_t>(slot % count())];
        if (part % kPartsPerAllocation == 0) {
          if (!open(g, a, slot)) return;
        } else {
          cv_.wait(g, [&] { return error_ || (a.slot == slot && a.ready); });
          if (error_) return;
        }
        const StagingLease lease = a.lease;
        g.unlock();
        const int64_t offset = part * kFilePartBytes;
        const int64_t in_slot = offset - slot * kStagingBytes;
        const int64_t bytes = std::min(kFilePartBytes, n_ - offset);
        read_(offset, bytes, static_cast<char *>(lease.alloc->host) + lease.offset + in_slot);
        const uint64_t v = hand_over_(StagingLease{lease.alloc, lease.offset + in_slot}, offset, bytes);
        g.lock();
        last_ = std::max(last_, v);
        a.handed_over++;
        cv_.notify_all();
      }
    } catch (...) {
      fail(std::current_exception());
    }
  }

  // Makes a ready for slot's bytes, once every part of its slot before is
  // handed over; false once another reader failed.
  bool open(std::unique_lock<std::mutex> &g, Held &a, int64_t slot) {
    cv_.wait(g, [&] {
      return error_ || (a.slot == slot - count() && a.ready && a.handed_over == slot_parts(a.slot));
    });
    if (error_) return false;
    a.slot = slot;
    a.ready = false;
    a.handed_over = 0;
    const bool first = a.lease.alloc == nullptr;
    const StagingLease before = a.lease;
    g.unlock();
    // Outside the lock: a refill waits for the work that last read it.
    const StagingLease lease =
        first ? take_host_written(slot_bytes(slot), node_) : refill_from_start(before, slot_bytes(slot));
    g.lock();
    a.lease = lease;
    a.ready = true;
    cv_.notify_all();
    return true;
  }

  const int64_t n_;
  const int node_;
  const std::function<void(int64_t, int64_t, char *)> &read_;
  const std::function<uint64_t(const StagingLease &, int64_t, int64_t)> &hand_over_;
  const int64_t parts_;
  std::vector<Held> allocations_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t next_ = 0;
  uint64_t last_ = 0;
  std::exception_ptr error_;
};

}  // namespace

uint64_t read_through_staging(int64_t n, int node, const std::function<void(int64_t, int64_t, char *)> &read,
                              const std::function<uint64_t(const StagingLease &, int64_t, int64_t)> &hand_over) {
  if (n <= 0) return 0;
  return StagedRead(n, node, read, hand_over).run();
}

}  // namespace rig
