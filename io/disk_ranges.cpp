// rig_disk_read_ranges (rig/disk.h): every range checked, then read by a
// few readers at once, each taking the largest range left and copying it as
// rig_buffer_copy does (so each is ordered by its buffers' stamps), the
// engine keeping its own reads of each range deep.
#include "rig_calls.hpp"
#include "rig_internal/buffers.hpp"

#include <rig/disk.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

using rig::io::check;
using rig::io::Held;

// Ranges read at once, each range keeping the engine's queue_depth (32)
// reads in flight: two, 64 reads, passed one range at a time.  64 shards of
// 32 MiB (bench_io_device, one run each, best of 2) read 1.13x one copy
// after another cold and 1.27x warm with two; with four, one per ring of
// the engine, 0.81-0.94x cold (128 reads in flight, three runs) and
// 1.15-1.44x warm.
constexpr size_t kReaders = 2;

std::string range_name(size_t i) { return "range " + std::to_string(i); }

// Checks range i alone: its buffers, offsets and counts.
void check_range(const rig_disk_range_t &r, size_t i, rig_device_t *disk) {
  const std::string name = range_name(i);
  rig::require_buffer(r.file, (name + "'s file").c_str());
  rig::require_buffer(r.dst, (name + "'s dst").c_str());
  if (rig_buffer_device(r.file) != disk)
    rig::throw_invalid(name + "'s file is a buffer on " + rig_device_name(rig_buffer_device(r.file)) +
                       ", not on DISK");
  if (r.file_offset < 0 || r.dst_offset < 0 || r.bytes < 0)
    rig::throw_invalid(name + " has a negative offset or count: file_offset " + std::to_string(r.file_offset) +
                       ", dst_offset " + std::to_string(r.dst_offset) + ", bytes " + std::to_string(r.bytes));
  auto past = [&](int64_t offset, int64_t length, const char *side) {
    if (offset <= length && r.bytes <= length - offset) return;
    rig::throw_invalid(name + "'s bytes [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                       std::to_string(r.bytes) + ") lie past the end of its " + side + "'s " +
                       std::to_string(length) + " bytes");
  };
  past(r.file_offset, rig_buffer_bytes(r.file), "file");
  past(r.dst_offset, rig_buffer_bytes(r.dst), "dst");
  if (rig::allocation_of(r.dst) == rig::allocation_of(r.file))
    rig::throw_invalid(name + "'s dst is memory of its own file");
}

// Refuses two ranges that write a common byte of one allocation.
void check_no_overlap(const rig_disk_range_t *ranges, size_t count) {
  struct Span {
    const void *alloc;
    int64_t begin, end;
    size_t index;
  };
  std::vector<Span> spans;
  for (size_t i = 0; i < count; i++) {
    const rig_disk_range_t &r = ranges[i];
    int64_t dst_offset = 0;
    rig_buffer_span(r.dst, &dst_offset, nullptr);
    const int64_t begin = dst_offset + r.dst_offset;
    if (r.bytes > 0) spans.push_back({rig::allocation_of(r.dst), begin, begin + r.bytes, i});
  }
  std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
    return a.alloc != b.alloc ? std::less<const void *>()(a.alloc, b.alloc) : a.begin < b.begin;
  });
  const Span *reach = nullptr;  // of the spans before, the one of this allocation reaching furthest
  for (const Span &s : spans) {
    if (reach && reach->alloc == s.alloc && s.begin < reach->end) {
      const size_t a = std::min(reach->index, s.index), b = std::max(reach->index, s.index);
      rig::throw_invalid(range_name(a) + " and " + range_name(b) + " write overlapping bytes of one allocation: [" +
                         std::to_string(reach->begin) + ", " + std::to_string(reach->end) + ") and [" +
                         std::to_string(s.begin) + ", " + std::to_string(s.end) + ")");
    }
    if (!reach || reach->alloc != s.alloc || s.end > reach->end) reach = &s;
  }
}

// The ranges' views, made before any byte moves, and the readers' shared
// state: the next range to take and the first error.
class Batch {
 public:
  explicit Batch(const rig_disk_range_t *ranges, size_t count) {
    for (size_t i = 0; i < count; i++) {
      const rig_disk_range_t &r = ranges[i];
      if (r.bytes == 0) continue;
      Piece p;
      check(rig_buffer_view(r.file, r.file_offset, r.bytes, &p.from.b));
      check(rig_buffer_view(r.dst, r.dst_offset, r.bytes, &p.to.b));
      p.bytes = r.bytes;
      pieces_.push_back(std::move(p));
    }
    std::stable_sort(pieces_.begin(), pieces_.end(), [](const Piece &a, const Piece &b) { return a.bytes > b.bytes; });
  }

  size_t size() const { return pieces_.size(); }

  // Reads ranges until none is left or one has failed.
  void read() {
    while (!failed_.load(std::memory_order_acquire)) {
      const size_t k = next_.fetch_add(1, std::memory_order_relaxed);
      if (k >= pieces_.size()) return;
      try {
        const Piece &p = pieces_[k];
        rig_box_t row = rig_row(0, 0, p.bytes);
        rig_point_t done;
        check(rig_buffer_submit_copy(p.from.b, p.to.b, &row, 1, nullptr, 0, &done));
        check(rig_point_wait(done));
      } catch (...) {
        std::lock_guard<std::mutex> g(mu_);
        if (!first_error_) first_error_ = std::current_exception();
        failed_.store(true, std::memory_order_release);
      }
    }
  }

  void rethrow() {
    if (first_error_) std::rethrow_exception(first_error_);
  }

 private:
  struct Piece {
    Held from, to;
    int64_t bytes = 0;
  };
  std::vector<Piece> pieces_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  std::exception_ptr first_error_;
};

void read_all(Batch &batch) {
  std::vector<std::thread> helpers;
  const size_t readers = std::min(kReaders, batch.size());
  for (size_t i = 1; i < readers; i++) {
    try {
      helpers.emplace_back([&batch] { batch.read(); });
    } catch (const std::system_error &) {
      break;  // fewer readers: the ranges still all get read
    }
  }
  batch.read();
  for (std::thread &t : helpers) t.join();
  batch.rethrow();
}

}  // namespace

extern "C" {

rig_status_t rig_disk_read_ranges(const rig_disk_range_t *ranges, size_t count) {
  RIG_API_CALL({
    rig::require(ranges != nullptr, "ranges is NULL");
    rig::require(count > 0, "no ranges: the count is 0");
    rig_device_t *disk = nullptr;
    check(rig_disk_device(&disk));
    for (size_t i = 0; i < count; i++) check_range(ranges[i], i, disk);
    check_no_overlap(ranges, count);
    Batch batch(ranges, count);
    read_all(batch);
    return RIG_OK;
  });
}

}  // extern "C"
