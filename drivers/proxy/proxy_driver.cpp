// The proxy driver: devices NAME@rigd, proxies of the devices rigd serves
// (proxy_device.hpp), the process's connection to rigd, and the C
// functions of rig/service.h.
#include "proxy_device.hpp"

#include "../../lib/allocation.hpp"
#include "../../lib/buffer.hpp"
#include "../../lib/device.hpp"
#include "../../lib/errors.hpp"
#include "../../lib/registry.hpp"
#include "../../lib/staging.hpp"
#include "../common/shared_host_memory.hpp"
#include "service_path.hpp"

#include <rig/service.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>
#include <mutex>

// A machine of rig/service.h: a connection to a rigd, named for the life
// of the process.
struct rig_machine {
  std::string name;
  std::shared_ptr<rig::proxy::RigdLink> link;
  std::mutex why_mu;
  std::string why;  // set once, when the machine is first seen lost
  std::atomic<bool> lost{false};
};

namespace rig::proxy {

namespace {

// Machines are named "rigd", "rigd2", "rigd3", ... and their devices
// NAME@MACHINE.
constexpr const char *first_machine = "rigd";

// The process's machines, records that live for the process.  A child
// after fork has none of its parent's: their links are not its own.
struct Machines {
  std::mutex mu;
  std::vector<rig_machine *> all;
  // An open of NAME@rigd that connects: one at a time.
  std::mutex first_mu;
};

Machines &machines() {
  static Machines *m = new Machines();  // outlives every static destructor
  return *m;
}

// The process's own machine named name, or NULL; with mu held.
rig_machine *find_locked(Machines &ms, const std::string &name) {
  for (rig_machine *m : ms.all)
    if (m->name == name && !m->link->forked()) return m;
  return nullptr;
}

rig_machine *find(const std::string &name) {
  Machines &ms = machines();
  std::lock_guard g(ms.mu);
  return find_locked(ms, name);
}

// Makes link the process's new machine, named after its others.
rig_machine *adopt(std::shared_ptr<RigdLink> link) {
  // Host memory allocated from now on can be rigd's arenas, and staging
  // made before now, private pages rigd cannot map, retires.
  share_host_memory();
  share_staging([](const void *host, size_t bytes) { return find_shared_block(host, bytes).has_value(); });
  Machines &ms = machines();
  std::lock_guard g(ms.mu);
  size_t ours = 0;
  for (rig_machine *m : ms.all) ours += !m->link->forked();
  auto *m = new rig_machine();
  m->name = ours == 0 ? first_machine : first_machine + std::to_string(ours + 1);
  m->link = std::move(link);
  ms.all.push_back(m);
  return m;
}

// Connects to path as a new machine.  Throws RIG_EOPEN with the reason.
rig_machine *connect(const std::string &path) {
  try {
    return adopt(std::make_shared<RigdLink>(path));
  } catch (const HandshakeError &e) {
    throw_open(e.what());
  }
}

// Connects to the first of the client's default sockets that exists and
// answers (service_socket_candidates).  Throws RIG_EOPEN naming every path
// tried, and what to do, where none does.
rig_machine *connect_default() {
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
rig_machine *machine_for(const std::string &name) {
  if (rig_machine *m = find(name)) return m;
  if (name != first_machine) throw std::runtime_error("this process has no machine named " + name);
  std::lock_guard g(machines().first_mu);
  if (rig_machine *m = find(name)) return m;
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
    rig_machine *machine = machine_for(name.substr(at + 1));
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
    std::vector<rig_machine *> ours;
    {
      Machines &ms = machines();
      std::lock_guard g(ms.mu);
      for (rig_machine *m : ms.all)
        if (!m->link->forked()) ours.push_back(m);
    }
    for (rig_machine *m : ours) {
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

// d's driver device if d is a proxy, else NULL.
rig::proxy::ProxyDevice *proxy_of(rig_device_t *d) {
  if (!d || d->is_host) return nullptr;
  return dynamic_cast<rig::proxy::ProxyDevice *>(d->drv.get());
}
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

const char *rig_machine_name(const rig_machine_t *m) { return m ? m->name.c_str() : nullptr; }

const char *rig_machine_lost(rig_machine_t *m) {
  if (!m) return nullptr;
  if (m->lost.load(std::memory_order_acquire)) return m->why.c_str();
  std::string why;
  if (!m->link->lost(&why)) return nullptr;
  std::lock_guard g(m->why_mu);
  // The first reason stays, so that the pointer answered never dangles.
  if (!m->lost.load(std::memory_order_relaxed)) {
    m->why = why;
    m->lost.store(true, std::memory_order_release);
  }
  return m->why.c_str();
}

rig_status_t rig_machine_open(rig_machine_t *m, const char *name, const rig_open_options_t *opts,
                              rig_device_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require(m != nullptr, "the machine is NULL");
    require(name != nullptr, "name is NULL");
    require(std::strchr(name, '@') == nullptr, "the name names a machine itself");
    std::string full = std::string(name) + "@" + m->name;
    *out = open_device(full.c_str(), nullptr, open_config(opts));
    return RIG_OK;
  });
}

}  // extern "C"

namespace {

// A refusal of rigd's: RIG_ENOMEM with rigd's reason where it gave one (a
// limit's), else RIG_EINVAL saying what.
[[noreturn]] void refuse(const std::string &what, const std::string &reason) {
  if (reason.empty()) throw_invalid(what);
  throw Error(RIG_ENOMEM, what + ": " + reason);
}

// rig_service_share's export of b: its token, and b's proxy in *proxy.
uint64_t share(rig_buffer_t *b, proxy::ProxyDevice **proxy) {
  refuse_inside_lock();
  require_buffer(b, "the buffer");
  *proxy = proxy_of(b->device);
  require(*proxy != nullptr, "the buffer is not a proxy's memory");
  require(!b->borrowed && b->alloc->owner == b->device && b->alloc->region != nullptr,
          "the buffer is not its proxy's own memory");
  require_live(b->device);
  // Another process's uses of shared bytes would pass an exclusive hold.
  require_not_exclusive(b);
  auto exported = driver_call(b->device, false, [&] {
    return (*proxy)->export_bytes(b->alloc->region, static_cast<uint64_t>(b->offset),
                                  static_cast<uint64_t>(b->length));
  });
  if (!exported) refuse("rigd refuses to export the buffer", (*proxy)->refusal());
  return *exported;
}

// rig_service_import's buffer on d, a live proxy, of token's bytes.
rig_buffer_t *import(rig_device_t *d, proxy::ProxyDevice *proxy, uint64_t token) {
  auto imported = driver_call(d, true, [&] { return proxy->import_bytes(token); });
  if (!imported) refuse("rigd holds no export of that token for " + d->name, proxy->refusal());
  return new_buffer(wrap_foreign_region(d, imported->first, imported->second), d, 0, imported->second);
}

// d's proxy, where d is a live proxy; the check of rig_service_import's.
proxy::ProxyDevice *importing_proxy(rig_device_t *d) {
  refuse_inside_lock();
  require_device(d);
  proxy::ProxyDevice *proxy = proxy_of(d);
  require(proxy != nullptr, "the device is not a proxy of rigd's");
  require_live(d);
  return proxy;
}

}  // namespace

extern "C" {

rig_status_t rig_service_share(rig_buffer_t *b, uint64_t *token) {
  RIG_API_CALL({
    require(token != nullptr, "token is NULL");
    proxy::ProxyDevice *proxy;
    *token = share(b, &proxy);
    return RIG_OK;
  });
}

rig_status_t rig_service_share_fd(rig_buffer_t *b, int *fd) {
  RIG_API_CALL({
    require(fd != nullptr, "fd is NULL");
    *fd = -1;
    proxy::ProxyDevice *proxy;
    uint64_t token = share(b, &proxy);
    int made = driver_call(b->device, false, [&] { return proxy->export_fd(token); });
    if (made < 0) refuse("rigd makes no descriptor for the export", proxy->refusal());
    *fd = made;
    return RIG_OK;
  });
}

rig_status_t rig_service_import(rig_device_t *d, uint64_t token, rig_buffer_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    *out = import(d, importing_proxy(d), token);
    return RIG_OK;
  });
}

rig_status_t rig_service_import_fd(rig_device_t *d, int fd, rig_buffer_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    // A descriptor that is not open would fail the socket's send, and so
    // the connection: refused here.
    require(fd >= 0 && fcntl(fd, F_GETFD) != -1, "fd is not an open descriptor");
    proxy::ProxyDevice *proxy = importing_proxy(d);
    uint64_t token = driver_call(d, false, [&] { return proxy->token_of_fd(fd); });
    if (token == 0) throw_invalid("the descriptor names no export of " + d->name + "'s rigd");
    *out = import(d, proxy, token);
    return RIG_OK;
  });
}

}  // extern "C"
