// rigd as the agent of other machines' clients (rigd --listen,
// rig-remote-proxy.txt): a listener of the machine link that
// authenticates each connection against rigd's key ring and serves it as
// a remote session (remote_session.hpp).  Where rig was built without
// machines (RIG_MACHINES off), rigd refuses --listen with that reason.
#pragma once

#include "client_counters.hpp"
#include "config.hpp"
#include "exports.hpp"
#include "served.hpp"
#include "user_clients.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace rigd {

// What rigd listens with: the address and its loaded key ring.
struct MachineListen {
  struct Keys;
  std::string address;
  std::shared_ptr<Keys> keys;
};

// options' listen (its --listen, else its config's) with the key ring of
// its config's machine_keys, loaded; nullopt where it listens nowhere.
// Throws std::invalid_argument saying why rigd cannot listen (no
// machine_keys, a key ring that does not load, with the file and what is
// wrong with it, rig built without machines): rigd then refuses to start.
std::optional<MachineListen> machine_listen(const Options &options);

class MachineAgent {
 public:
  // Listens at listen.address and logs "listening for machines on
  // HOST:PORT" with the port it got; each connection authenticated is a
  // remote client, counted under remote_user in users (max_clients too),
  // refused with FAILURE where users has no room; each refused one is
  // logged with its cause.  Throws std::runtime_error where it cannot
  // listen (the address and UCX's reason).
  MachineAgent(MachineListen listen, const ServedDevices &served, std::shared_ptr<const Policy> policy,
               Exports &exports, UserClients &users);
  // Stops listening, then ends every remote session and waits for them.
  ~MachineAgent();
  // As rigd stops: stops listening and every remote session, and waits
  // until they ended (their values done) or deadline; whether they did.
  bool end_sessions(std::chrono::steady_clock::time_point deadline);
  MachineAgent(const MachineAgent &) = delete;
  MachineAgent &operator=(const MachineAgent &) = delete;

  // The policy of the clients that connect from now on (SIGHUP's).
  void set_policy(std::shared_ptr<const Policy> policy);

  // Calls visit with the counters and holdings of each remote client whose
  // session has not ended, under the agent's lock (the admin channel's
  // snapshot).
  using Visit = std::function<void(const ClientCounters &counters, const UserClients::Counts &held)>;
  void visit_clients(const Visit &visit) const;
  // Stops the remote session of client number id, as an admin's drop; false
  // where none of that number is connected.
  bool drop(uint64_t id);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rigd
