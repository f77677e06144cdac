// A remote client's reports (remote_reports.hpp).
#include "remote_reports.hpp"

#include <rig/rig.h>

namespace rigd {

namespace wire = rig::net::wire;

void RemoteReports::expect_get(uint32_t device, uint64_t value, uint32_t part, uint64_t staging) {
  std::lock_guard g(mu_);
  gets_[device].push_back({value, part, staging});
}

bool RemoteReports::report(uint32_t device, uint64_t value) {
  // Each device's values are raised in order by one thread at a time (its
  // lane's, Completions), but devices' lanes share the scratch bytes.
  std::lock_guard g(mu_);
  std::deque<Get> &gets = gets_[device];
  bool sent = true;
  while (!gets.empty() && gets.front().value <= value) {
    sent = sent && send_bytes(device, gets.front());
    objects_.remove(gets.front().staging);
    gets.pop_front();
  }
  return sent && connection_.send(wire::Report{device, value}).ok();
}

bool RemoteReports::send_bytes(uint32_t device, const Get &get) {
  rig_buffer_t *staging = objects_.get(get.staging);
  if (!staging) return false;
  int64_t n = rig_buffer_bytes(staging);
  bytes_.resize(static_cast<size_t>(n));
  bool read = rig_buffer_blit_to_bytes(staging, 0, bytes_.data(), n, 0, n) == RIG_OK;
  rig_buffer_unref(staging);
  wire::Bytes message{device, get.value, get.part, 0, wire::Data{bytes_}};
  return read && connection_.send(message).ok();
}

}  // namespace rigd
