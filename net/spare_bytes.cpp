// Byte blocks kept for reuse (spare_bytes.hpp).
#include "spare_bytes.hpp"

#include <algorithm>

namespace rig::net {

std::vector<uint8_t> SpareBytes::take(size_t size) {
  if (size >= kLeast) {
    std::lock_guard lock(mutex_);
    auto fits = std::find_if(spares_.begin(), spares_.end(), [&](const auto &b) { return b.capacity() >= size; });
    if (fits != spares_.end()) {
      std::vector<uint8_t> block = std::move(*fits);
      spares_.erase(fits);
      block.resize(size);  // within its capacity: no allocation
      return block;
    }
  }
  return std::vector<uint8_t>(size);
}

void SpareBytes::give(std::vector<uint8_t> block) noexcept {
  const size_t capacity = block.capacity();
  if (capacity < kLeast || capacity > most_bytes_ || most_blocks_ == 0) return;
  std::lock_guard lock(mutex_);
  auto held = [&] {
    uint64_t bytes = 0;
    for (const auto &b : spares_) bytes += b.capacity();
    return bytes;
  };
  // Room by letting the smallest go, where each is smaller than block.
  while (!spares_.empty() && (spares_.size() >= most_blocks_ || held() + capacity > most_bytes_)) {
    if (spares_.front().capacity() >= capacity) return;
    spares_.erase(spares_.begin());
  }
  auto at = std::find_if(spares_.begin(), spares_.end(), [&](const auto &b) { return b.capacity() >= capacity; });
  spares_.insert(at, std::move(block));
}

size_t SpareBytes::blocks() const {
  std::lock_guard lock(mutex_);
  return spares_.size();
}

}  // namespace rig::net
