// The decoder refuses what is not a whole message of the wire, saying
// the kind, the field and the numbers: bytes cut short at every length,
// bytes past a message's end, an unknown kind, op or part kind, another
// wire version, a size past its kind's bound (checked before reading a
// field), counts and lengths that claim more than the bytes hold (checked
// before anything is allocated for them).  Each input lies in memory of
// its exact size, so that under AddressSanitizer a read past it fails the
// suite.
//
// The messages are those of PROXY-02 (requests, answers, releases,
// hand-overs), PROXY-03 (reports), PROXY-37 (bytes) and PROXY-89
// (failures); the refusals are the codec's own rules.
#include "test_wire_samples.hpp"

#include <limits>

using namespace wire;

namespace {

// The bytes in memory of their own, exactly as long.
std::vector<uint8_t> alone(std::span<const uint8_t> bytes) { return {bytes.begin(), bytes.end()}; }

std::string why_refused(std::span<const uint8_t> bytes) {
  std::vector<uint8_t> copy = alone(bytes);
  auto message = decode(copy);
  cr_assert(!message.ok(), "decoded a message from %zu bytes it should refuse", bytes.size());
  return message.error().message;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

std::string name_of(const Message &message) { return kind_name(static_cast<uint16_t>(kind_of(message))); }

// "a REPORT", "an ANSWER".
std::string a_kind(Kind kind) {
  std::string name = kind_name(static_cast<uint16_t>(kind));
  return (kind == Kind::Answer ? "an " : "a ") + name;
}

}  // namespace

// Every sample cut at every byte is refused: before its kind and version,
// or with the end the field needs and the bytes there are.
Test(wire_refusals, every_message_cut_short_at_every_byte_is_refused_with_its_numbers) {
  for (const Message &message : sample_messages()) {
    std::vector<uint8_t> bytes = encoded(message);
    for (size_t n = 0; n < bytes.size(); n++) {
      std::string why = why_refused({bytes.data(), n});
      if (n < layout::kHeader) {
        cr_assert(why == "a message of " + std::to_string(n) + (n == 1 ? " byte" : " bytes") +
                             " ends before its kind and version (4 bytes)",
                  "%s", why.c_str());
        continue;
      }
      cr_assert(contains(why, " ends at byte ") && contains(why, " of " + std::to_string(n) + ", in "),
                "a %s cut at byte %zu of %zu: \"%s\"", name_of(message).c_str(), n, bytes.size(), why.c_str());
      cr_assert(contains(why, name_of(message)), "%s", why.c_str());
    }
  }
}

// Cut within a field, the refusal names the list, the item and the field.
Test(wire_refusals, a_cut_names_the_list_the_item_and_the_field) {
  std::string put(200, 'p');
  std::vector<uint8_t> one_put = encoded(Handover{1, 1, {}, {Put{{13, 4}, data_of(put)}}});
  // The PUT's bytes lie from byte 50 (after the header, device, value,
  // waits' and parts' counts, the part's kind, target, offset and length).
  cr_assert_eq(why_refused({one_put.data(), 100}),
               "a HANDOVER of 1 part ends at byte 250 of 100, in part 0 (a PUT)'s bytes");
  std::vector<uint8_t> handover = encoded(sample_messages()[10]);
  cr_assert_eq(why_refused({handover.data(), 4 + 4 + 8 + 4 + 12 + 6}),
               "a HANDOVER of 2 waits ends at byte 44 of 38, in waits");
  std::vector<uint8_t> devices = encoded(sample_messages()[0]);
  // Device 2 starts at byte 104, its name's 6 bytes at 112.
  cr_assert_eq(why_refused({devices.data(), 114}),
               "a DEVICES of 3 devices ends at byte 118 of 114, in device 2's name");
  std::vector<uint8_t> alloc = encoded(sample_messages()[2]);
  cr_assert_eq(why_refused({alloc.data(), alloc.size() - 1}), "a REQUEST 2 (an ALLOC) ends at byte 38 of 37, in bytes");
  std::vector<uint8_t> report = encoded(Report{1, 42});
  cr_assert_eq(why_refused({report.data(), 8}), "a REPORT ends at byte 16 of 8, in value");
}

// One byte past a message's end is refused: past the bound of a kind of
// one size, otherwise where the message ends and the bytes do.
Test(wire_refusals, every_message_with_a_trailing_byte_is_refused_with_its_numbers) {
  for (const Message &message : sample_messages()) {
    std::vector<uint8_t> bytes = encoded(message);
    bytes.push_back(0);
    std::string why = why_refused(bytes);
    Kind kind = kind_of(message);
    if (bytes.size() > max_message_size(kind))
      cr_assert_eq(why, a_kind(kind) + " of " + std::to_string(bytes.size()) + " bytes, at most " +
                            std::to_string(bytes.size() - 1));
    else
      cr_assert(contains(why, " ends at byte " + std::to_string(bytes.size() - 1) + ", 1 byte before the end of its " +
                                  std::to_string(bytes.size())),
                "%s", why.c_str());
  }
  std::vector<uint8_t> handover = encoded(sample_messages()[10]);
  handover.insert(handover.end(), {1, 2});
  cr_assert_eq(why_refused(handover), "a HANDOVER of 6 parts ends at byte " + std::to_string(handover.size() - 2) +
                                          ", 2 bytes before the end of its " + std::to_string(handover.size()));
}

Test(wire_refusals, an_unknown_kind_is_refused) {
  for (uint16_t kind : {0, 10, 0xffff}) {
    std::vector<uint8_t> bytes = Raw().u16(kind).u16(1).u64(0).bytes;
    cr_assert_eq(why_refused(bytes),
                 "a message of kind " + std::to_string(kind) + ", not one of the wire's (1 to 9, DEVICES to CLOSE)");
  }
}

Test(wire_refusals, another_wire_version_is_refused) {
  for (const Message &message : sample_messages()) {
    for (uint16_t version : {0, 2, 0xffff}) {
      std::vector<uint8_t> bytes = encoded(message);
      bytes[2] = static_cast<uint8_t>(version);
      bytes[3] = static_cast<uint8_t>(version >> 8);
      cr_assert_eq(why_refused(bytes),
                   a_kind(kind_of(message)) + " of wire version " + std::to_string(version) + ", not 1");
    }
  }
}

Test(wire_refusals, an_unknown_op_is_refused) {
  for (uint16_t op : {0, 7, 0xffff}) {
    std::vector<uint8_t> bytes = Raw().header(Kind::Request).u64(9).u16(op).u32(1).u64(100).u64(4).bytes;
    cr_assert_eq(why_refused(bytes), "a REQUEST 9 of op " + std::to_string(op) + ", not 1 to 6 (OPEN to ENTRY)");
  }
}

Test(wire_refusals, an_unknown_part_kind_is_refused) {
  for (uint16_t kind : {0, 7, 0xffff}) {
    Raw raw;
    raw.header(Kind::Handover).u32(1).u64(1).u32(0).u32(2);
    raw.u16(3).u64(1).u64(0).u64(1);
    raw.u16(kind).u64(1).u64(0).u64(1);
    cr_assert_eq(why_refused(raw.bytes),
                 "a HANDOVER of 2 parts: part 1 of kind " + std::to_string(kind) + ", not 1 to 6 (COPY to WORDS)");
  }
}

// A kind's bound is checked before a field is read: a REPORT, RELEASE or
// CLOSE has one size, and a DEVICES a largest one.
Test(wire_refusals, a_message_past_its_kinds_bound_is_refused_before_reading) {
  std::vector<uint8_t> report = Raw().header(Kind::Report).u32(1).u64(2).u8(0).bytes;
  cr_assert_eq(why_refused(report), "a REPORT of 17 bytes, at most 16");
  std::vector<uint8_t> close = Raw().header(Kind::Close).u8(0).bytes;
  cr_assert_eq(why_refused(close), "a CLOSE of 5 bytes, at most 4");
  std::vector<uint8_t> devices(max_message_size(Kind::Devices) + 1, 0xff);
  devices[0] = 1, devices[1] = 0, devices[2] = 1, devices[3] = 0;
  cr_assert_eq(why_refused(devices), "a DEVICES of 303113 bytes, at most 303112");
}

// A count is checked against the bytes left before any item is read or
// room made for it: each item takes its fewest bytes.
Test(wire_refusals, a_count_past_the_bytes_left_is_refused_before_reading_its_items) {
  std::vector<uint8_t> parts = Raw().header(Kind::Handover).u32(1).u64(1).u32(0).u32(65536).u64(0).bytes;
  cr_assert_eq(why_refused(parts),
               "a HANDOVER of 65536 parts ends at byte " + std::to_string(24 + 65536 * 26) + " of 32, in parts");
  std::vector<uint8_t> waits = Raw().header(Kind::Handover).u32(1).u64(1).u32(64).u64(0).bytes;
  cr_assert_eq(why_refused(waits),
               "a HANDOVER of 64 waits ends at byte " + std::to_string(20 + 64 * 12) + " of 28, in waits");
  std::vector<uint8_t> devices = Raw().header(Kind::Devices).u32(256).u64(0).bytes;
  cr_assert_eq(why_refused(devices), "a DEVICES of 256 devices ends at byte " +
                                         std::to_string(8 + 256 * layout::kAccountMin) + " of 16, in devices");
  std::vector<uint8_t> reach =
      Raw().header(Kind::Devices).u32(1).u32(0).text("CPU").text("x86").u64(0).u64(0).u32(256).bytes;
  cr_assert_eq(why_refused(reach), "a DEVICES of 1 device ends at byte 1070 of 46, in device 0's reach ids");
  Raw refs;
  refs.header(Kind::Handover).u32(1).u64(1).u32(0).u32(1);
  refs.u16(5).u64(1).u64(2).u32(1).u32(1).u32(1).u32(1).u32(1).u32(1).u32(0).u64(0).u32(256);
  cr_assert_eq(why_refused(refs.bytes), "a HANDOVER of 1 part ends at byte " + std::to_string(82 + 256 * 20) +
                                            " of 82, in part 0 (a LAUNCH)'s refs");
}

// A length that claims more than the bytes hold, up to 2^64 - 1.
Test(wire_refusals, a_length_past_the_bytes_left_is_refused) {
  uint64_t most = std::numeric_limits<uint64_t>::max();
  Raw put;
  put.header(Kind::Handover).u32(1).u64(1).u32(0).u32(1).u16(2).u64(1).u64(0).u64(most);
  cr_assert_eq(why_refused(put.bytes), "a HANDOVER of 1 part ends past byte 2^64 of 50, in part 0 (a PUT)'s bytes");
  std::vector<uint8_t> failure = Raw().header(Kind::Failure).u32(0xffffffff).raw("cause").bytes;
  cr_assert_eq(why_refused(failure), "a FAILURE ends at byte 4294967303 of 13, in root cause");
  std::vector<uint8_t> image = Raw().header(Kind::Request).u64(4).u16(4).u32(0).u64(1).u64(1 << 20).raw("x").bytes;
  cr_assert_eq(why_refused(image), "a REQUEST 4 (an IMAGE) ends at byte 1048610 of 35, in image");
}
