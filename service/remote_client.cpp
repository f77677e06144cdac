// A remote client's requests and releases (remote_client.hpp).
#include "remote_client.hpp"

#include "remote_accounts.hpp"

#include <cstring>
#include <span>
#include <variant>

namespace rigd {

namespace wire = rig::net::wire;

namespace {

std::span<const std::byte> bytes_of(std::string_view text) { return std::as_bytes(std::span(text)); }

}  // namespace

rig_proxy_completion RemoteClient::run(uint16_t opcode, uint32_t proxy, std::initializer_list<uint64_t> args,
                                       std::span<const std::byte> tail, bool code, uint16_t flags) {
  size_t head = code ? sizeof(rig_proxy_code) : 0;
  scratch_.assign(head, std::byte{0});
  scratch_.insert(scratch_.end(), tail.begin(), tail.end());
  requests_.use_payload({scratch_.data(), scratch_.size()});
  rig_proxy_entry entry{};
  entry.opcode = opcode;
  entry.flags = flags;
  entry.device = proxy;
  size_t i = 0;
  for (uint64_t a : args) entry.args[i++] = a;
  entry.payload_bytes = static_cast<uint32_t>(scratch_.size());
  // A hand-over past the values its device holds for the client waits
  // for one to be done, and this client's next messages with it, as a
  // local client's ring waits (protocol.h's RIG_PROXY_VALUES_IN_FLIGHT).
  while (!requests_.has_room(entry)) requests_.await_room(entry, std::chrono::milliseconds(100));
  rig_proxy_completion answer{};
  if (requests_.handle(entry, answer)) return answer;
  // An allocation that waits for room on its waiter thread: this client's
  // next message waits for it, as its answer comes first.
  while (requests_.waiting())
    if (requests_.finish_waiting(std::chrono::milliseconds(100), answer)) return answer;
  // A hand-over rigd took has no completion.
  answer.status = RIG_OK;
  return answer;
}

std::string RemoteClient::told() const {
  if (scratch_.size() < sizeof(rig_proxy_code)) return {};
  rig_proxy_code code;
  std::memcpy(&code, scratch_.data(), sizeof code);
  return std::string(code.why, strnlen(code.why, sizeof code.why));
}

std::optional<uint32_t> RemoteClient::proxy_of(uint32_t account) const {
  if (account >= proxy_of_account_.size() || proxy_of_account_[account] == no_proxy) return std::nullopt;
  return proxy_of_account_[account];
}

const RemoteClient::Object *RemoteClient::object(uint64_t id, Kind kind) const {
  auto it = objects_by_id_.find(id);
  return it != objects_by_id_.end() && it->second.kind == kind ? &it->second : nullptr;
}

std::optional<std::string> RemoteClient::not_fresh(uint64_t id) const {
  if (id == 0) return "a REQUEST names object 0 for what it makes";
  if (objects_by_id_.count(id)) return "a REQUEST names object " + std::to_string(id) + ", which names another already";
  return std::nullopt;
}

std::optional<std::string> RemoteClient::request(const wire::Request &r, RemoteAnswer &answer) {
  answer = {};
  bool opens = std::holds_alternative<wire::Open>(r.op);
  bool makes = !opens && !std::holds_alternative<wire::Prepare>(r.op);
  if (makes)
    if (auto breach = not_fresh(r.object)) return breach;
  if (!opens && !proxy_of(r.device)) {
    answer.why = "device " + std::to_string(r.device) + " is not open on this connection";
    return std::nullopt;
  }
  return std::visit(
      [&](const auto &op) -> std::optional<std::string> {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<Op, wire::Open>) {
          open(r, op, answer);
        } else if constexpr (std::is_same_v<Op, wire::Alloc>) {
          alloc(r, op, answer);
        } else if constexpr (std::is_same_v<Op, wire::MapPeer>) {
          return map_peer(r, op, answer);
        } else if constexpr (std::is_same_v<Op, wire::Image>) {
          image(r, op, answer);
        } else {
          return function(r, op, std::is_same_v<Op, wire::Entry>, answer);
        }
        return std::nullopt;
      },
      r.op);
}

void RemoteClient::open(const wire::Request &r, const wire::Open &o, RemoteAnswer &answer) {
  std::optional<size_t> served = served_of_account(r.device, served_.size());
  if (!served) {
    answer.why = "rigd serves no device " + std::to_string(r.device) + " (" + std::to_string(served_.size()) +
                 " devices)";
    return;
  }
  if (proxy_of(r.device)) {
    answer.why = "device " + std::to_string(r.device) + " is open already on this connection";
    return;
  }
  // Its values start after 0: the first hand-over is value 1.
  rig_proxy_completion c =
      run(RIG_PROXY_OP_OPEN, static_cast<uint32_t>(*served), {0}, bytes_of(o.configuration), true, RIG_PROXY_OPEN_WHY);
  answer.status = c.status;
  if (c.status != RIG_OK) {
    answer.why = told();
    return;
  }
  auto proxy = static_cast<uint32_t>(c.value);
  proxy_of_account_[r.device] = proxy;
  if (account_of_proxy_.size() <= proxy) account_of_proxy_.resize(proxy + 1, no_proxy);
  account_of_proxy_[proxy] = r.device;
}

