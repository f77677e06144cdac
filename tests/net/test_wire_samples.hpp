// What the wire suites share: one message of each kind, op and part kind,
// a builder of raw bytes that writes the layout wire_messages.hpp states
// (independently of the encoder, so that the suites pin the layout and
// can write what the encoder refuses to), and checks of refusals.
#pragma once

#include "wire_bounds.hpp"
#include "wire_decode.hpp"
#include "wire_encode.hpp"
#include "wire_messages.hpp"

#include <criterion/criterion.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wire = rig::net::wire;

// Bytes as the layout lays them: little-endian, fixed-width, no padding.
struct Raw {
  std::vector<uint8_t> bytes;

  Raw &number(uint64_t value, size_t width) {
    for (size_t i = 0; i < width; i++) bytes.push_back(static_cast<uint8_t>(value >> (8 * i)));
    return *this;
  }
  Raw &u8(uint8_t v) { return number(v, 1); }
  Raw &u16(uint16_t v) { return number(v, 2); }
  Raw &u32(uint32_t v) { return number(v, 4); }
  Raw &u64(uint64_t v) { return number(v, 8); }
  Raw &i32(int32_t v) { return number(static_cast<uint32_t>(v), 4); }
  Raw &raw(std::string_view b) {
    bytes.insert(bytes.end(), b.begin(), b.end());
    return *this;
  }
  Raw &text(std::string_view t) { return u32(static_cast<uint32_t>(t.size())).raw(t); }
  Raw &data(std::string_view d) { return u64(d.size()).raw(d); }
  // The kind and version every message starts with.
  Raw &header(wire::Kind kind, uint16_t version = wire::kWireVersion) {
    return u16(static_cast<uint16_t>(kind)).u16(version);
  }
};

inline std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}
inline wire::Data data_of(std::string_view text) { return wire::Data{bytes_of(text)}; }

// The texts and data the samples view.
inline const std::string kImageBytes =
    "\x7f"
    "ELF image bytes";
inline const std::string kPutBytes = "put bytes";
inline const std::string kGotBytes = "got bytes";
inline const std::string kParameters(24, '\x11');

// One message of each kind, REQUEST once per op and HANDOVER carrying one
// part of each kind, each with distinct values in every field.
inline std::vector<wire::Message> sample_messages() {
  using namespace wire;
  Devices devices{{Account{0, "CPU", "x86_64", 1 << 30, 1 << 20, {1}},
                   Account{1, "CUDA:0", "sm_90", uint64_t{80} << 30, 50 << 20, {0, 2}},
                   Account{2, "CUDA:1", "sm_90", uint64_t{81} << 30, 51 << 20, {}}}};
  Launch launch{7, 8, {1, 2, 3}, {4, 5, 6}, 1024, data_of(kParameters), {{9, 16, 0}, {10, 32, 16}}};
  Handover handover{
      1,
      42,
      {{0, 41}, {2, 7}},
      {Copy{11, 1, 12, 2, 3}, Put{13, 4, data_of(kPutBytes)}, Get{14, 5, 6}, Fill{15, 7, 8, 0xab}, launch}};
  return {
      devices,
      Request{1, 1, 100, Open{"rigd.conf: a=b"}},
      Request{2, 1, 101, Alloc{0, 4096}},
      Request{3, 2, 102, MapPeer{101}},
      Request{4, 0, 103, Image{data_of(kImageBytes)}},
      Request{5, 0, 104, Prepare{{103, "kernel"}}},
      Request{6, 0, 105, Entry{{103, "kernel"}}},
      Answer{6, -8, 9, 10, "the image has no such function"},
      Release{Released::Object, 101},
      Release{Released::Image, 103},
      handover,
      Report{1, 42},
      Bytes{1, 42, 2, 3, data_of(kGotBytes)},
      Failure{"the agent lost CUDA:0: Xid 79"},
      Close{},
  };
}

inline std::vector<uint8_t> encoded(const wire::Message &message) {
  auto bytes = wire::encode(message);
  cr_assert(bytes.ok(), "encode refused: %s", bytes.ok() ? "" : bytes.error().message.c_str());
  return std::move(bytes.value());
}

// bytes, decoded; the suite fails where they are refused.
inline wire::Message decoded(std::span<const uint8_t> bytes) {
  auto message = wire::decode(bytes);
  cr_assert(message.ok(), "decode refused: %s", message.ok() ? "" : message.error().message.c_str());
  return std::move(message.value());
}

// The decoder refuses bytes with exactly why.
inline void assert_decode_refuses(std::span<const uint8_t> bytes, const std::string &why) {
  auto message = wire::decode(bytes);
  cr_assert(!message.ok(), "decoded what it should refuse with \"%s\"", why.c_str());
  cr_assert(message.error().message == why, "refused with \"%s\", not \"%s\"", message.error().message.c_str(),
            why.c_str());
}

// The encoder refuses message with exactly why.
inline void assert_encode_refuses(const wire::Message &message, const std::string &why) {
  auto bytes = wire::encode(message);
  cr_assert(!bytes.ok(), "encoded what it should refuse with \"%s\"", why.c_str());
  cr_assert(bytes.error().message == why, "refused with \"%s\", not \"%s\"", bytes.error().message.c_str(),
            why.c_str());
}

// The message and its bytes, which the encoder writes and the decoder
// reads back.
inline void assert_accepted(const wire::Message &message, const Raw &raw) {
  cr_assert(encoded(message) == raw.bytes, "the message encodes to other bytes than its layout");
  cr_assert(decoded(raw.bytes) == message, "the bytes decode to another message");
}

// The encoder refuses the message and the decoder its bytes.
inline void assert_refused(const wire::Message &message, const std::string &encode_why, const Raw &raw,
                           const std::string &decode_why) {
  assert_encode_refuses(message, encode_why);
  assert_decode_refuses(raw.bytes, decode_why);
}
