// rigd's file descriptors: its limit, and one held in reserve so that at
// that limit it can still accept a connection to refuse it.
#pragma once

#include <sys/resource.h>

namespace rigd {

// Raises the soft RLIMIT_NOFILE to the hard limit (each client holds a
// socket and its segments' memfds, and what it passes) and answers it.
rlim_t raise_descriptor_limit() noexcept;

// The descriptor limit now (the soft RLIMIT_NOFILE).
rlim_t descriptor_limit() noexcept;

// A descriptor (of /dev/null) held in reserve: at EMFILE rigd lets it go,
// accepts the connection waiting, refuses it with the reason and closes
// it, then takes the reserve again, instead of leaving the connection
// pending (and the listening socket readable, so that rigd would spin).
class ReserveDescriptor {
 public:
  ReserveDescriptor() noexcept { take(); }
  ~ReserveDescriptor();
  ReserveDescriptor(const ReserveDescriptor &) = delete;
  ReserveDescriptor &operator=(const ReserveDescriptor &) = delete;

  bool held() const noexcept { return fd_ >= 0; }
  // Takes the reserve where it is not held; false where no descriptor is
  // free for it.
  bool take() noexcept;
  // Lets the reserve go, for a moment; false where it was not held.
  bool release() noexcept;

 private:
  int fd_ = -1;
};

}  // namespace rigd
