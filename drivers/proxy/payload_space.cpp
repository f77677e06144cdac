// The client's placement of payloads (payload_space.hpp).
#include "payload_space.hpp"

namespace rig::proxy {

PayloadSpace::PayloadSpace(uint64_t arena_bytes, uint32_t entries) : arena_bytes_(arena_bytes), held_(entries) {}

std::optional<uint64_t> PayloadSpace::place(uint32_t entry, uint64_t bytes, uint32_t released) {
  // Entry n is released once released - n - 1, in 32-bit arithmetic, is
  // below 2^31: the ring holds at most its capacity of entries.
  while (count_ && static_cast<uint32_t>(released - held_[first_].entry - 1) < (uint32_t{1} << 31)) {
    freed_ = held_[first_].end;
    first_ = (first_ + 1) % held_.size();
    count_--;
  }
  // With nothing held, placement starts again at the arena's beginning.
  if (!count_) next_ = freed_ = 0;
  if (bytes == 0 || count_ == held_.size()) return std::nullopt;
  // A payload is contiguous: one that would cross the arena's end starts
  // at its beginning, and the tail it skips counts as placed.
  uint64_t offset = next_ % arena_bytes_;
  uint64_t start = offset + bytes > arena_bytes_ ? next_ + (arena_bytes_ - offset) : next_;
  if (start + bytes - freed_ > arena_bytes_) return std::nullopt;
  next_ = start + bytes;
  held_[(first_ + count_) % held_.size()] = {entry, next_};
  count_++;
  return start % arena_bytes_;
}

}  // namespace rig::proxy
