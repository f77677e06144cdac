// Device properties, reaches, budgets and the timeline's plain reads: calls
// that take no lock and answer for any device, lost or not.
#include "allocation.hpp"
#include "registry.hpp"

using namespace rig;

namespace rig {

bool reaches(const rig_device_t *d, const rig_device_t *other) {
  if (d == other) return true;
  const Facts &f = d->facts;
  const Facts &g = other->facts;
  // The host reaches memory the host addresses: a memory device's and that
  // of a driver declaring host_addresses.
  if (d->is_host) return g.host_addresses;
  // A device that maps host memory reaches the host's and every memory
  // device's (memory that runs on the host).
  if (f.maps_host && (other->is_host || g.runs_on_host)) return true;
  // Peers of one driver.
  if (d->driver == other->driver && d->drv && other->drv) return d->drv->peer(*other->drv);
  return false;
}

}  // namespace rig

extern "C" {

const char *rig_device_name(const rig_device_t *d) { return device_answers(d) ? d->name.c_str() : nullptr; }
const char *rig_device_arch(const rig_device_t *d) { return device_answers(d) ? d->arch.c_str() : nullptr; }
const char *rig_device_instruction_set(const rig_device_t *d) {
  return device_answers(d) ? d->instruction_set.c_str() : nullptr;
}
const char *rig_device_bus(const rig_device_t *d) {
  return device_answers(d) && d->facts.bus ? d->facts.bus->c_str() : nullptr;
}
bool rig_device_runs_on_host(const rig_device_t *d) { return device_answers(d) && d->facts.runs_on_host; }
int64_t rig_device_alignment(const rig_device_t *d) { return device_answers(d) ? d->facts.alignment : 0; }
int64_t rig_device_cache_bytes(const rig_device_t *d) {
  return device_answers(d) && d->facts.cache_bytes ? *d->facts.cache_bytes : 0;
}
const void *rig_device_capability(const rig_device_t *d, const char *key) {
  if (!device_answers(d) || !key) return nullptr;
  for (const auto &[k, v] : d->facts.capabilities)
    if (k == key) return v;
  return nullptr;
}
bool rig_device_equal(const rig_device_t *a, const rig_device_t *b) { return a == b; }

bool rig_reaches(const rig_device_t *d, const rig_device_t *other) {
  return device_answers(d) && device_answers(other) && reaches(d, other);
}

uint64_t rig_submitted(const rig_device_t *d) { return device_answers(d) ? d->submitted.load() : 0; }

rig_status_t rig_signaled(rig_device_t *d, uint64_t *out) {
  RIG_API_CALL({
    require(d != nullptr && out != nullptr, "the device or out is NULL");
    require_device(d);
    // Inside a lock, the last value read: a driver's own word is read only
    // outside (TL-20).  read_word answers the last value read for a lost
    // device whose own word is not readable before its stop.
    bool last_read = rig_holds() > 0 && d->facts.own_word;
    *out = last_read ? d->reported.load(std::memory_order_acquire) : d->read_word();
    return RIG_OK;
  });
}

const char *rig_lost(const rig_device_t *d) {
  // A device its driver knows lost (a proxy of a failed link) is lost
  // now, whatever call noticed (PROXY-07).
  if (!d) return nullptr;
  // A released record answers the reason its uses answer (rig.h, Handles).
  if (!device_answers(d)) return retired_reason();
  if (!const_cast<rig_device_t *>(d)->notice_loss()) return nullptr;
  return d->lost_reason().c_str();
}

int64_t rig_budget(const rig_device_t *d) { return device_answers(d) ? d->budget.load() : 0; }
int64_t rig_allocated(const rig_device_t *d) { return device_answers(d) ? d->allocated.load() : 0; }

rig_status_t rig_set_budget(rig_device_t *d, int64_t n) {
  RIG_API_CALL({
    refuse_inside_lock();
    require_device(d);
    require(n >= 0, "a budget cannot be negative");
    d->budget.store(n);
    trim_cache(d, n);
    return RIG_OK;
  });
}

int64_t rig_cache_limit(const rig_device_t *d) { return device_answers(d) ? d->cache_limit.load() : 0; }

rig_status_t rig_set_cache_limit(rig_device_t *d, int64_t n) {
  RIG_API_CALL({
    refuse_inside_lock();
    require_device(d);
    if (n < 0) throw_invalid("a cache limit cannot be negative: " + std::to_string(n));
    limit_cache(d, n);
    return RIG_OK;
  });
}

rig_status_t rig_free_cache(rig_device_t *d) {
  RIG_API_CALL({
    refuse_inside_lock();
    require_device(d);
    free_cache(d);
    return RIG_OK;
  });
}

}  // extern "C"
