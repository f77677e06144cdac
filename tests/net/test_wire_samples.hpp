// What the wire suites share: the sample messages (wire_sample_messages),
// a builder of raw bytes that writes the layout wire_messages.hpp states
// (independently of the encoder, so that the suites pin the layout and
// can write what the encoder refuses to), and checks of refusals.
#pragma once

#include "wire_bounds.hpp"
#include "wire_decode.hpp"
#include "wire_encode.hpp"
#include "wire_messages.hpp"
#include "wire_sample_messages.hpp"

#include <criterion/criterion.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
    std::span<const uint8_t> from = bytes_of(b);  // bytes to bytes: one memmove
    bytes.insert(bytes.end(), from.begin(), from.end());
    return *this;
  }
  Raw &text(std::string_view t) { return u32(static_cast<uint32_t>(t.size())).raw(t); }
  Raw &data(std::string_view d) { return u64(d.size()).raw(d); }
  // The kind and version every message starts with.
  Raw &header(wire::Kind kind, uint16_t version = wire::kWireVersion) {
    return u16(static_cast<uint16_t>(kind)).u16(version);
  }
};

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
