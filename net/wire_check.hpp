// The rules a message's values keep beyond their encoding (the limits of
// wire_bounds.hpp, object ids non-zero, a device list with one host, a
// launch's refs inside its parameters, ...): what the encoder refuses to
// write and the decoder refuses to take, in the same words.
#pragma once

#include "wire_messages.hpp"
#include "wire_result.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace rig::net::wire {

// Nothing, or why message breaks a rule: its kind, the field, the numbers.
std::optional<Error> check(const Message &message);

// Nothing, or why a BYTES whose fields are head's would break a rule with
// length bytes of data (check's words), before its data is anywhere.
std::optional<Error> check_bytes_head(const Bytes &head, uint64_t length);

// Nothing, or why a list of count items (noun, plural) of subject ("a
// HANDOVER") is out of [min, max]; the decoder checks each count before
// it reads the items.
std::optional<Error> check_count(std::string_view subject, uint64_t count, uint64_t min, uint64_t max,
                                 std::string_view noun);

}  // namespace rig::net::wire
