// rigd built without machines (RIG_MACHINES off): it refuses --listen.
#include "machine_agent.hpp"

#include <stdexcept>

namespace rigd {

struct MachineListen::Keys {};
struct MachineAgent::State {};

std::optional<MachineListen> machine_listen(const Options &options) {
  const std::string &address = options.listen.empty() ? options.policy.listen : options.listen;
  if (address.empty()) return std::nullopt;
  throw std::invalid_argument("--listen " + address +
                              ": rig was built without machines (RIG_MACHINES off: it needs libucx-dev and "
                              "libssl-dev), so rigd serves no other machine");
}

MachineAgent::MachineAgent(MachineListen, const ServedDevices &, std::shared_ptr<const Policy>, Exports &,
                           UserClients &) {
  throw std::runtime_error("rig was built without machines (RIG_MACHINES off)");
}

MachineAgent::~MachineAgent() = default;

bool MachineAgent::end_sessions(std::chrono::steady_clock::time_point) { return true; }

void MachineAgent::set_policy(std::shared_ptr<const Policy>) {}

void MachineAgent::visit_clients(const Visit &) const {}

bool MachineAgent::drop(uint64_t) { return false; }

}  // namespace rigd
