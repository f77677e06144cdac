// The machines of other hosts (remote_machines.hpp).
#include "remote_machines.hpp"

#include "machine_module_loader.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>

namespace rig::remote {

namespace {

// An open of NAME@M that connects through $RIG_MACHINES: one at a time.
std::mutex listed_mu;

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

std::string base_name(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string listed_address(const std::string &name) {
  std::string list = env("RIG_MACHINES");
  size_t at = 0;
  while (at <= list.size()) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    std::string pair = list.substr(at, end - at);
    size_t eq = pair.find('=');
    if (eq != std::string::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
    at = end + 1;
  }
  return "";
}

std::string RemoteMachine::lost_reason() { return link->failure().value_or(""); }

bool RemoteMachine::forked() const { return getpid() != pid; }

bool valid_machine_name(const std::string &name) {
  if (name.empty() || name.find_first_of("@,:") != std::string::npos) return false;
  if (name.rfind("rigd", 0) != 0) return true;
  return name.find_first_not_of("0123456789", 4) != std::string::npos;
}

RemoteMachine *connect_machine(const std::string &address, MachineOptions options) {
  if (!options.name.empty() && !valid_machine_name(options.name))
    throw std::invalid_argument("\"" + options.name + "\" names no machine: it is empty, holds '@', ',' or ':', " +
                                "or is rigd's");
  if (!options.name.empty() && find_machine(options.name))
    throw std::invalid_argument("the process has a machine named " + options.name + " already");
  if (options.key_file.empty()) options.key_file = env("RIG_MACHINE_KEY");
  if (options.key_file.empty())
    throw std::runtime_error(address + ": no key to prove: give a key file, or set RIG_MACHINE_KEY");
  if (options.key_id.empty()) options.key_id = base_name(options.key_file);
  net::ClientChannel::Options channel;
  channel.ucx.transports = options.transports;
  channel.ucx.failure_bound = std::chrono::milliseconds(options.failure_bound_ms ? options.failure_bound_ms : 10000);
  channel.hello = "rig pid " + std::to_string(getpid());
  std::shared_ptr<RemoteLink> link = RemoteLink::connect([&](net::ChannelHandlers handlers) {
    return module_channel(address, options.key_file, options.key_id, channel, std::move(handlers));
  });
  auto *m = new RemoteMachine();
  m->link = std::move(link);
  m->pid = getpid();
  if (!adopt_machine(m, options.name, "machine")) {
    delete m;
    throw std::invalid_argument("the process has a machine named " + options.name + " already");
  }
  return m;
}

RemoteMachine *machine_named(const std::string &name) {
  if (auto *m = dynamic_cast<RemoteMachine *>(find_machine(name))) return m;
  if (!valid_machine_name(name)) return nullptr;
  std::string address = listed_address(name);
  if (address.empty()) return nullptr;
  std::lock_guard g(listed_mu);
  if (auto *m = dynamic_cast<RemoteMachine *>(find_machine(name))) return m;
  MachineOptions options;
  options.name = name;
  return connect_machine(address, options);
}

}  // namespace rig::remote
