// Threads that wait on clients' devices (waiters.hpp).
#include "waiters.hpp"

#include <thread>
#include <utility>

namespace rigd {

Waiters::~Waiters() {
  std::unique_lock g(mu_);
  ended_.wait(g, [&] { return running_ == 0; });
}

void Waiters::run(std::function<void()> work) {
  std::lock_guard g(mu_);
  // Detached: the count, not a join, makes this object outlive the thread,
  // which touches nothing of it once it has counted itself out.
  std::thread([this, work = std::move(work)]() mutable {
    work();
    work = nullptr;
    std::lock_guard ending(mu_);
    --running_;
    ended_.notify_all();
  }).detach();
  ++running_;
}

bool Waiters::finish_by(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock g(mu_);
  return ended_.wait_until(g, deadline, [&] { return running_ == 0; });
}

size_t Waiters::running() const {
  std::lock_guard g(mu_);
  return running_;
}

}  // namespace rigd
