// The layout of a ring segment (ring_segment.hpp).
#include "ring_segment.hpp"

#include <cstring>

namespace rig::proxy {

namespace {

constexpr uint64_t line = RIG_PROXY_CACHE_LINE;
constexpr uint64_t largest_segment = uint64_t{1} << 40;

constexpr uint64_t round_up(uint64_t n) { return (n + line - 1) / line * line; }

}  // namespace

std::optional<rig_proxy_ring_segment> lay_out_ring_segment(const RingSegmentShape &shape) noexcept {
  if (!valid_ring_capacity(shape.submission_entries) || !valid_ring_capacity(shape.completion_entries) ||
      shape.payload_bytes > largest_segment)
    return std::nullopt;
  rig_proxy_ring_segment s{};
  s.segment.magic = RIG_PROXY_MAGIC_RING;
  s.segment.version = RIG_PROXY_VERSION;
  s.submission_entries = shape.submission_entries;
  s.completion_entries = shape.completion_entries;
  // Each part starts a cache line; none exceeds 2^40 bytes, so no sum
  // overflows.
  s.submission_offset = round_up(sizeof s);
  s.submission_slots = s.submission_offset + sizeof(rig_proxy_ring_header);
  s.completion_offset = round_up(s.submission_slots + uint64_t{shape.submission_entries} * sizeof(rig_proxy_entry));
  s.completion_slots = s.completion_offset + sizeof(rig_proxy_ring_header);
  s.sleepers_offset = round_up(s.completion_slots + uint64_t{shape.completion_entries} * sizeof(rig_proxy_completion));
  s.payload_offset = s.sleepers_offset + line;
  s.payload_bytes = shape.payload_bytes;
  s.segment.bytes = round_up(s.payload_offset + s.payload_bytes);
  if (s.segment.bytes > largest_segment) return std::nullopt;
  return s;
}

bool valid_ring_segment(const rig_proxy_ring_segment &header, uint64_t mapped_bytes) noexcept {
  if (header.segment.magic != RIG_PROXY_MAGIC_RING || header.segment.version != RIG_PROXY_VERSION)
    return false;
  auto expected = lay_out_ring_segment(
      {header.submission_entries, header.completion_entries, header.payload_bytes});
  // Every offset is the one the shape implies: comparing the whole header
  // checks them all at once (it has no padding: the static_assert below).
  return expected && std::memcmp(&*expected, &header, sizeof header) == 0 &&
         expected->segment.bytes <= mapped_bytes;
}
static_assert(sizeof(rig_proxy_ring_segment) == 16 + 8 + 7 * 8, "no padding in the ring segment's header");

RingProducer<rig_proxy_entry> RingSegment::submission_producer() const noexcept {
  return {at<rig_proxy_ring_header>(layout_.submission_offset), at<rig_proxy_entry>(layout_.submission_slots),
          layout_.submission_entries};
}

RingConsumer<rig_proxy_entry> RingSegment::submission_consumer() const noexcept {
  return {at<rig_proxy_ring_header>(layout_.submission_offset), at<rig_proxy_entry>(layout_.submission_slots),
          layout_.submission_entries};
}

RingProducer<rig_proxy_completion> RingSegment::completion_producer() const noexcept {
  return {at<rig_proxy_ring_header>(layout_.completion_offset),
          at<rig_proxy_completion>(layout_.completion_slots), layout_.completion_entries};
}

RingConsumer<rig_proxy_completion> RingSegment::completion_consumer() const noexcept {
  return {at<rig_proxy_ring_header>(layout_.completion_offset),
          at<rig_proxy_completion>(layout_.completion_slots), layout_.completion_entries};
}

void RingSegment::wake_submission_consumer() const noexcept {
  futex_wake(&at<rig_proxy_ring_header>(layout_.submission_offset)->sleeping, 1);
}

}  // namespace rig::proxy
