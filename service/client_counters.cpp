// What one client does in rigd (client_counters.hpp).
#include "client_counters.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>

namespace rigd {

namespace {

// The process's name, as the kernel keeps it (at most 15 bytes).
std::string command_of(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/comm";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char name[64];
  ssize_t n = read(fd, name, sizeof name);
  close(fd);
  if (n <= 0) return "";
  std::string s(name, static_cast<size_t>(n));
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

int64_t realtime_ns() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

}  // namespace

ClientCounters::ClientCounters(uint64_t id_, pid_t pid_, uid_t uid_, size_t devices_)
    : id(id_),
      pid(pid_),
      uid(uid_),
      command(command_of(pid_)),
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
