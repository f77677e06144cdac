// The proxy driver: devices NAME@rigd, proxies of the devices rigd serves
// (proxy_device.hpp), the process's connection to rigd, and rig/service.h's
// machines (its buffers' exports are the core's: DriverDevice::exports).
#include "proxy_device.hpp"

#include "../common/shared_host_memory.hpp"
#include "rig_internal/errors.hpp"
#include "rig_internal/locks.hpp"
#include "rig_internal/machines.hpp"
#include "rig_internal/staging.hpp"
#include "service_path.hpp"

#include <rig/service.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace rig::proxy {

namespace {

// A machine of rig/service.h: a connection to a rigd.
struct RigdMachine : rig_machine {
  std::shared_ptr<RigdLink> link;

  explicit RigdMachine(std::shared_ptr<RigdLink> l) : link(std::move(l)) {}
  std::string lost_reason() override {
    std::string why;
    return link->lost(&why) ? why : std::string();
  }
  bool forked() const override { return link->forked(); }
  void close() override { link->close_connection(); }
};

// Machines are named "rigd", "rigd2", "rigd3", ... and their devices
// NAME@MACHINE.
constexpr const char *first_machine = "rigd";

// An open of NAME@rigd that connects: one at a time.
std::mutex first_mu;

// The process's machine of rigd named name, or NULL.
RigdMachine *find(const std::string &name) { return dynamic_cast<RigdMachine *>(find_machine(name)); }

// Makes link the process's new machine, named after its others.
RigdMachine *adopt(std::shared_ptr<RigdLink> link) {
  // Host memory allocated from now on can be rigd's arenas, and staging
  // made before now, private pages rigd cannot map, retires.
  share_host_memory();
  share_staging([](const void *host, size_t bytes) { return find_shared_block(host, bytes).has_value(); });
  auto *m = new RigdMachine(std::move(link));
  adopt_machine(m, "", first_machine);
  return m;
}

// Connects to path as a new machine.  Throws RIG_EOPEN with the reason.
RigdMachine *connect(const std::string &path) {
  try {
    return adopt(std::make_shared<RigdLink>(path));
  } catch (const HandshakeError &e) {
    throw_open(e.what());
  }
}

// Connects to the first of the client's default sockets that exists and
// answers (service_socket_candidates).  Throws RIG_EOPEN naming every path
// tried, and what to do, where none does.
RigdMachine *connect_default() {
  std::vector<std::string> tried;
  for (const std::string &path : service_socket_candidates()) {
    struct stat status;
    if (stat(path.c_str(), &status) != 0) {
      tried.push_back(path + ": " + std::strerror(errno));
      continue;
    }
    try {
      return adopt(std::make_shared<RigdLink>(path));
    } catch (const HandshakeError &e) {
      tried.push_back(e.what());
    }
  }
  throw_open(no_rigd_reason(tried));
}

// The machine an open of NAME@name goes through: the process's machine of
// that name, or for "rigd" where it has none, a new connection to the
// default socket.
RigdMachine *machine_for(const std::string &name) {
  if (RigdMachine *m = find(name)) return m;
  if (name != first_machine) throw std::runtime_error("this process has no machine named " + name);
  std::lock_guard g(first_mu);
  if (RigdMachine *m = find(name)) return m;
  connect_default();
  // Another thread's rig_service_connect may have taken the name first.
  return find(name);
}

// Whether p is "@" and a machine's name.
bool names_machine(const std::string &p) {
  std::string first = std::string("@") + first_machine;
  if (p.rfind(first, 0) != 0) return false;
  std::string number = p.substr(first.size());
  if (number.empty()) return true;
  if (number.size() > 9 || number[0] == '0' || number.find_first_not_of("0123456789") != std::string::npos)
    return false;
  return std::stoul(number) >= 2;
}

class ProxyDriver : public Driver {
 public:
  const char *prefix() const override { return "@rigd"; }
  bool opens_prefix(const std::string &p) const override { return names_machine(p); }

  std::unique_ptr<DriverDevice> open(const std::string &name, const std::string &config, uint64_t start) override {
    auto at = name.rfind('@');
    std::string served_name = name.substr(0, at);
    RigdMachine *machine = machine_for(name.substr(at + 1));
    std::shared_ptr<RigdLink> link = machine->link;
    std::string why;
    if (link->lost(&why)) throw std::runtime_error(machine->name + ": " + why);
    int served = link->find(served_name);
    if (served < 0) throw std::runtime_error("rigd at " + link->path() + " serves no device named " + served_name);
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_OPEN;
    e.flags = RIG_PROXY_OPEN_WHY;
    e.device = static_cast<uint32_t>(served);
    e.args[0] = start;
    // The payload: where rigd says why it refuses, then the configuration.
    std::vector<std::byte> payload(sizeof(rig_proxy_code) + config.size());
    std::memcpy(payload.data() + sizeof(rig_proxy_code), config.data(), config.size());
    rig_proxy_code reply{};
    rig_proxy_completion answer;
    try {
      // rigd opens the client's instance of the device with the config.
      answer = link->request(e, payload, std::as_writable_bytes(std::span(&reply, 1)));
    } catch (const LinkLost &lost) {
      throw std::runtime_error(lost.what());
    }
    if (answer.status != RIG_OK || answer.value >= link->words()) {
      std::string refused(reply.why, strnlen(reply.why, sizeof reply.why));
      throw std::runtime_error("rigd refused a proxy of " + served_name + " (" +
                               rig_status_name(static_cast<rig_status_t>(answer.status)) + ")" +
                               (refused.empty() ? "" : ": " + refused));
    }
    return std::make_unique<ProxyDevice>(link, static_cast<uint32_t>(served), static_cast<uint32_t>(answer.value),
                                         start);
  }

  // The devices of each of the process's machines.
  void probe(const std::function<void(const std::string &, const std::string &)> &report) override {
    for (rig_machine *each : own_machines()) {
      auto *m = dynamic_cast<RigdMachine *>(each);
      if (!m) continue;
      std::string why;
      bool lost = m->link->lost(&why);
      for (const rig_proxy_device_record &r : m->link->devices()) report(r.name + ("@" + m->name), lost ? why : "");
    }
  }
};

}  // namespace

}  // namespace rig::proxy

namespace {
using rig::proxy::ProxyDriver;
RIG_REGISTER_DRIVER(ProxyDriver)
}  // namespace

using namespace rig;

extern "C" {

rig_status_t rig_service_connect(const rig_service_options_t *opts, rig_machine_t **machine) {
  RIG_API_CALL({
    refuse_inside_lock();
    if (machine) *machine = nullptr;
    const char *socket = nullptr;
    if (opts) {
      require(opts->size >= offsetof(rig_service_options_t, socket) + sizeof(opts->socket),
              "rig_service_options_t.size is too small");
      socket = opts->socket;
    }
    rig_machine_t *m = socket ? proxy::connect(socket) : proxy::connect_default();
    if (machine) *machine = m;
    return RIG_OK;
  });
}

}  // extern "C"
