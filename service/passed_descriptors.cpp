// Descriptors that clients pass (passed_descriptors.hpp).
#include "passed_descriptors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace rigd {

namespace {

// The descriptors that may wait for the closer: each is one of rigd's
// (LimitNOFILE=65536), which clients that pass files of a file system that
// never answers could otherwise fill.
constexpr size_t max_waiting_closes = 64;

// Closes the descriptors it is given, in turn, on a thread of its own that
// lives as long as rigd: a close that waits on a client's FUSE daemon
// holds up this thread and the closes behind it, never a session.
class Closer {
 public:
  Closer() { std::thread([this] { run(); }).detach(); }

  // false where fd cannot be queued (max_waiting_closes wait already, or
  // no memory): the caller closes it.
  bool close_later(int fd) noexcept {
    try {
      std::lock_guard g(mu_);
      if (fds_.size() >= max_waiting_closes) return false;
      fds_.push_back(fd);
    } catch (const std::exception &) {
      return false;
    }
    ready_.notify_one();
    return true;
  }

 private:
  [[noreturn]] void run() {
    for (;;) {
      std::unique_lock g(mu_);
      ready_.wait(g, [this] { return !fds_.empty(); });
      int fd = fds_.front();
      fds_.pop_front();
      g.unlock();
      close(fd);
    }
  }

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<int> fds_;
};

// The closer, made at its first use and never destroyed (its thread may
// wait in a close as rigd exits); NULL where no thread could be made.
Closer *closer() noexcept {
  static Closer *const made = []() -> Closer * {
    try {
      return new Closer;
    } catch (const std::exception &) {
      return nullptr;
    }
  }();
  return made;
}

}  // namespace

bool sealable(int fd) noexcept { return fcntl(fd, F_GET_SEALS) >= 0; }

void close_passed(int fd) noexcept {
  if (sealable(fd)) {
    close(fd);
    return;
  }
  // Past the closer, the close waits here, on the thread of the client
  // that passed fd: better than a descriptor kept.
  Closer *c = closer();
  if (!c || !c->close_later(fd)) close(fd);
}

}  // namespace rigd
