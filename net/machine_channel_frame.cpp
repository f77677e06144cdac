#include "machine_channel_frame.hpp"

#include "auth_messages.hpp"
#include "wire_bounds.hpp"
#include "wire_check.hpp"
#include "wire_decode.hpp"
#include "wire_encode.hpp"
#include "wire_words.hpp"

namespace rig::net::channel {

namespace {

using wire::refusal;

// A BYTES' header: its kind and version, device u32, value u64, part u32,
// offset u64 and its data's length u64, little-endian as the wire is.
constexpr size_t kBytesHead = 4 + 4 + 8 + 4 + 8 + 8;

// The least data that ends a client's message and goes from the caller's
// memory (the framing's split): below it, the copy into the encoding
// costs less than a second piece for UCX to gather.
constexpr size_t kLeastSplitTail = size_t{64} << 10;

template <class N>
void put(std::vector<uint8_t> &to, N value) {
  for (size_t i = 0; i < sizeof(N); i++) to.push_back(static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i)));
}

template <class N>
N get(std::span<const std::byte> from, size_t &at) {
  uint64_t value = 0;
  for (size_t i = 0; i < sizeof(N); i++) value |= static_cast<uint64_t>(from[at + i]) << (8 * i);
  at += sizeof(N);
  return static_cast<N>(value);
}

std::vector<uint8_t> encode_bytes_head(const wire::Bytes &bytes) {
  std::vector<uint8_t> head;
  head.reserve(kBytesHead);
  put(head, static_cast<uint16_t>(wire::Kind::Bytes));
  put(head, wire::kWireVersion);
  put(head, bytes.device);
  put(head, bytes.value);
  put(head, bytes.part);
  put(head, bytes.offset);
  put(head, bytes.data.size());
  return head;
}

std::span<const std::byte> as_bytes(std::span<const uint8_t> bytes) { return std::as_bytes(bytes); }
std::span<const uint8_t> as_octets(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()};
}

}  // namespace

UcxStatus send_message(UcxEndpoint &endpoint, const wire::Message &message) {
  const auto id = static_cast<uint16_t>(wire::kind_of(message));
  if (const auto *bytes = std::get_if<wire::Bytes>(&message)) {
    if (auto refused = wire::check(message)) return UcxStatus::failure(refused->message);
    const std::vector<uint8_t> head = encode_bytes_head(*bytes);
    return endpoint.send(id, as_bytes(head), as_bytes(bytes->data.bytes));
  }
  // What only the client sends goes with its bulk from the caller's
  // memory, where the bytes before it fit UCX's header (the framing).
  const bool splits = direction_problem(wire::kind_of(message), false).empty();
  auto split = wire::encode_split(message, splits ? kLeastSplitTail : SIZE_MAX);
  if (split && !split.value().tail.empty()) {
    if (split.value().head.size() <= endpoint.largest_header())
      return endpoint.send(id, as_bytes(split.value().head), as_bytes(split.value().tail));
    split = wire::encode_split(message, SIZE_MAX);  // whole, in the data
  }
  if (!split) return UcxStatus::failure(split.error().message);
  return endpoint.send(id, {}, as_bytes(split.value().head));
}

wire::Result<wire::Bytes> decode_bytes_head(std::span<const std::byte> header, uint64_t length) {
  if (header.size() != kBytesHead)
    return refusal("a BYTES' header of ", wire::count_of(header.size(), "bytes"), ", not ", kBytesHead);
  size_t at = 0;
  const auto kind = get<uint16_t>(header, at);
  const auto version = get<uint16_t>(header, at);
  if (kind != static_cast<uint16_t>(wire::Kind::Bytes))
    return refusal("a BYTES' header of kind ", kind, ", not ", static_cast<uint16_t>(wire::Kind::Bytes));
  if (version != wire::kWireVersion)
    return refusal("a BYTES' header of wire version ", version, ", not ", wire::kWireVersion);
  wire::Bytes head;
  head.device = get<uint32_t>(header, at);
  head.value = get<uint64_t>(header, at);
  head.part = get<uint32_t>(header, at);
  head.offset = get<uint64_t>(header, at);
  const auto stated = get<uint64_t>(header, at);
  if (stated != length)
    return refusal("a BYTES' header states ", wire::count_of(stated, "bytes"), " of data, its message carries ",
                   length);
  if (auto refused = wire::check_bytes_head(head, length)) return *refused;
  return head;
}

