// The encoder of the wire messages (wire_messages.hpp states the layout).
#pragma once

#include "wire_messages.hpp"
#include "wire_result.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rig::net::wire {

// The bytes of message, or why not: its values break a rule (wire_check,
// the same words the decoder uses), its encoding would pass kMessageMax,
// or memory ran out.  decode gives back an equal message.
Result<std::vector<uint8_t>> encode(const Message &message);

// The length of message's encoding, whatever its values.
uint64_t encoded_size(const Message &message);

// message's encoding in two pieces, head then tail: where the encoding
// ends with the bytes of a data field (a PUT's that ends a HANDOVER, an
// IMAGE's) of at least least_tail bytes, tail is that field's bytes where
// they lie in the caller's memory, and head the encoding before them;
// else tail is empty and head the whole encoding.  So a message's bytes
// can go out without a copy of its bulk.  Refuses as encode does.
struct SplitEncoding {
  std::vector<uint8_t> head;
  std::span<const uint8_t> tail;
};
Result<SplitEncoding> encode_split(const Message &message, size_t least_tail);

}  // namespace rig::net::wire
