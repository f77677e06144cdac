// What one client does in rigd (client_counters.hpp).
#include "client_counters.hpp"

#include <ctime>
#include <utility>

namespace rigd {

namespace {

int64_t realtime_ns() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

}  // namespace

ClientCounters::ClientCounters(uint64_t id_, pid_t pid_, uid_t uid_, std::string command_, size_t devices_)
    : id(id_),
      pid(pid_),
      uid(uid_),
      command(std::move(command_)),
      connected_ns(realtime_ns()),
      devices(devices_),
      uses(std::make_unique<UseCounters[]>(devices_)) {}

void ClientCounters::lost(const std::string &why) {
  std::lock_guard g(loss_mu_);
  last_loss_ = why;
}

std::string ClientCounters::last_loss() const {
  std::lock_guard g(loss_mu_);
  return last_loss_;
}

}  // namespace rigd
