// The agent's end of one machine connection (machine_channel.hpp's
// AgentConnection) as the listener drives it: the link's handlers place
// and deliver the client's messages into it, the listener's thread runs
// its handshake, its owner takes its messages in order.
#pragma once

#include "auth_messages.hpp"
#include "machine_channel_frame.hpp"
#include "spare_bytes.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace rig::net::channel {

class AgentSide;

// The connections of one listener by their endpoint, for the link's
// handlers, which hear the endpoint only.
class Router {
 public:
  void add(const UcxEndpoint *endpoint, const std::shared_ptr<AgentSide> &side);
  void remove(const UcxEndpoint *endpoint);
  std::shared_ptr<AgentSide> find(const UcxEndpoint *endpoint);

 private:
  std::mutex mutex_;
  std::unordered_map<const UcxEndpoint *, std::weak_ptr<AgentSide>> sides_;
};

class AgentSide final : public AgentConnection {
 public:
  // The link's reorder point for a client that has not proved its key:
  // one message that came early, of a PROOF's size at most; the link's
  // default bound (UcxHeldBound) once it has.
  static constexpr UcxHeldBound kHandshakeHeld{1, kProofMax + 4096};

  // What the handshake has reached.
  enum class Phase { authenticating, checking, open };

  AgentSide(std::shared_ptr<UcxEndpoint> endpoint, std::shared_ptr<Router> router, uint64_t queue_max);
  ~AgentSide() override;

  const std::string &key_id() const override { return key_id_; }
  const std::string &hello() const override { return hello_; }
  const std::string &peer() const override { return peer_; }
  std::optional<ReceivedMessage> next(std::chrono::milliseconds wait) override;
  UcxStatus send(const wire::Message &message) override;
  bool failed() const override;
  std::string failure() const override;
  void close() override;
  void give_back(std::vector<uint8_t> bytes) noexcept override { spares_.give(std::move(bytes)); }

  // The link's handlers (progress thread): where the data of a message of
  // id lands (after its header, a wire message's first bytes: the
  // framing's split), and the message landed.  deliver answers whether it
  // was the PROOF, which the listener's thread then checks.
  std::span<std::byte> place(uint16_t id, std::span<const std::byte> header, size_t length);
  bool deliver(const UcxMessage &message);

  // The listener's thread.
  Phase phase() const;
  std::vector<uint8_t> take_proof();
  // The PROOF was good: messages are the owner's from now on.
  void open(std::string key_id, std::string hello);
  // Sends an authentication message (CHALLENGE, ACCEPT or REFUSE).
  UcxStatus send_auth(uint16_t id, std::span<const uint8_t> bytes);
  void fail(const std::string &why);

 private:
  void fail_locked(const std::string &why);
  [[noreturn]] void fail_here(const std::string &why);

  const std::shared_ptr<Router> router_;
  const UcxEndpoint *const key_;
  const std::string peer_;
  const uint64_t queue_max_;
  std::string key_id_, hello_;  // set before the owner gets it

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::shared_ptr<UcxEndpoint> endpoint_;  // null once closed
  Phase phase_ = Phase::authenticating;
  bool failed_ = false;
  std::string failure_;
  std::vector<uint8_t> proof_;
  std::vector<uint8_t> landing_;  // one at a time: the link places after it delivered
  SpareBytes spares_;             // landings the owner gave back
  // A message as it landed, the header's bytes first: decoded by next.
  struct Landed {
    uint16_t id = 0;
    std::vector<uint8_t> bytes;
  };
  std::deque<Landed> queue_;
  uint64_t queued_bytes_ = 0;  // queue_'s and landing_'s
};

}  // namespace rig::net::channel
