// The worker that takes back instances (releases.hpp).
#include "releases.hpp"

#include <algorithm>
#include <exception>
#include <iterator>
#include <utility>

namespace rigd {

namespace {

// How often the worker looks again at the devices still working: every
// 5 ms at first, twice as long after each look that found none done, up
// to 200 ms, so that a device that never finishes costs rigd no core.  A
// release costs nothing meanwhile but an instance kept open a little
// longer.
constexpr auto first_poll_period = std::chrono::milliseconds(5);
constexpr auto last_poll_period = std::chrono::milliseconds(200);

}  // namespace

Releases::Releases(std::function<void(Release &)> finish) : finish_(std::move(finish)), worker_([this] { run(); }) {}

Releases::~Releases() {
  {
    std::lock_guard g(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void Releases::add(Release r) noexcept {
  try {
    std::lock_guard g(mu_);
    waiting_.push_back(std::move(r));
  } catch (const std::exception &) {
    rig_point_wait(rig_point_make(r.device, rig_submitted(r.device)));
    finish_(r);
    return;
  }
  changed_.notify_all();
}

bool Releases::done(const Release &r) noexcept {
  uint64_t last = rig_submitted(r.device);
  bool reached = false;
  return last == r.taken_at || rig_lost(r.device) != nullptr ||
         rig_point_reached(rig_point_make(r.device, last), &reached) != RIG_OK || reached;
}

void Releases::run() {
  std::unique_lock g(mu_);
  auto period = first_poll_period;
  for (;;) {
    // Ends once stopping and every release has finished.
    changed_.wait(g, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;
    std::vector<Release> ready;
    auto first_ready = std::partition(waiting_.begin(), waiting_.end(), [](const Release &r) { return !done(r); });
    std::move(first_ready, waiting_.end(), std::back_inserter(ready));
    waiting_.erase(first_ready, waiting_.end());
    finishing_ = ready.size();
    g.unlock();
    for (Release &r : ready) finish_(r);
    g.lock();
    finishing_ = 0;
    changed_.notify_all();
    period = ready.empty() ? std::min(2 * period, last_poll_period) : first_poll_period;
    if (!waiting_.empty() && changed_.wait_for(g, period) == std::cv_status::no_timeout) period = first_poll_period;
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
  for (const Release &r : waiting_) names.push_back(rig_device_name(r.device));
  return names;
}

}  // namespace rigd
