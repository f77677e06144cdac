// The decoder of the wire messages (wire_messages.hpp states the layout).
#pragma once

#include "wire_messages.hpp"
#include "wire_result.hpp"

#include <cstdint>
#include <span>

namespace rig::net::wire {

// The message that bytes hold, whole, or why they hold none: too short or
// too long for their kind (checked before any field is read: wire_bounds),
// an unknown kind, op or part kind, another wire version, a field that
// ends past the bytes, bytes after the message's end, or values that break
// a rule (wire_check).  The error names the kind, the field and the
// numbers, such as "a HANDOVER of 3 parts ends at byte 40 of 36, in part
// 2 (a PUT)'s bytes".  Reads only within bytes; the message's texts and
// data are views into them, nothing is copied.
Result<Message> decode(std::span<const uint8_t> bytes);

}  // namespace rig::net::wire
