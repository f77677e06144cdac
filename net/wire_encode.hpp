// The encoder of the wire messages (wire_messages.hpp states the layout).
#pragma once

#include "wire_messages.hpp"
#include "wire_result.hpp"

#include <cstdint>
#include <vector>

namespace rig::net::wire {

// The bytes of message, or why not: its values break a rule (wire_check,
// the same words the decoder uses), its encoding would pass kMessageMax,
// or memory ran out.  decode gives back an equal message.
Result<std::vector<uint8_t>> encode(const Message &message);

// The length of message's encoding, whatever its values.
uint64_t encoded_size(const Message &message);

}  // namespace rig::net::wire
