// The wire messages round-trip: each kind, each REQUEST op and each
// HANDOVER part kind encodes to the layout wire_messages.hpp states,
// decodes to an equal message, and that message encodes to the same
// bytes; decoded data are views into the input.
//
// Asserts the messages' form for: PROXY-02 (requests answered by number,
// releases, hand-overs of one value's work), PROXY-03 (a report of a
// value done), PROXY-04, PROXY-18, PROXY-19, PROXY-28, PROXY-65 (the
// accounts of the agent's devices: id, name, arch, budget, cache_bytes,
// reach), PROXY-37 (a GET's bytes come back in a bytes message), PROXY-44
// (a hand-over larger than 64 MiB), PROXY-45 (waits as device and value,
// parts with their objects and offsets), PROXY-58 (ALLOC of memory kind
// and bytes), PROXY-61, PROXY-79 (RELEASE of an object or an image),
// PROXY-64 (a wait names the agent's id of the word's device), PROXY-69
// (MAP_PEER of a source object), PROXY-73, PROXY-77 (IMAGE, ENTRY),
// PROXY-89 (FAILURE carries the root cause), PROXY-32, PROXY-36 (a
// WORDS part's writes, each an object's word and its value).
#include "test_wire_samples.hpp"

#include <algorithm>

using namespace wire;

namespace {

// What sample_messages() encode to, written field by field.
std::vector<std::vector<uint8_t>> sample_layouts() {
  Raw devices;
  devices.header(Kind::Devices).u32(3);
  devices.u32(0).text("CPU").text("x86_64").u64(1 << 30).u64(1 << 20).u32(1).u32(1);
  devices.u32(1).text("CUDA:0").text("sm_90").u64(uint64_t{80} << 30).u64(50 << 20).u32(2).u32(0).u32(2);
  devices.u32(2).text("CUDA:1").text("sm_90").u64(uint64_t{81} << 30).u64(51 << 20).u32(0);
  auto request = [](uint64_t number, Op op, uint32_t device, uint64_t object) {
    Raw r;
    r.header(Kind::Request).u64(number).u16(static_cast<uint16_t>(op)).u32(device).u64(object);
    return r;
  };
  Raw handover;
  handover.header(Kind::Handover).u32(1).u64(42).u32(2).u32(0).u64(41).u32(2).u64(7).u32(6);
  handover.u16(1).u64(11).u64(1).u64(12).u64(2).u64(3);
  handover.u16(2).u64(13).u64(4).data(kPutBytes);
  handover.u16(3).u64(14).u64(5).u64(6);
  handover.u16(4).u64(15).u64(7).u64(8).u8(0xab);
  handover.u16(5).u64(7).u64(8).u32(1).u32(2).u32(3).u32(4).u32(5).u32(6).u32(1024).data(kParameters);
  handover.u32(2).u64(9).u64(16).u32(0).u64(10).u64(32).u32(16);
  handover.u16(6).u32(2).u64(16).u64(8).u64(0x1122334455667788).u64(17).u64(0).u64(2);
  return {
      devices.bytes,
      request(1, Op::Open, 1, 100).text("rigd.conf: a=b").bytes,
      request(2, Op::Alloc, 1, 101).u32(0).u64(4096).bytes,
      request(3, Op::MapPeer, 2, 102).u64(101).bytes,
      request(4, Op::Image, 0, 103).data(kImageBytes).bytes,
      request(5, Op::Prepare, 0, 104).u64(103).text("kernel").bytes,
      request(6, Op::Entry, 0, 105).u64(103).text("kernel").bytes,
      Raw().header(Kind::Answer).u64(6).i32(-8).u64(9).u64(10).text("the image has no such function").bytes,
      Raw().header(Kind::Release).u16(1).u64(101).bytes,
      Raw().header(Kind::Release).u16(2).u64(103).bytes,
      handover.bytes,
      Raw().header(Kind::Report).u32(1).u64(42).bytes,
      Raw().header(Kind::Bytes).u32(1).u64(42).u32(2).u64(3).data(kGotBytes).bytes,
      Raw().header(Kind::Failure).text("the agent lost CUDA:0: Xid 79").bytes,
      Raw().header(Kind::Close).bytes,
  };
}

// Whether the view lies within bytes.
bool inside(std::span<const uint8_t> view, std::span<const uint8_t> bytes) {
  return view.data() >= bytes.data() && view.data() + view.size() <= bytes.data() + bytes.size();
}

}  // namespace

