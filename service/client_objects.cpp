// The memory rigd holds for one client (client_objects.hpp).
#include "client_objects.hpp"

namespace rigd {

UseCounters *ClientObjects::use_of(const Object &o) const noexcept {
  if (!counters_ || o.kind != Held::device_bytes || o.counted <= 0) return nullptr;
  const Holds &h = o.holds;
  size_t device = h.exports != no_export ? h.exports
                  : h.mapped_on        ? h.mapped_on->served()
                  : h.memory           ? h.memory->served()
                                       : no_export;
  return device < counters_->devices ? &counters_->uses[device] : nullptr;
}

void ClientObjects::count(const Object &o, bool up) const noexcept {
  if (UseCounters *use = use_of(o)) {
    auto n = static_cast<uint64_t>(o.counted);
    up ? use->bytes.add(n) : use->bytes.subtract(n);
  }
}

ClientObjects::~ClientObjects() {
  // The buffers go first, then (with held_) what they held.
  for (auto &[handle, held] : held_) {
    count(held, false);
    rig_buffer_unref(held.buffer);
    refund_entry(held.counted, held.kind);
  }
}

std::string ClientObjects::charge_entry(int64_t bytes, Held kind) {
  if (std::string refused = charge(bytes, kind); !refused.empty()) return refused;
  std::string refused = charge(1, Held::handles);
  if (!refused.empty()) refund(bytes, kind);
  return refused;
}

void ClientObjects::refund_entry(int64_t bytes, Held kind) noexcept {
  refund(bytes, kind);
  refund(1, Held::handles);
}

uint64_t ClientObjects::add(rig_buffer_t *buffer, int64_t counted, Holds holds, Held kind) {
  std::lock_guard g(mu_);
  uint64_t handle = next_++;
  if (!holds.rows) holds.rows = std::make_shared<RowSlot>();
  auto [it, added] = held_.emplace(handle, Object{buffer, counted, kind, std::move(holds)});
  count(it->second, true);
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
  Object held{};
  {
    std::lock_guard g(mu_);
    auto it = held_.find(handle);
    if (it == held_.end()) return false;
    // Its holds are released, where they are the last, outside the lock.
    held = std::move(it->second);
    held_.erase(it);
    count(held, false);
  }
  rig_buffer_unref(held.buffer);
  refund_entry(held.counted, held.kind);
  return true;
}

}  // namespace rigd
