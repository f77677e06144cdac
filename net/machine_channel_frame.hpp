// What both ends of a machine connection (machine_channel.hpp) share: a
// wire message as an active message (its framing) and back, which side
// sends which kind, the accounts of DEVICES owned, and how a handler on
// the link's progress thread fails its connection.
#pragma once

#include "machine_channel.hpp"
#include "ucx_endpoint.hpp"
#include "wire_messages.hpp"
#include "wire_result.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace rig::net::channel {

// Frames message (machine_channel.hpp's Framing), checks it and sends it
// on endpoint, waiting until UCX completed it.
UcxStatus send_message(UcxEndpoint &endpoint, const wire::Message &message);

// The fields of a BYTES from its active message's header, checked with
// the length of its data (the message's data, not yet landed): its data
// empty.
wire::Result<wire::Bytes> decode_bytes_head(std::span<const std::byte> header, uint64_t length);

// The wire message of an active message of id (1 to 9), decoded and
// checked; its views point into header's and data's bytes.
wire::Result<wire::Message> decode_message(uint16_t id, std::span<const std::byte> header,
                                           std::span<const std::byte> data);

// The ids of the link: the wire's kinds and the authentication's three.
bool is_wire_id(uint16_t id);
inline constexpr uint16_t kChannelIds[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, kAuthChallengeId, kAuthProofId, kAuthAnswerId};
// "a REQUEST", "a CHALLENGE", "a message of id 12".
std::string a_message_of(uint16_t id);

// Which end sends a kind: the agent DEVICES, ANSWER, REPORT and BYTES,
// the client REQUEST, RELEASE, HANDOVER and CLOSE, either FAILURE.  Empty
// where the agent (from_agent) or the client sends kind, else why not.
std::string direction_problem(wire::Kind kind, bool from_agent);

// The largest data an active message of id may carry: its kind's largest
// encoding, or a PROOF's (the largest message of the authentication).
uint64_t largest_data(uint16_t id);

// DEVICES of accounts, encoded, or why not (wire_check's rules).
wire::Result<std::vector<uint8_t>> encode_accounts(const std::vector<MachineAccount> &accounts);
std::vector<MachineAccount> owned_accounts(const wire::Devices &devices);

// A link whose handlers of every id of kChannelIds place with place (the
// message's id passed) and deliver with deliver, or UCX's reason why none.
using ChannelPlace =
    std::function<std::span<std::byte>(UcxEndpoint &from, uint16_t id, std::span<const std::byte> header, size_t length)>;
UcxResult<std::unique_ptr<UcxLink>> make_link(const UcxOptions &options, const ChannelPlace &place,
                                              const std::function<void(const UcxMessage &)> &deliver);

// Thrown by a handler of the link to fail its connection: the link fails
// (and closes) an endpoint whose handler threw, and the handler's own
// failure, recorded first, is the connection's reason.
struct ConnectionFailed : std::exception {
  const char *what() const noexcept override { return "the connection failed"; }
};

}  // namespace rig::net::channel
