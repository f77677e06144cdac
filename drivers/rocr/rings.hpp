// Resources a device's submissions take in the order of their values and
// give back in that order, once the word passes the value that took them:
// host memory for kernel arguments and words' values, and signals.
#pragma once

#include <cstdint>
#include <optional>

namespace rig::rocr {

// Blocks of bytes of a ring of fixed capacity.  Positions only grow; a
// block never wraps past the ring's end (it starts the next lap instead).
class ByteRing {
 public:
  explicit ByteRing(uint64_t capacity) : capacity_(capacity) {}
  // The offset in the ring of n bytes on align (a power of two that
  // divides the capacity), or nullopt where they do not fit now.
  std::optional<uint64_t> take(uint64_t n, uint64_t align) {
    uint64_t start = round_up(head_, align);
    if (start % capacity_ + n > capacity_) start = round_up(head_, capacity_);
    if (n > capacity_ || start + n - tail_ > capacity_) return std::nullopt;
    head_ = start + n;
    return start % capacity_;
  }
  uint64_t head() const { return head_; }
  // Gives back every block taken before position (an earlier head()).
  void release_to(uint64_t position) { tail_ = position; }
  // An empty ring of the same capacity, to ask what fits at all.
  ByteRing empty() const { return ByteRing(capacity_); }

 private:
  static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
  uint64_t capacity_, head_ = 0, tail_ = 0;
};

// Slots of a ring of count entries, taken one at a time: the nth slot taken
// is entry n % count.
class SlotRing {
 public:
  explicit SlotRing(uint64_t count) : count_(count) {}
  std::optional<uint64_t> take() {
    if (head_ - tail_ == count_) return std::nullopt;
    return head_++;
  }
  uint64_t head() const { return head_; }
  uint64_t tail() const { return tail_; }
  uint64_t count() const { return count_; }
  void release_to(uint64_t position) { tail_ = position; }
  SlotRing empty() const { return SlotRing(count_); }

 private:
  uint64_t count_, head_ = 0, tail_ = 0;
};

}  // namespace rig::rocr
