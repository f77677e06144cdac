// The memory rigd holds for one client (client_objects.hpp).
#include "client_objects.hpp"

namespace rigd {

ClientObjects::~ClientObjects() {
  // The buffers go first, then (with held_) what they held.
  for (auto &[handle, held] : held_) rig_buffer_unref(held.buffer);
}

bool ClientObjects::fits(int64_t bytes) const {
  std::lock_guard g(mu_);
  return quota_ == 0 || (bytes <= quota_ && counted_ <= quota_ - bytes);
}

bool ClientObjects::charge(int64_t bytes) {
  std::lock_guard g(mu_);
  if (quota_ != 0 && (bytes > quota_ || counted_ > quota_ - bytes)) return false;
  counted_ += bytes;
  return true;
}

void ClientObjects::refund(int64_t bytes) {
  std::lock_guard g(mu_);
  counted_ -= bytes;
}

uint64_t ClientObjects::add(rig_buffer_t *buffer, int64_t counted, Holds holds) {
  std::lock_guard g(mu_);
  uint64_t handle = next_++;
  if (!holds.rows) holds.rows = std::make_shared<RowSlot>();
  held_.emplace(handle, Held{buffer, counted, std::move(holds)});
  counted_ += counted;
  return handle;
}

rig_buffer_t *ClientObjects::get(uint64_t handle, Holds *holds) const {
  std::lock_guard g(mu_);
  auto it = held_.find(handle);
  if (it == held_.end()) return nullptr;
  if (holds) *holds = it->second.holds;
  return rig_buffer_ref(it->second.buffer);
}

std::shared_ptr<SharedRow> ClientObjects::row_of(uint64_t handle,
                                                 const std::function<std::shared_ptr<SharedRow>()> &rows) {
  std::lock_guard g(mu_);
  auto it = held_.find(handle);
  if (it == held_.end()) return nullptr;
  return it->second.holds.rows->row_or(rows);
}

rig_buffer_t *ClientObjects::get(uint64_t handle, std::shared_ptr<SharedRow> *row) const {
  std::lock_guard g(mu_);
  auto it = held_.find(handle);
  if (it == held_.end()) return nullptr;
  *row = it->second.holds.rows->row();
  return rig_buffer_ref(it->second.buffer);
}

bool ClientObjects::remove(uint64_t handle) {
  rig_buffer_t *buffer;
  Holds holds;  // released, where these are the last holds, outside the lock
  {
    std::lock_guard g(mu_);
    auto it = held_.find(handle);
    if (it == held_.end()) return false;
    buffer = it->second.buffer;
    holds = std::move(it->second.holds);
    counted_ -= it->second.counted;
    held_.erase(it);
  }
  rig_buffer_unref(buffer);
  return true;
}

}  // namespace rigd
