// The limits of the wire messages' fields (wire_messages.hpp), and the
// largest encoding of each kind, which the decoder enforces before it
// reads a message.
#pragma once

#include "wire_messages.hpp"

#include <cstdint>

namespace rig::net::wire {

inline constexpr uint16_t kWireVersion = 1;

// No message is larger, a HANDOVER's or BYTES' data included: PROXY-44 lets
// a proxy with nothing in flight hand over a submission of any size.
inline constexpr uint64_t kMessageMax = uint64_t{1} << 40;

// DEVICES
inline constexpr uint32_t kDevicesMax = 256;
inline constexpr uint32_t kNameMax = 64;  // a device's name, and its arch
// REQUEST
inline constexpr uint32_t kConfigurationMax = 4096;
inline constexpr uint64_t kImageMax = uint64_t{256} << 20;
inline constexpr uint32_t kFunctionNameMax = 1024;
inline constexpr uint64_t kAllocUnit = 4;  // ALLOC's bytes are a multiple of it
// ANSWER
inline constexpr uint32_t kWhyMax = 1024;
// HANDOVER
inline constexpr uint32_t kWaitsMax = 64;
inline constexpr uint32_t kPartsMax = 65536;
inline constexpr uint32_t kParametersMax = 32768;
inline constexpr uint32_t kRefsMax = 256;
inline constexpr uint32_t kRefBytes = 8;  // an address in the parameters
inline constexpr uint32_t kWordsMax = 65536;  // a WORDS part's writes
inline constexpr uint64_t kWordBytes = 8;     // what a write writes, aligned to it
// FAILURE
inline constexpr uint32_t kRootCauseMax = 4096;

// The encoded sizes of the fields, and of the fixed parts of messages.
namespace layout {
inline constexpr uint64_t kHeader = 2 + 2;  // kind, version
inline constexpr uint64_t kLength = 4;      // a text's length, a list's count
inline constexpr uint64_t kDataLength = 8;  // a run of bytes' length
inline constexpr uint64_t text(uint64_t max) { return kLength + max; }

inline constexpr uint64_t kAccountMin = 4 + text(1) + text(1) + 8 + 8 + kLength;
inline constexpr uint64_t kAccountMax = 4 + text(kNameMax) + text(kNameMax) + 8 + 8 + kLength + 4 * kDevicesMax;
inline constexpr uint64_t kRequestFixed = 8 + 2 + 4 + 8;  // number, op, device, object
inline constexpr uint64_t kWait = 4 + 8;
inline constexpr uint64_t kPartKind = 2;
inline constexpr uint64_t kGet = 8 + 8 + 8;  // the smallest part's fields
inline constexpr uint64_t kRef = 8 + 8 + 4;
inline constexpr uint64_t kWord = 8 + 8 + 8;
}  // namespace layout

// The largest encoding of each kind.
inline constexpr uint64_t max_message_size(Kind kind) {
  using namespace layout;
  switch (kind) {
    case Kind::Devices:
      return kHeader + kLength + kDevicesMax * kAccountMax;
    case Kind::Request:  // an IMAGE is the largest
      return kHeader + kRequestFixed + kDataLength + kImageMax;
    case Kind::Answer:
      return kHeader + 8 + 4 + 8 + 8 + text(kWhyMax);
    case Kind::Release:
      return kHeader + 2 + 8;
    case Kind::Handover:
    case Kind::Bytes:
      return kMessageMax;
    case Kind::Report:
      return kHeader + 4 + 8;
    case Kind::Failure:
      return kHeader + text(kRootCauseMax);
    case Kind::Close:
      return kHeader;
  }
  return 0;
}

}  // namespace rig::net::wire
