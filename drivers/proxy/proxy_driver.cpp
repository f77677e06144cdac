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

#include <cstddef>
#include <mutex>

namespace rig::proxy {

namespace {

constexpr const char *suffix = "@rigd";

// The process's connection to rigd: the one later opens use.
struct Connection {
  std::mutex mu;
  std::shared_ptr<RigdLink> link;
};

Connection &connection() {
  static Connection *c = new Connection();  // outlives every static destructor
  return *c;
}

// Connects to path, replacing the connection later opens use; the proxies
// of an earlier one keep it.  Throws RIG_EOPEN with the reason.
std::shared_ptr<RigdLink> connect(const std::string &path) {
  std::shared_ptr<RigdLink> link;
  try {
    link = std::make_shared<RigdLink>(path);
  } catch (const HandshakeError &e) {
    throw_open(e.what());
  }
  // Host memory allocated from now on can be rigd's arenas, and staging
  // made before now, private pages rigd cannot map, retires.
  share_host_memory();
  share_staging([](const void *host, size_t bytes) { return find_shared_block(host, bytes).has_value(); });
  Connection &c = connection();
  std::lock_guard g(c.mu);
  c.link = link;
  return link;
}

// The connection later opens use: the current one while it is live, else
// a new one to the default socket.
std::shared_ptr<RigdLink> current_link() {
  {
    Connection &c = connection();
    std::lock_guard g(c.mu);
    if (c.link && !c.link->lost()) return c.link;
  }
  return connect(service_socket_path());
}

class ProxyDriver : public Driver {
 public:
  const char *prefix() const override { return suffix; }

  std::unique_ptr<DriverDevice> open(const std::string &name, const std::string &config, uint64_t start) override {
    std::string served_name = name.substr(0, name.size() - std::char_traits<char>::length(suffix));
    std::shared_ptr<RigdLink> link = current_link();
    int served = link->find(served_name);
    if (served < 0) throw std::runtime_error("rigd at " + link->path() + " serves no device named " + served_name);
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_OPEN;
    e.device = static_cast<uint32_t>(served);
    e.args[0] = start;
    rig_proxy_completion answer;
    try {
      // rigd opens the client's instance of the device with the config.
      answer = link->request(e, std::as_bytes(std::span(config)));
    } catch (const LinkLost &lost) {
      throw std::runtime_error(lost.what());
    }
    if (answer.status != RIG_OK || answer.value >= link->words())
      throw std::runtime_error("rigd refused a proxy of " + served_name + " (" +
                               rig_status_name(static_cast<rig_status_t>(answer.status)) + ")" +
                               (answer.status == RIG_EOPEN ? ": it could not open an instance of the device with that "
                                                             "configuration, or serves no more proxies to this process"
                                                           : ""));
    return std::make_unique<ProxyDevice>(link, static_cast<uint32_t>(served), static_cast<uint32_t>(answer.value),
                                         start);
  }

  // The devices of the current connection, once the process has one.
  void probe(const std::function<void(const std::string &, const std::string &)> &report) override {
    std::shared_ptr<RigdLink> link;
    {
      Connection &c = connection();
      std::lock_guard g(c.mu);
      link = c.link;
    }
    if (!link) return;
    std::string why;
    bool lost = link->lost(&why);
    for (const rig_proxy_device_record &r : link->devices()) report(r.name + std::string(suffix), lost ? why : "");
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

rig_status_t rig_service_connect(const rig_service_options_t *opts) {
  RIG_API_CALL({
    refuse_inside_lock();
    const char *socket = nullptr;
    if (opts) {
      require(opts->size >= offsetof(rig_service_options_t, socket) + sizeof(opts->socket),
              "rig_service_options_t.size is too small");
      socket = opts->socket;
    }
    proxy::connect(socket ? std::string(socket) : proxy::service_socket_path());
    return RIG_OK;
  });
}

rig_status_t rig_service_share(rig_buffer_t *b, uint64_t *token) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(token != nullptr, "token is NULL");
    require_buffer(b, "the buffer");
    proxy::ProxyDevice *proxy = proxy_of(b->device);
    require(proxy != nullptr, "the buffer is not a proxy's memory");
    require(!b->borrowed && b->alloc->owner == b->device && b->alloc->region != nullptr,
            "the buffer is not its proxy's own memory");
    require_live(b->device);
    auto exported = driver_call(b->device, false, [&] {
      return proxy->export_bytes(b->alloc->region, static_cast<uint64_t>(b->offset), static_cast<uint64_t>(b->length));
    });
    if (!exported) throw_invalid("rigd refuses to export the buffer");
    *token = *exported;
    return RIG_OK;
  });
}

rig_status_t rig_service_import(rig_device_t *d, uint64_t token, rig_buffer_t **out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    proxy::ProxyDevice *proxy = proxy_of(d);
    require(proxy != nullptr, "the device is not a proxy of rigd's");
    require_live(d);
    auto imported = driver_call(d, true, [&] { return proxy->import_bytes(token); });
    if (!imported) throw_invalid("rigd holds no export of that token for " + d->name);
    *out = new_buffer(wrap_foreign_region(d, imported->first, imported->second), d, 0, imported->second);
    return RIG_OK;
  });
}

}  // extern "C"
