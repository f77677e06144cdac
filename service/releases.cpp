// The workers that take back instances (releases.hpp).
#include "releases.hpp"

#include <algorithm>
#include <exception>
#include <utility>

namespace rigd {

Releases::Releases(std::function<void(Release &)> finish) : finish_(std::move(finish)) {
  workers_.emplace_back([this] { run(); });
}

Releases::~Releases() {
  {
    std::lock_guard g(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread &w : workers_) w.join();
}

void Releases::add(Release r) noexcept {
  std::unique_lock g(mu_);
  try {
    waiting_.push_back(std::move(r));
  } catch (const std::exception &) {
    g.unlock();
    finish_(r);
    return;
  }
  // A worker more where none is free: a failure to make one leaves the
  // release to the workers there are.
  if (idle_workers_ == 0 && workers_.size() < max_release_workers) {
    try {
      workers_.emplace_back([this] { run(); });
    } catch (const std::exception &) {
    }
  }
  g.unlock();
  changed_.notify_one();
}

void Releases::run() {
  std::unique_lock g(mu_);
  for (;;) {
    // Ends once stopping and every release has been taken.
    idle_workers_++;
    changed_.wait(g, [&] { return stopping_ || !waiting_.empty(); });
    idle_workers_--;
    if (waiting_.empty()) return;
    Release r = std::move(waiting_.front());
    waiting_.pop_front();
    finishing_.push_back(r.device);
    g.unlock();
    finish_(r);
    g.lock();
    std::erase(finishing_, r.device);
    changed_.notify_all();
  }
}

bool Releases::finish_by(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock g(mu_);
  return changed_.wait_until(g, deadline, [&] { return finished(); });
}

void Releases::finish_all() {
  std::unique_lock g(mu_);
  changed_.wait(g, [&] { return finished(); });
}

std::vector<std::string> Releases::waiting() const {
  std::lock_guard g(mu_);
  std::vector<std::string> names;
  for (rig_device_t *d : finishing_) names.push_back(rig_device_name(d));
  for (const Release &r : waiting_) names.push_back(rig_device_name(r.device));
  return names;
}

}  // namespace rigd
