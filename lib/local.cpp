// Values per device: a key's value on a device, made at its first get and
// dropped once the device's driver's stop has returned.
#include "device.hpp"

#include <memory>
#include <mutex>
#include <vector>

struct rig_local_key {
  rig_local_init_fn init;
  rig_local_drop_fn drop;
  void *context;
};

namespace rig {

void drop_locals(rig_device_t *d) {
  std::vector<std::pair<rig_local_key_t *, void *>> values;
  {
    std::lock_guard<std::mutex> g(d->locals_mu);
    values.swap(d->locals);
  }
  for (auto &[key, value] : values)
    if (key->drop) key->drop(value, key->context);
}

}  // namespace rig

using namespace rig;

namespace {

bool find(rig_device_t *d, rig_local_key_t *key, void **out) {
  std::lock_guard<std::mutex> g(d->locals_mu);
  for (auto &[k, v] : d->locals)
    if (k == key) {
      *out = v;
      return true;
    }
  return false;
}

}  // namespace

extern "C" {

rig_local_key_t *rig_local_new_key(rig_local_init_fn init, rig_local_drop_fn drop, void *context) {
  if (!init) return nullptr;
  // Keys live for the process: rig keeps every one it made.
  static std::mutex mu;
  static auto *keys = new std::vector<std::unique_ptr<rig_local_key>>();
  try {
    std::lock_guard<std::mutex> g(mu);
    keys->push_back(std::make_unique<rig_local_key>(rig_local_key{init, drop, context}));
    return keys->back().get();
  } catch (...) {
    return nullptr;
  }
}

rig_status_t rig_local_get(rig_local_key_t *key, rig_device_t *d, void **out) {
  RIG_API_CALL({
    require(key != nullptr && d != nullptr && out != nullptr, "the key, device or out is NULL");
    *out = nullptr;
    if (find(d, key, out)) return RIG_OK;
    refuse_inside_lock();
    require_live(d);
    // init runs holding no lock of rig's: it may call rig.
    void *value = key->init(d, key->context);
    bool kept = false, stopped = false;
    {
      std::lock_guard<std::mutex> g(d->locals_mu);
      for (auto &[k, v] : d->locals)
        if (k == key) *out = v;  // another thread made it meanwhile: keep the first
      stopped = d->is_lost() && d->stop_returned();
      if (!*out && !stopped) {
        d->locals.push_back({key, value});
        *out = value;
        kept = true;
      }
    }
    if (!kept && key->drop) key->drop(value, key->context);
    if (stopped && !*out) throw_lost(d);
    return RIG_OK;
  });
}

}  // extern "C"