void RemoteClient::alloc(const wire::Request &r, const wire::Alloc &a, RemoteAnswer &answer) {
  rig_proxy_completion c = run(RIG_PROXY_OP_ALLOC, *proxy_of(r.device), {a.memory, a.bytes});
  answer.status = c.status;
  answer.detail = c.detail;
  if (c.status == RIG_OK) {
    objects_by_id_[r.object] = {Kind::memory, c.value, a.bytes};
    return;
  }
  answer.why = told();
  if (!answer.why.empty()) return;
  if (c.status == RIG_EINVAL && a.memory > RIG_MEMORY_MAPPED)
    answer.why = "memory kind " + std::to_string(a.memory) + " is none of rig's (0 to " +
                 std::to_string(RIG_MEMORY_MAPPED) + ")";
  else
    answer.why = "device " + std::to_string(r.device) + " cannot allocate " + std::to_string(a.bytes) +
                 " bytes of memory kind " + std::to_string(a.memory) + ": " + rig_last_error();
}

std::optional<std::string> RemoteClient::map_peer(const wire::Request &r, const wire::MapPeer &m,
                                                  RemoteAnswer &answer) {
  const Object *source = object(m.source, Kind::memory);
  if (!source) return "a MAP_PEER maps object " + std::to_string(m.source) + ", which is no memory of the connection's";
  uint64_t bytes = source->bytes;
  rig_proxy_completion c = run(RIG_PROXY_OP_MAP_PEER, *proxy_of(r.device), {source->id}, {}, false);
  answer.status = c.status;
  if (c.status == RIG_OK && c.value != 0) {
    objects_by_id_[r.object] = {Kind::memory, c.value, bytes};
    return std::nullopt;
  }
  answer.status = RIG_EINVAL;
  answer.why = "device " + std::to_string(r.device) + " does not map the memory of object " + std::to_string(m.source);
  return std::nullopt;
}

void RemoteClient::image(const wire::Request &r, const wire::Image &i, RemoteAnswer &answer) {
  rig_proxy_completion c =
      run(RIG_PROXY_OP_IMAGE_LOAD, *proxy_of(r.device), {0, 0}, std::as_bytes(std::span(i.image.bytes)));
  answer.status = c.status;
  if (c.status == RIG_OK)
    objects_by_id_[r.object] = {Kind::image, c.value, 0};
  else
    answer.why = told();
}

std::optional<std::string> RemoteClient::function(const wire::Request &r, const wire::FunctionOfImage &f, bool entry,
                                                  RemoteAnswer &answer) {
  const Object *image = object(f.image, Kind::image);
  if (!image) return "a REQUEST names image " + std::to_string(f.image) + ", which the connection does not hold";
  rig_proxy_completion c = run(entry ? RIG_PROXY_OP_IMAGE_ENTRY : RIG_PROXY_OP_IMAGE_PREPARE, *proxy_of(r.device),
                               {image->id}, bytes_of(f.function));
  answer.status = c.status;
  if (c.status != RIG_OK) {
    answer.why = told();
    if (answer.why.empty()) answer.why = "image " + std::to_string(f.image) + " has no function " + std::string(f.function);
    return std::nullopt;
  }
  if (entry && c.value == 0) {
    // rigd's entry of a function the image lacks: no object, and an answer
    // the client takes for none (PROXY-77).
    answer.status = RIG_EINVAL;
    answer.why = "image " + std::to_string(f.image) + " has no function " + std::string(f.function);
    return std::nullopt;
  }
  if (entry) {
    // ENTRY's answer, as a local client's: detail the function's max
    // threads in a group; value 1 where an entry ref of it places its
    // address, else 0 (the object id stands for the function's).
    objects_by_id_[r.object] = {Kind::function, c.value, 0};
    answer.value = (c.flags & RIG_PROXY_ENTRY_ADDRESS) ? 1 : 0;
    answer.detail = c.detail;
  }
  return std::nullopt;
}

std::optional<std::string> RemoteClient::release(const wire::Release &r) {
  bool image = r.what == wire::Released::Image;
  auto it = objects_by_id_.find(r.id);
  bool fits = it != objects_by_id_.end() && (it->second.kind == Kind::image) == image;
  if (!fits)
    return "a RELEASE of " + std::string(image ? "image " : "object ") + std::to_string(r.id) +
           ", which the connection does not hold";
  // rig lets go of each once the work submitted before is done
  // (PROXY-61, PROXY-79); a function goes with its image.
  if (it->second.kind == Kind::memory) run(RIG_PROXY_OP_FREE, 0, {it->second.id}, {}, false);
  if (image) run(RIG_PROXY_OP_IMAGE_UNLOAD, 0, {it->second.id}, {}, false);
  objects_by_id_.erase(it);
  return std::nullopt;
}

}  // namespace rigd
