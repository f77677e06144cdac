// The memory rigd holds for one client (client_objects.hpp).
#include "client_objects.hpp"

namespace rigd {

ClientObjects::~ClientObjects() {
  for (auto &[handle, held] : held_) rig_buffer_unref(held.buffer);
}

bool ClientObjects::fits(int64_t bytes) const {
  std::lock_guard g(mu_);
  return quota_ == 0 || (bytes <= quota_ && counted_ <= quota_ - bytes);
}

uint64_t ClientObjects::add(rig_buffer_t *buffer, int64_t counted) {
  std::lock_guard g(mu_);
  uint64_t handle = next_++;
  held_.emplace(handle, Held{buffer, counted});
  counted_ += counted;
  return handle;
}

rig_buffer_t *ClientObjects::get(uint64_t handle) const {
  std::lock_guard g(mu_);
  auto it = held_.find(handle);
  return it == held_.end() ? nullptr : rig_buffer_ref(it->second.buffer);
}

bool ClientObjects::remove(uint64_t handle) {
  rig_buffer_t *buffer;
  {
    std::lock_guard g(mu_);
    auto it = held_.find(handle);
    if (it == held_.end()) return false;
    buffer = it->second.buffer;
    counted_ -= it->second.counted;
    held_.erase(it);
  }
  rig_buffer_unref(buffer);
  return true;
}

}  // namespace rigd
