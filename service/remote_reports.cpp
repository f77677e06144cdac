// A remote client's reports (remote_reports.hpp).
#include "remote_reports.hpp"

#include <rig/rig.h>

namespace rigd {

namespace wire = rig::net::wire;

RemoteReports::~RemoteReports() {
  for (rig_buffer_t *spare : spares_) rig_buffer_unref(spare);
}

rig_buffer_t *RemoteReports::take_spare(uint64_t bytes) {
  std::lock_guard g(mu_);
  for (auto it = spares_.begin(); it != spares_.end(); ++it)
    if (static_cast<uint64_t>(rig_buffer_bytes(*it)) == bytes) {
      rig_buffer_t *spare = *it;
      spares_.erase(it);
      return spare;
    }
  return nullptr;
}

void RemoteReports::keep_spare(rig_buffer_t *staging) {
  if (static_cast<uint64_t>(rig_buffer_bytes(staging)) >= kLeastSpare) {
    std::lock_guard g(mu_);
    // The latest sizes stay: the oldest spare goes where there is no room.
    if (spares_.size() == kSpares) {
      rig_buffer_unref(spares_.front());
      spares_.erase(spares_.begin());
    }
    spares_.push_back(staging);
    return;
  }
  rig_buffer_unref(staging);
}

void RemoteReports::expect_get(uint32_t device, uint64_t value, uint32_t part, uint64_t staging) {
  std::lock_guard g(mu_);
  gets_[device].push_back({value, part, staging});
}

bool RemoteReports::report(uint32_t device, uint64_t value) {
  // Each device's values are raised in order by one thread at a time (its
  // lane's, Completions): the table's lock is held only to take the GETs
  // that are due, not while their bytes go, which would hold up the other
  // devices' reports and the session's next hand-over.
  std::vector<Get> due;
  {
    std::lock_guard g(mu_);
    std::deque<Get> &gets = gets_[device];
    for (; !gets.empty() && gets.front().value <= value; gets.pop_front()) due.push_back(gets.front());
  }
  bool sent = true;
  for (const Get &get : due) {
    sent = sent && send_bytes(device, get);
    objects_.remove(get.staging);
  }
  return sent && connection_.send(wire::Report{device, value}).ok();
}

bool RemoteReports::send_bytes(uint32_t device, const Get &get) {
  rig_buffer_t *staging = objects_.get(get.staging);
  if (!staging) return false;
  auto n = static_cast<size_t>(rig_buffer_bytes(staging));
  // Host memory of rigd's, which the GET's copy, done with its value,
  // wrote last: its bytes go out as they lie.
  const auto *host = static_cast<const uint8_t *>(rig_buffer_host(staging));
  std::vector<uint8_t> copied;
  if (!host) {
    copied.resize(n);
    auto length = static_cast<int64_t>(n);
    if (rig_buffer_blit_to_bytes(staging, 0, copied.data(), length, 0, length) != RIG_OK) {
      rig_buffer_unref(staging);
      return false;
    }
    host = copied.data();
  }
  bool sent = connection_.send(wire::Bytes{device, get.value, get.part, 0, wire::Data{{host, n}}}).ok();
  // The send is complete: the next GET may write the staging memory.
  keep_spare(staging);
  return sent;
}

}  // namespace rigd
