// rigd's descriptor limit and reserve (descriptors.hpp).
#include "descriptors.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace rigd {

rlim_t raise_descriptor_limit() noexcept {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised{limit.rlim_max, limit.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

rlim_t descriptor_limit() noexcept {
  rlimit limit{};
  return getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 0;
}

ReserveDescriptor::~ReserveDescriptor() { release(); }

bool ReserveDescriptor::take() noexcept {
  if (fd_ < 0) fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  return fd_ >= 0;
}

bool ReserveDescriptor::release() noexcept {
  if (fd_ < 0) return false;
  close(fd_);
  fd_ = -1;
  return true;
}

}  // namespace rigd
