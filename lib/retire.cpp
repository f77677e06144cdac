// The device's retired list: objects whose release waits for the device's
// work (released submissions, images no reference holds).  They go once
// the device reaches their value; on a lost device only once it has
// stopped (rig.txt, Stops and forks: the values submissions keep).
#include "allocation.hpp"

namespace rig {

void release_retired(rig_device_t *d) {
  std::vector<rig_device::Retired> ready;
  {
    Guard g(d->retired_mu);
    if (d->retired.empty()) return;
    bool stopped = d->is_lost() ? d->stopped() : false;
    uint64_t reached = d->is_lost() ? 0 : d->read_word();
    for (auto it = d->retired.begin(); it != d->retired.end();) {
      if (stopped || (!d->is_lost() && it->value <= reached)) {
        ready.push_back(*it);
        it = d->retired.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const rig_device::Retired &r : ready) r.release(r.object);
}

void retire(rig_device_t *d, uint64_t value, void (*release)(void *), void *object) {
  bool now = d->is_lost() ? d->stopped() : d->read_word() >= value;
  if (now) {
    release(object);
    return;
  }
  Guard g(d->retired_mu);
  d->retired.push_back({value, release, object});
}

}  // namespace rig
