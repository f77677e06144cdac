// A proxy's values in flight (flight_log.hpp).
#include "flight_log.hpp"

namespace rig {

namespace {

constexpr size_t first_slots = 64;

}  // namespace

void FlightLog::add(uint64_t value, uint64_t bytes) {
  if (count_ == ring_.size()) {
    std::vector<Flight> grown(ring_.empty() ? first_slots : 2 * ring_.size());
    for (size_t i = 0; i < count_; i++) grown[i] = ring_[(first_ + i) & (ring_.size() - 1)];
    ring_.swap(grown);
    first_ = 0;
  }
  ring_[(first_ + count_) & (ring_.size() - 1)] = {value, bytes};
  count_++;
  bytes_ += bytes;
}

void FlightLog::retire(uint64_t done) noexcept {
  while (count_ > 0 && ring_[first_].value <= done) {
    bytes_ -= ring_[first_].bytes;
    first_ = (first_ + 1) & (ring_.size() - 1);
    count_--;
  }
}

}  // namespace rig
