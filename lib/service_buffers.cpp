// The buffer functions of rig/service.h: exports and imports of memory
// that other processes share through a service, made by the driver of the
// buffer's device where it exports (DriverDevice::exports: a proxy of
// rigd's).
#include "allocation.hpp"
#include "buffer.hpp"
#include "device.hpp"
#include "registry.hpp"
#include "rig_internal/errors.hpp"
#include "rig_internal/locks.hpp"

#include <rig/service.h>

#include <fcntl.h>

#include <string>

using namespace rig;

namespace {

// d's driver device where it exports, else NULL.
DriverDevice *exporter_of(rig_device_t *d) {
  if (!d || d->is_host || !d->drv->exports()) return nullptr;
  return d->drv.get();
}

// A refusal of the service's: RIG_ENOMEM with its reason where it gave
// one (a limit's), else RIG_EINVAL saying what.
[[noreturn]] void refuse(const std::string &what, const std::string &reason) {
  if (reason.empty()) throw_invalid(what);
  throw Error(RIG_ENOMEM, what + ": " + reason);
}

// rig_service_share's export of b: its token, and b's exporter in *proxy.
uint64_t share(rig_buffer_t *b, DriverDevice **proxy) {
  refuse_inside_lock();
  require_buffer(b, "the buffer");
  *proxy = exporter_of(b->device);
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
rig_buffer_t *import(rig_device_t *d, DriverDevice *proxy, uint64_t token) {
  auto imported = driver_call(d, true, [&] { return proxy->import_bytes(token); });
  if (!imported) refuse("rigd holds no export of that token for " + d->name, proxy->refusal());
  return new_buffer(wrap_foreign_region(d, imported->first, imported->second), d, 0, imported->second);
}

// d's exporter, where d is a live proxy; the check of rig_service_import's.
DriverDevice *importing_proxy(rig_device_t *d) {
  refuse_inside_lock();
  require_device(d);
  DriverDevice *proxy = exporter_of(d);
  require(proxy != nullptr, "the device is not a proxy of rigd's");
  require_live(d);
  return proxy;
}

}  // namespace

extern "C" {

rig_status_t rig_service_share(rig_buffer_t *b, uint64_t *token) {
  RIG_API_CALL({
    require(token != nullptr, "token is NULL");
    DriverDevice *proxy;
    *token = share(b, &proxy);
    return RIG_OK;
  });
}

rig_status_t rig_service_share_fd(rig_buffer_t *b, int *fd) {
  RIG_API_CALL({
    require(fd != nullptr, "fd is NULL");
    *fd = -1;
    DriverDevice *proxy;
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
    DriverDevice *proxy = importing_proxy(d);
    uint64_t token = driver_call(d, false, [&] { return proxy->token_of_fd(fd); });
    if (token == 0) throw_invalid("the descriptor names no export of " + d->name + "'s rigd");
    *out = import(d, proxy, token);
    return RIG_OK;
  });
}

}  // extern "C"
