// rigd as the agent of other machines' clients (machine_agent.hpp).
#include "machine_agent.hpp"

#include "keys.hpp"
#include "log.hpp"
#include "machine_channel.hpp"
#include "refusal_log.hpp"
#include "remote_accounts.hpp"
#include "remote_session.hpp"
#include "wire_bounds.hpp"

#include <chrono>
#include <list>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace rigd {

struct MachineListen::Keys {
  rig::net::KeyRing ring;
};

std::optional<MachineListen> machine_listen(const Options &options) {
  const std::string &address = options.listen.empty() ? options.policy.listen : options.listen;
  if (address.empty()) return std::nullopt;
  const std::string &dir = options.policy.machine_keys;
  if (dir.empty())
    throw std::invalid_argument("--listen " + address + " needs machine_keys, the directory of the keys its "
                                "clients prove, in the config file");
  rig::net::Outcome<rig::net::KeyRing> ring = rig::net::load_key_ring(dir);
  if (!ring) throw std::invalid_argument("--listen " + address + ": machine_keys: " + ring.error().message);
  auto keys = std::make_shared<MachineListen::Keys>(MachineListen::Keys{std::move(ring.value())});
  return MachineListen{address, std::move(keys)};
}

struct MachineAgent::State {
  const ServedDevices &served;
  Exports &exports;
  UserClients &users;
  mutable std::mutex mu;
  std::shared_ptr<const Policy> policy;                // under mu
  std::list<std::unique_ptr<RemoteSession>> sessions;  // under mu
  // Connections refused after their FAILURE, until their client closes
  // them or the link's failure bound passes (closing first could drop the
  // FAILURE); under mu.
  struct Refused {
    std::shared_ptr<rig::net::AgentConnection> connection;
    std::chrono::steady_clock::time_point until;
  };
  std::list<Refused> refused;
  std::unique_ptr<rig::net::AgentListener> listener;   // made last, reset first

  State(const ServedDevices &s, std::shared_ptr<const Policy> p, Exports &e, UserClients &u)
      : served(s), exports(e), users(u), policy(std::move(p)) {}

  // A connection authenticated: a remote session, or its FAILURE where
  // rigd has no room for another client.
  void accept(std::shared_ptr<rig::net::AgentConnection> connection) {
    std::lock_guard g(mu);
    // Sessions that ended go as the next comes (an ended one holds nothing),
    // and so do refused connections that are done.
    sessions.remove_if([](const auto &s) { return s->ended(); });
    auto now = std::chrono::steady_clock::now();
    refused.remove_if([&](const Refused &r) { return r.connection->failed() || r.until <= now; });
    std::string why;
    if (!users.join(remote_user)) {
      why = users.clients() >= users.most_clients() && users.most_clients() > 0
                ? "rigd has " + std::to_string(users.most_clients()) +
                      " clients connected, the most its policy admits (max_clients)"
                : "rigd has " + std::to_string(users.most()) +
                      " remote clients connected, the most its policy admits (max_clients_per_user)";
    } else {
      try {
        sessions.push_back(std::make_unique<RemoteSession>(connection, served, policy, exports, users, [] {}));
        return;
      } catch (const std::exception &e) {
        users.leave(remote_user);
        why = std::string("rigd cannot make the client's session: ") + e.what();
      }
    }
    log_refusal("refused a machine connection (key " + connection->key_id() + ", " + connection->peer() +
                "): " + why);
    (void)connection->send(rig::net::wire::Failure{why});
    refused.push_back({std::move(connection), now + rig::net::UcxOptions{}.failure_bound});
  }
};

namespace {

// Room for a hand-over's parts beside the bytes it carries.
constexpr uint64_t handover_headroom = uint64_t{64} << 20;

// The most bytes of a connection's messages rigd holds before it takes
// them: what a client may stage (its arena_bytes, which its PUTs' bytes
// count in), and a hand-over's parts, so that a PUT that fits the client's
// limits passes as one message (a copy of 1 GiB in one hand-over).
uint64_t queue_max_of(const Policy &policy) {
  int64_t staged = policy.limits[Held::arena_bytes].client;
  if (staged <= 0) return rig::net::wire::kMessageMax;
  return static_cast<uint64_t>(staged) + handover_headroom;
}

}  // namespace

MachineAgent::MachineAgent(MachineListen listen, const ServedDevices &served,
                           std::shared_ptr<const Policy> policy, Exports &exports, UserClients &users)
    : state_(std::make_unique<State>(served, std::move(policy), exports, users)) {
  State &state = *state_;
  rig::net::AgentListener::Options options;
  options.queue_max = queue_max_of(*state.policy);
  auto listening = rig::net::AgentListener::listen(
      listen.address, std::move(listen.keys->ring), machine_accounts(served), options,
      [&state](std::shared_ptr<rig::net::AgentConnection> c) { state.accept(std::move(c)); },
      [](const std::string &peer, const std::string &cause) {
        log_refusal("refused a machine connection from " + peer + ": " + cause);
      });
  if (!listening) throw std::runtime_error("cannot listen for machines on " + listen.address + ": " +
                                           listening.error().message);
  state.listener = std::move(listening.value());
  log_line(LogLevel::notice, "listening for machines on " + state.listener->address());
}

MachineAgent::~MachineAgent() {
  // No connection comes once the listener is gone; then each session ends.
  state_->listener.reset();
  std::list<std::unique_ptr<RemoteSession>> sessions;
  {
    std::lock_guard g(state_->mu);
    sessions.swap(state_->sessions);
    state_->refused.clear();
  }
  for (auto &s : sessions) s->stop();
  sessions.clear();
}

bool MachineAgent::end_sessions(std::chrono::steady_clock::time_point deadline) {
  state_->listener.reset();
  std::unique_lock lock(state_->mu);
  for (const auto &s : state_->sessions) s->stop();
  // A session's end is its thread's: it writes ended() as it goes.
  for (const auto &s : state_->sessions)
    while (!s->ended()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      lock.lock();
    }
  return true;
}

void MachineAgent::set_policy(std::shared_ptr<const Policy> policy) {
  std::lock_guard g(state_->mu);
  state_->policy = std::move(policy);
}

void MachineAgent::visit_clients(const Visit &visit) const {
  std::lock_guard g(state_->mu);
  for (const auto &s : state_->sessions)
    if (!s->ended()) visit(s->counters(), s->held());
}

bool MachineAgent::drop(uint64_t id) {
  std::lock_guard g(state_->mu);
  for (const auto &s : state_->sessions)
    if (s->counters().id == id && s->drop()) return true;
  return false;
}

}  // namespace rigd
