// The work of one remote client (rigd --listen) on rigd's devices: its
// wire messages (wire_messages.hpp) as the entries of a local client's
// ring (protocol.h), run by the same Requests, ClientObjects, ClientImages
// and hold_parts, so that a remote client's opens, memory, hand-overs and
// their validation are a local client's.  What only the link has: the
// client names objects by ids of its own, PUT's bytes are staged in host
// memory of the client's that the device copies from, and a GET copies
// into such memory, whose bytes RemoteReports sends once its value is done.
#pragma once

#include "client_objects.hpp"
#include "requests.hpp"
#include "remote_reports.hpp"
#include "wire_messages.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace rigd {

// An ANSWER's fields, its why owned.
struct RemoteAnswer {
  int32_t status = RIG_EINVAL;
  uint64_t value = 0;
  uint64_t detail = 0;
  std::string why;
};

class RemoteClient {
 public:
  // requests runs the client's entries on its objects; reports hears its
  // GETs.  All must outlive it.
  RemoteClient(const ServedDevices &served, Requests &requests, ClientObjects &objects, RemoteReports &reports)
      : served_(served), requests_(requests), objects_(objects), reports_(reports),
        proxy_of_account_(served.size(), no_proxy) {}
  RemoteClient(const RemoteClient &) = delete;
  RemoteClient &operator=(const RemoteClient &) = delete;

  // Each answers nullopt, or how the message broke the wire contract
  // (machine_channel.hpp), which fails the job: the numbers it named.
  // A REQUEST's answer; an OPEN, ALLOC, MAP_PEER or IMAGE that rigd
  // refuses is answered with the refusal, the job still working.
  std::optional<std::string> request(const rig::net::wire::Request &r, RemoteAnswer &answer);
  std::optional<std::string> release(const rig::net::wire::Release &r);
  // A hand-over rigd refuses (hold_parts) loses its device's word, whose
  // why the session hears (CompletionHooks::lost).  message holds the
  // bytes h's views point into, which its PUTs' copies read in place.
  std::optional<std::string> hand_over(const rig::net::wire::Handover &h,
                                       std::shared_ptr<const std::vector<uint8_t>> message);

  // The account whose word is proxy's.
  uint32_t account_of_proxy(uint32_t proxy) const { return account_of_proxy_.at(proxy); }

 private:
  static constexpr uint32_t no_proxy = UINT32_MAX;
  // What a client's object id names.
  enum class Kind { memory, image, function };
  struct Object {
    Kind kind;
    uint64_t id;     // the memory's handle (ClientObjects), the image's or function's id (ClientImages)
    uint64_t bytes;  // memory's length
  };

  void open(const rig::net::wire::Request &r, const rig::net::wire::Open &o, RemoteAnswer &answer);
  void alloc(const rig::net::wire::Request &r, const rig::net::wire::Alloc &a, RemoteAnswer &answer);
  std::optional<std::string> map_peer(const rig::net::wire::Request &r, const rig::net::wire::MapPeer &m,
                                      RemoteAnswer &answer);
  void image(const rig::net::wire::Request &r, const rig::net::wire::Image &i, RemoteAnswer &answer);
  std::optional<std::string> function(const rig::net::wire::Request &r, const rig::net::wire::FunctionOfImage &f,
                                      bool entry, RemoteAnswer &answer);

  // The entry of opcode on proxy, its payload `code` (a rig_proxy_code for
  // rigd's why) then tail in the scratch arena; run, and its completion.
  rig_proxy_completion run(uint16_t opcode, uint32_t proxy, std::initializer_list<uint64_t> args,
                           std::span<const std::byte> tail = {}, bool code = true, uint16_t flags = 0);
  // The why rigd wrote into the scratch arena's rig_proxy_code.
  std::string told() const;

  // The proxy of an opened account, or nullopt (and why) for another id.
  std::optional<uint32_t> proxy_of(uint32_t account) const;
  // The object the id names, or NULL.
  const Object *object(uint64_t id, Kind kind) const;
  // The id is a fresh one (above 0, naming nothing), or why not.
  std::optional<std::string> not_fresh(uint64_t id) const;

  // A hand-over's parts as rigd's (protocol.h's), staging PUTs and GETs.
  std::optional<std::string> parts_of(const rig::net::wire::Handover &h, uint32_t account,
                                      std::vector<rig_proxy_part> &parts, std::vector<uint64_t> &staged);
  std::optional<std::string> launch_of(const rig::net::wire::Launch &l, size_t index,
                                       std::vector<rig_proxy_part> &parts);
  std::optional<std::string> words_of(const rig::net::wire::Words &w, size_t index,
                                      std::vector<rig_proxy_part> &parts);
  std::optional<std::string> hand_over_parts(const rig::net::wire::Handover &h);
  // Host memory of the client's, n bytes: over bytes, the message's,
  // where given, else a spare of an earlier GET's (RemoteReports) or new;
  // counted as its host arenas are: its handle, or why not.
  std::optional<uint64_t> stage(uint64_t n, const uint8_t *bytes, std::string &why);

  const ServedDevices &served_;
  Requests &requests_;
  ClientObjects &objects_;
  RemoteReports &reports_;
  std::vector<uint32_t> proxy_of_account_;  // by account: its proxy, or no_proxy
  std::vector<uint32_t> account_of_proxy_;  // by proxy
  std::unordered_map<uint64_t, Object> objects_by_id_;
  std::vector<std::byte> scratch_;  // the payload arena of the entries
  std::shared_ptr<const std::vector<uint8_t>> message_;  // the hand-over's, while it is read
};

}  // namespace rigd
