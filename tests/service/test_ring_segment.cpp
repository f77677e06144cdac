/* Tests of the ring segment's layout (drivers/proxy/ring_segment.hpp).
 *
 * No rule ID: the layout is the design's (DESIGN.md "The per-host service":
 * the protocol carries a version, rigd copies and checks what a client can
 * write).  Asserts: the parts of a segment start cache lines, do not
 * overlap and fit its size; a client accepts the header rigd wrote and
 * refuses one of another version or magic, one that moved a part, one
 * larger than its mapping; shapes whose capacity is not a power of two get
 * no layout. */
#include "ring_segment.hpp"

#include <criterion/criterion.h>

#include <cstring>

using namespace rig::proxy;

namespace {

rig_proxy_ring_segment laid_out() {
  auto layout = lay_out_ring_segment({64, 128, 1 << 20});
  cr_assert(layout.has_value());
  return *layout;
}

}  // namespace

Test(ring_segment, parts_start_lines_in_order_and_fit) {
  auto s = laid_out();
  cr_assert(s.segment.magic == RIG_PROXY_MAGIC_RING && s.segment.version == RIG_PROXY_VERSION);
  uint64_t starts[] = {s.submission_offset, s.submission_slots, s.completion_offset, s.completion_slots,
                       s.sleepers_offset,   s.payload_offset};
  for (uint64_t start : starts) cr_assert(start % RIG_PROXY_CACHE_LINE == 0, "%lu", (unsigned long)start);
  cr_assert(s.submission_offset >= sizeof s);
  cr_assert(s.submission_slots >= s.submission_offset + sizeof(rig_proxy_ring_header));
  cr_assert(s.completion_offset >= s.submission_slots + 64 * sizeof(rig_proxy_entry));
  cr_assert(s.completion_slots >= s.completion_offset + sizeof(rig_proxy_ring_header));
  cr_assert(s.sleepers_offset >= s.completion_slots + 128 * sizeof(rig_proxy_completion));
  cr_assert(s.payload_offset >= s.sleepers_offset + RIG_PROXY_CACHE_LINE, "the sleepers word has its line");
  cr_assert(s.segment.bytes >= s.payload_offset + s.payload_bytes);
  cr_assert(s.payload_bytes == 1 << 20);
}

Test(ring_segment, the_client_accepts_what_rigd_laid_out) {
  auto s = laid_out();
  cr_assert(valid_ring_segment(s, s.segment.bytes));
  cr_assert(valid_ring_segment(s, s.segment.bytes + 4096), "a mapping may be larger");
}

Test(ring_segment, the_client_refuses_a_header_it_cannot_trust) {
  auto s = laid_out();
  auto changed = s;
  changed.segment.version = RIG_PROXY_VERSION + 1;
  cr_assert(!valid_ring_segment(changed, s.segment.bytes), "another version");
  changed = s;
  changed.segment.magic = RIG_PROXY_MAGIC_COMPLETION;
  cr_assert(!valid_ring_segment(changed, s.segment.bytes), "another segment");
  changed = s;
  changed.payload_offset += RIG_PROXY_CACHE_LINE;
  cr_assert(!valid_ring_segment(changed, s.segment.bytes), "a part moved");
  changed = s;
  changed.submission_entries = 48;
  cr_assert(!valid_ring_segment(changed, s.segment.bytes), "a capacity not a power of two");
  cr_assert(!valid_ring_segment(s, s.segment.bytes - 1), "a segment larger than its mapping");
}

Test(ring_segment, only_powers_of_two_make_rings) {
  cr_assert(!lay_out_ring_segment({0, 8, 0}).has_value());
  cr_assert(!lay_out_ring_segment({8, 12, 0}).has_value());
  cr_assert(!lay_out_ring_segment({8, 8, uint64_t{1} << 41}).has_value(), "an arena beyond 2^40 bytes");
  cr_assert(lay_out_ring_segment({1, 1, 0}).has_value());
}