Test(wire_roundtrip, every_kind_op_and_part_encodes_to_its_layout) {
  auto messages = sample_messages();
  auto layouts = sample_layouts();
  cr_assert_eq(messages.size(), layouts.size());
  for (size_t i = 0; i < messages.size(); i++) {
    cr_assert(encoded(messages[i]) == layouts[i], "sample %zu (kind %d) encodes to another layout", i,
              static_cast<int>(kind_of(messages[i])));
    cr_assert_eq(encoded_size(messages[i]), layouts[i].size(), "sample %zu", i);
  }
}

Test(wire_roundtrip, every_kind_op_and_part_decodes_equal_and_reencodes_the_same_bytes) {
  for (const Message &message : sample_messages()) {
    std::vector<uint8_t> bytes = encoded(message);
    Message back = decoded(bytes);
    cr_assert(back == message, "a %s decodes to another message", kind_name(static_cast<uint16_t>(kind_of(message))));
    cr_assert(encoded(back) == bytes, "a decoded %s encodes to other bytes",
              kind_name(static_cast<uint16_t>(kind_of(message))));
  }
}

// The decoder copies no data: an image's, a PUT's, a launch's parameters
// and a BYTES' bytes are views of the input.
Test(wire_roundtrip, decoded_data_are_views_into_the_input) {
  for (const Message &message : sample_messages()) {
    std::vector<uint8_t> bytes = encoded(message);
    Message back = decoded(bytes);
    if (auto *request = std::get_if<Request>(&back); request && std::holds_alternative<Image>(request->op))
      cr_assert(inside(std::get<Image>(request->op).image.bytes, bytes));
    if (auto *bytes_message = std::get_if<Bytes>(&back)) cr_assert(inside(bytes_message->data.bytes, bytes));
    if (auto *handover = std::get_if<Handover>(&back)) {
      cr_assert(inside(std::get<Put>(handover->parts[1]).data.bytes, bytes));
      cr_assert(inside(std::get<Launch>(handover->parts[4]).parameters.bytes, bytes));
    }
  }
}

// PROXY-44: a proxy with nothing in flight hands over a submission of any
// size, so a HANDOVER's inline bytes may pass 64 MiB.
Test(wire_roundtrip, a_handover_of_65_mib_of_put_bytes_round_trips) {
  std::string put(size_t{65} << 20, '\0');
  for (size_t i = 0; i < put.size(); i += 4096) put[i] = static_cast<char>(i >> 12);
  Handover handover{0, 1, {}, {Put{{1, 0}, data_of(put)}}};
  std::vector<uint8_t> bytes = encoded(handover);
  cr_assert_eq(bytes.size(), layout::kHeader + 4 + 8 + 4 + 4 + 2 + 8 + 8 + 8 + put.size());
  Message back = decoded(bytes);
  cr_assert(back == Message(handover));
  cr_assert(std::ranges::equal(std::get<Put>(std::get<Handover>(back).parts[0]).data.bytes, bytes_of(put)));
}

// The framing's split (machine_channel.hpp): a HANDOVER that ends with a
// PUT encodes as a head, then the PUT's bytes where they lie, the two the
// same bytes as the whole encoding, so that its bytes cross the link with
// no copy into a message first (PROXY-38, PROXY-45); a PUT under the
// least tail, or a message that ends in another field, is all head.
Test(wire_roundtrip, a_handover_ending_in_a_put_splits_before_its_bytes_PROXY_38_PROXY_45) {
  std::string put(size_t{1} << 20, '\0');
  for (size_t i = 0; i < put.size(); i++) put[i] = static_cast<char>(i * 13);
  Handover handover{0, 1, {Wait{2, 3}}, {Fill{{4, 0}, 8, 0x5a}, Put{{1, 16}, data_of(put)}}};
  std::vector<uint8_t> whole = encoded(handover);
  auto split = encode_split(handover, 4096);
  cr_assert(split.ok(), "%s", split.error().message.c_str());
  const SplitEncoding &pieces = split.value();
  cr_assert_eq(pieces.tail.data(), reinterpret_cast<const uint8_t *>(put.data()), "the tail is not the PUT's bytes");
  cr_assert_eq(pieces.tail.size(), put.size());
  cr_assert_eq(pieces.head.size() + pieces.tail.size(), whole.size());
  cr_assert(std::ranges::equal(pieces.head, std::span(whole).first(pieces.head.size())));
  auto small = encode_split(handover, put.size() + 1);
  cr_assert(small.ok() && small.value().tail.empty() && small.value().head == whole);
  Handover ends_in_fill{0, 1, {}, {Put{{1, 16}, data_of(put)}, Fill{{4, 0}, 8, 0x5a}}};
  auto other = encode_split(ends_in_fill, 4096);
  cr_assert(other.ok() && other.value().tail.empty() && other.value().head == encoded(ends_in_fill));
}
