// The agent's listener (machine_channel.hpp): one link for every
// connection; its accept handler hands each endpoint to the listener's
// thread, which runs the handshakes (CHALLENGE, the PROOF's check, ACCEPT
// and DEVICES or REFUSE), closes those with no PROOF within the failure
// bound, and gives the owner the connections it authenticated.
#include "machine_channel_agent.hpp"

#include "auth_agent.hpp"
#include "ucx_listener.hpp"

#include <algorithm>
#include <thread>

namespace rig::net {

using channel::AgentSide;
using Clock = std::chrono::steady_clock;

namespace {

// A connection the listener's thread still holds.
struct Handshake {
  std::shared_ptr<AgentSide> side;
  std::optional<AgentChallenge> challenge;  // made and sent on the thread
  Clock::time_point deadline;
  bool refused = false;  // REFUSE sent: held until the client closes
};

// What the listener's thread waits on: new connections, and pokes (a
// PROOF came, a connection failed).  Shared, since an endpoint the owner
// holds may fail after the listener has gone.
struct Inbox {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::shared_ptr<AgentSide>> arrived;
  bool poked = false;
  bool stopping = false;

  void poke() {
    std::lock_guard lock(mutex);
    poked = true;
    changed.notify_all();
  }
};

}  // namespace

struct AgentListener::State {
  KeyRing ring;
  std::vector<uint8_t> devices;  // DEVICES, encoded
  Accept accept;
  Refused refused;
  std::chrono::milliseconds bound{0};
  uint64_t queue_max = 0;
  size_t handshakes_max = 0, handshakes_per_host = 0;
  std::shared_ptr<channel::Router> router = std::make_shared<channel::Router>();

  std::shared_ptr<Inbox> inbox = std::make_shared<Inbox>();
  std::thread thread;

  std::unique_ptr<UcxLink> link;
  std::unique_ptr<UcxListener> listener;

  ~State() {
    {
      std::lock_guard lock(inbox->mutex);
      inbox->stopping = true;
      inbox->changed.notify_all();
    }
    if (thread.joinable()) thread.join();
    listener.reset();
    link.reset();  // joins the progress thread, the handlers' only caller
  }

  // Progress thread: a new connection, handshaking from now on.
  void arrive(std::shared_ptr<UcxEndpoint> endpoint) {
    auto side = std::make_shared<AgentSide>(endpoint, router, queue_max);
    router->add(endpoint.get(), side);
    std::weak_ptr<AgentSide> weak = side;
    std::weak_ptr<Inbox> to = inbox;
    endpoint->on_failure([weak, to](const std::string &why) {
      if (auto failed = weak.lock()) failed->fail(why);
      if (auto waiting = to.lock()) waiting->poke();
    });
    std::lock_guard lock(inbox->mutex);
    inbox->arrived.push_back(std::move(side));
    inbox->changed.notify_all();
  }

  void run() {
    std::vector<Handshake> handshakes;
    std::unique_lock lock(inbox->mutex);
    while (!inbox->stopping) {
      std::vector<std::shared_ptr<AgentSide>> arrived;
      arrived.swap(inbox->arrived);
      inbox->poked = false;
      lock.unlock();
      for (auto &side : arrived) admit(handshakes, std::move(side));
      for (auto it = handshakes.begin(); it != handshakes.end();)
        it = step_or_drop(*it) ? handshakes.erase(it) : it + 1;
      lock.lock();
      auto next = Clock::now() + bound;
      for (const Handshake &handshake : handshakes) next = std::min(next, handshake.deadline);
      inbox->changed.wait_until(lock, next, [&] { return inbox->stopping || inbox->poked || !inbox->arrived.empty(); });
    }
  }

  // Starts side's handshake, or refuses it where too many connections
  // prove their keys already (Options::handshakes_max, _per_host).
  void admit(std::vector<Handshake> &handshakes, std::shared_ptr<AgentSide> side) {
    const std::string host = host_of(side->peer());
    const size_t from_host = static_cast<size_t>(std::count_if(
        handshakes.begin(), handshakes.end(), [&](const Handshake &h) { return host_of(h.side->peer()) == host; }));
    std::string cause;
    if (from_host >= handshakes_per_host)
      cause = std::to_string(from_host) + " connections from " + host + " prove their keys already, the most from one host";
    else if (handshakes.size() >= handshakes_max)
      cause = std::to_string(handshakes.size()) + " connections prove their keys already, the most at once";
    if (cause.empty()) {
      handshakes.push_back({std::move(side), std::nullopt, Clock::now() + bound});
      return;
    }
    try {
      refuse_quietly(*side, cause);
    } catch (...) {
      side->close();
    }
  }

  // The host of a peer "HOST:PORT".
  static std::string host_of(const std::string &peer) { return peer.substr(0, peer.rfind(':')); }

