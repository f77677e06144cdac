// The memory rigd holds for one client (client_objects.hpp).
#include "client_objects.hpp"

namespace rigd {

ClientObjects::~ClientObjects() {
  // The buffers go first, then (with held_) the instances they needed.
  for (auto &[handle, held] : held_) rig_buffer_unref(held.buffer);
}

bool ClientObjects::fits(int64_t bytes) const {
  std::lock_guard g(mu_);
  return quota_ == 0 || (bytes <= quota_ && counted_ <= quota_ - bytes);
}

uint64_t ClientObjects::add(rig_buffer_t *buffer, int64_t counted, Instances instances) {
  std::lock_guard g(mu_);
  uint64_t handle = next_++;
  held_.emplace(handle, Held{buffer, counted, std::move(instances)});
  counted_ += counted;
  return handle;
}

rig_buffer_t *ClientObjects::get(uint64_t handle, Instances *instances) const {
  std::lock_guard g(mu_);
  auto it = held_.find(handle);
  if (it == held_.end()) return nullptr;
  if (instances) *instances = it->second.instances;
  return rig_buffer_ref(it->second.buffer);
}

bool ClientObjects::remove(uint64_t handle) {
  rig_buffer_t *buffer;
  Instances instances;  // closed, where these are their last holds, outside the lock
  {
    std::lock_guard g(mu_);
    auto it = held_.find(handle);
    if (it == held_.end()) return false;
    buffer = it->second.buffer;
    instances = std::move(it->second.instances);
    counted_ -= it->second.counted;
    held_.erase(it);
  }
  rig_buffer_unref(buffer);
  return true;
}

}  // namespace rigd