wire::Result<wire::Message> decode_message(uint16_t id, std::span<const std::byte> header,
                                           std::span<const std::byte> data) {
  if (id == static_cast<uint16_t>(wire::Kind::Bytes)) {
    auto head = decode_bytes_head(header, data.size());
    if (!head) return head.error();
    wire::Bytes bytes = head.value();
    bytes.data.bytes = as_octets(data);
    wire::Message message = bytes;
    if (auto refused = wire::check(message)) return *refused;
    return message;
  }
  if (!header.empty())
    return refusal(a_message_of(id), " with a header of ", wire::count_of(header.size(), "bytes"),
                   ", which only BYTES has");
  auto decoded = wire::decode(as_octets(data));
  if (!decoded) return decoded;
  const auto kind = static_cast<uint16_t>(wire::kind_of(decoded.value()));
  if (kind != id) return refusal(a_message_of(kind), " under the id of ", a_message_of(id), " (", id, ")");
  return decoded;
}

bool is_wire_id(uint16_t id) { return wire::kind_name(id) != nullptr; }

std::string a_message_of(uint16_t id) {
  switch (id) {
    case kAuthChallengeId:
      return "a CHALLENGE";
    case kAuthProofId:
      return "a PROOF";
    case kAuthAnswerId:
      return "an ACCEPT or REFUSE";
    default:
      if (is_wire_id(id)) return wire::a_kind(static_cast<wire::Kind>(id));
      return wire::words("a message of id ", id);
  }
}

std::string direction_problem(wire::Kind kind, bool from_agent) {
  bool agent = false, client = false;
  switch (kind) {
    case wire::Kind::Devices:
    case wire::Kind::Answer:
    case wire::Kind::Report:
    case wire::Kind::Bytes:
      agent = true;
      break;
    case wire::Kind::Failure:
      agent = client = true;
      break;
    default:
      client = true;
  }
  if (from_agent ? agent : client) return {};
  return wire::a_kind(kind) +
         (from_agent ? " from the agent, which only clients send" : " from the client, which only the agent sends");
}

uint64_t largest_data(uint16_t id) {
  if (is_wire_id(id)) return wire::max_message_size(static_cast<wire::Kind>(id));
  return kProofMax;
}

UcxResult<std::unique_ptr<UcxLink>> make_link(const UcxOptions &options, const ChannelPlace &place,
                                              const std::function<void(const UcxMessage &)> &deliver) {
  auto link = UcxLink::create(options);
  if (!link.ok()) return link;
  for (uint16_t id : kChannelIds) {
    UcxHandler handler;
    handler.place = [place, id](UcxEndpoint &from, std::span<const std::byte> header, size_t length) {
      return place(from, id, header, length);
    };
    handler.deliver = deliver;
    link.value()->on_message(id, std::move(handler));
  }
  return link;
}

wire::Result<std::vector<uint8_t>> encode_accounts(const std::vector<MachineAccount> &accounts) {
  wire::Devices devices;
  for (const MachineAccount &account : accounts)
    devices.accounts.push_back(
        {account.id, account.name, account.arch, account.budget, account.cache_bytes, account.reach});
  return wire::encode(devices);
}

std::vector<MachineAccount> owned_accounts(const wire::Devices &devices) {
  std::vector<MachineAccount> owned;
  for (const wire::Account &account : devices.accounts)
    owned.push_back({account.id, std::string(account.name), std::string(account.arch), account.budget,
                     account.cache_bytes, account.reach});
  return owned;
}

}  // namespace rig::net::channel