  // As step; a handshake whose step threw (memory ran out, the owner's
  // callback threw) is dropped, since nothing may end the thread.
  bool step_or_drop(Handshake &handshake) {
    try {
      return step(handshake);
    } catch (...) {
      if (handshake.side) handshake.side->close();
      return true;
    }
  }

  // Moves a handshake on; answers whether it is done (handed over,
  // refused and closed, or failed).
  bool step(Handshake &handshake) {
    AgentSide &side = *handshake.side;
    if (side.failed()) {
      if (!handshake.refused) tell_refused(side, side.failure());
      return true;
    }
    if (handshake.refused) return Clock::now() >= handshake.deadline;
    if (!handshake.challenge) {
      auto made = AgentChallenge::make();
      if (!made) return refuse_quietly(side, made.error().message);
      handshake.challenge.emplace(std::move(made.value()));
      UcxStatus sent = side.send_auth(kAuthChallengeId, handshake.challenge->bytes());
      if (!sent.ok()) return refuse_quietly(side, sent.message());
    }
    if (side.phase() == AgentSide::Phase::checking) return check(handshake);
    if (Clock::now() < handshake.deadline) return false;
    return refuse_quietly(side, "no PROOF from " + side.peer() + " in " + std::to_string(bound.count()) + " ms");
  }

  bool check(Handshake &handshake) {
    AgentSide &side = *handshake.side;
    auto checked = check_proof(*handshake.challenge, ring, side.take_proof());
    if (!checked) {
      (void)side.send_auth(kAuthAnswerId, make_refuse(checked.error()));
      tell_refused(side, checked.error().cause);
      // Closing at once could drop the REFUSE still in flight; the client
      // closes once it has read it.
      handshake.refused = true;
      handshake.deadline = Clock::now() + bound;
      return false;
    }
    const AgentAccepted &accepted = checked.value();
    side.open(accepted.key_id, std::string(accepted.hello.begin(), accepted.hello.end()));
    UcxStatus sent = side.send_auth(kAuthAnswerId, make_accept(accepted));
    if (sent.ok()) sent = side.send_auth(static_cast<uint16_t>(wire::Kind::Devices), devices);
    if (!sent.ok()) return refuse_quietly(side, sent.message());
    if (accept) accept(std::move(handshake.side));
    return true;
  }

  // A connection that ends in its handshake without a REFUSE.
  bool refuse_quietly(AgentSide &side, const std::string &cause) {
    side.fail(cause);
    tell_refused(side, cause);
    side.close();
    return true;
  }

  void tell_refused(AgentSide &side, const std::string &cause) {
    if (refused) refused(side.peer(), cause);
  }
};

Outcome<std::unique_ptr<AgentListener>> AgentListener::listen(const std::string &address, KeyRing ring,
                                                              std::vector<MachineAccount> devices,
                                                              const Options &options, Accept accept,
                                                              Refused refused) {
  auto encoded = channel::encode_accounts(devices);
  if (!encoded) return Failure{"the listener's DEVICES: " + encoded.error().message};
  auto state = std::make_unique<State>();
  state->ring = std::move(ring);
  state->devices = std::move(encoded.value());
  state->accept = std::move(accept);
  state->refused = std::move(refused);
  state->bound = options.ucx.failure_bound;
  state->queue_max = options.queue_max;
  state->handshakes_max = options.handshakes_max;
  state->handshakes_per_host = options.handshakes_per_host;
  State *raw = state.get();
  auto link = channel::make_link(
      options.ucx,
      [raw](UcxEndpoint &from, uint16_t id, std::span<const std::byte> header, size_t length) {
        auto side = raw->router->find(&from);
        if (!side) throw channel::ConnectionFailed();
        std::span<std::byte> placed = side->place(id, header, length);
        // The span lies in the side's memory, which must outlive the
        // landing where its owner lets go of the side meanwhile.
        from.keep_while_landing(side);
        return placed;
      },
      [raw](const UcxMessage &message) {
        auto side = raw->router->find(&message.from);
        if (!side) throw channel::ConnectionFailed();
        if (side->deliver(message)) raw->inbox->poke();
      });
  if (!link.ok()) return Failure{link.message()};
  state->link = std::move(link.value());
  state->thread = std::thread([raw] { raw->run(); });
  auto listening = state->link->listen(address, [raw](std::shared_ptr<UcxEndpoint> endpoint) {
    raw->arrive(std::move(endpoint));
  });
  if (!listening.ok()) return Failure{listening.message()};
  state->listener = std::move(listening.value());
  return std::unique_ptr<AgentListener>(new AgentListener(std::move(state)));
}

AgentListener::AgentListener(std::unique_ptr<State> state) : state_(std::move(state)) {}
AgentListener::~AgentListener() = default;

const std::string &AgentListener::address() const { return state_->listener->address(); }

}  // namespace rig::net
