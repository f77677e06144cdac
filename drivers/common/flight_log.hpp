// The values a proxy (of rigd's or of another machine's) handed over that
// its word has not passed yet, and the bytes each moves: what its room
// bounds (rig-remote-proxy.txt: RIG_LATER while too much is in flight).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rig {

// A ring that doubles when full and never shrinks, so that a warm submit
// allocates nothing.  Not thread-safe: a proxy's room and submit, which rig
// calls for one device one at a time, are its only users.
class FlightLog {
 public:
  // Value, moving bytes, is in flight; values are added in order.
  void add(uint64_t value, uint64_t bytes);
  // Forgets the values up to done.
  void retire(uint64_t done) noexcept;
  // The bytes of the values in flight.
  uint64_t bytes() const noexcept { return bytes_; }

 private:
  struct Flight {
    uint64_t value;
    uint64_t bytes;
  };
  std::vector<Flight> ring_;  // a power of two of slots, or none
  size_t first_ = 0;
  size_t count_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace rig
