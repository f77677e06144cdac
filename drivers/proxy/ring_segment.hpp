// The layout of a client's ring segment (protocol.h): rigd lays it out as it
// makes the segment, the client checks what it maps, and both find the two
// rings and the payload arena in it from a layout they trust (rigd its own,
// the client a checked copy).
#pragma once

#include "protocol.h"
#include "ring.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace rig::proxy {

// What a ring segment holds: each ring's capacity (valid_ring_capacity's)
// and the payload arena's size.
struct RingSegmentShape {
  uint32_t submission_entries;
  uint32_t completion_entries;
  uint64_t payload_bytes;
};

// The header of a segment of that shape, its size included, or nothing if a
// capacity is not a ring's or the whole would exceed 2^40 bytes.
std::optional<rig_proxy_ring_segment> lay_out_ring_segment(const RingSegmentShape &shape) noexcept;

// Whether header, a copy of the header of a segment mapped with
// mapped_bytes, is one lay_out_ring_segment makes for its own shape, of
// this protocol's version, and fits the mapping.
bool valid_ring_segment(const rig_proxy_ring_segment &header, uint64_t mapped_bytes) noexcept;

// The parts of a mapped ring segment, found through a trusted layout.
class RingSegment {
 public:
  RingSegment(std::byte *base, const rig_proxy_ring_segment &layout) noexcept
      : base_(base), layout_(layout) {}

  // The client's end of each ring.
  RingProducer<rig_proxy_entry> submission_producer() const noexcept;
  RingConsumer<rig_proxy_completion> completion_consumer() const noexcept;
  // rigd's end of each ring.
  RingConsumer<rig_proxy_entry> submission_consumer() const noexcept;
  RingProducer<rig_proxy_completion> completion_producer() const noexcept;

  // Wakes the submission ring's consumer if it sleeps on the ring's futex,
  // whatever its flag says: for rigd to end its own poller.
  void wake_submission_consumer() const noexcept;

  // The client's sleepers word (protocol.h).
  uint32_t *word_sleepers() const noexcept { return at<uint32_t>(layout_.sleepers_offset); }

  PayloadArena payload() const noexcept { return {base_ + layout_.payload_offset, layout_.payload_bytes}; }

 private:
  template <class T>
  T *at(uint64_t offset) const noexcept {
    return reinterpret_cast<T *>(base_ + offset);
  }

  std::byte *base_;
  rig_proxy_ring_segment layout_;
};

}  // namespace rig::proxy
