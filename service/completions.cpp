// The completion thread of a client (completions.hpp).
#include "completions.hpp"

#include "log.hpp"
#include "ring.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

namespace rigd {

namespace {

// How long a device's thread spins for the words of other devices' values
// before it sleeps between looks.
constexpr unsigned spins_before_sleep = 1024;

}  // namespace

Completions::Completions(std::byte *words, uint32_t word_count, const uint32_t *sleepers,
                         const ServedDevices &served, ClientCounters &counters, std::string who,
                         CompletionHooks hooks)
    : words_(words),
      sleepers_(sleepers),
      served_(served),
      counters_(counters),
      who_(std::move(who)),
      hooks_(std::move(hooks)),
      lost_(word_count),
      lanes_(served.size()) {}

Completions::~Completions() {
  {
    std::lock_guard g(mu_);
    ending_ = true;
  }
  for (auto &lane : lanes_) {
    if (!lane) continue;
    lane->changed.notify_all();
    lane->thread.join();
  }
}

void Completions::open_lane(size_t device) {
  std::lock_guard g(mu_);
  std::unique_ptr<Lane> &lane = lanes_[device];
  if (lane) return;
  auto made = std::make_unique<Lane>();
  // Published only with its thread: a lane without one would hold values
  // that no thread raises.
  made->thread = std::thread([this, l = made.get()] { run(*l); });
  lane = std::move(made);
}

rig_proxy_word *Completions::word(uint32_t proxy) const noexcept {
  return reinterpret_cast<rig_proxy_word *>(words_ + std::size_t{proxy} * RIG_PROXY_WORD_BYTES);
}

void Completions::start(uint32_t proxy, uint64_t value) {
  rig_proxy_word *w = word(proxy);
  std::atomic_ref<uint64_t>(w->value).store(value, std::memory_order_release);
}

void Completions::expect(uint32_t proxy, size_t device, uint64_t value, const std::vector<rig_point_t> &points,
                         const std::vector<rig_proxy_wait> &after, const TouchedRows &rows) {
  std::lock_guard g(mu_);
  Lane &lane = *lanes_[device];  // opened with the proxy
  // Work that is done already (a memory device's, which runs before its
  // submit returns) raises the word here, before the hand-over's answer,
  // so that the client's wait finds it raised: no thread to wake.
  if (lane.values.empty() && reached(points) && shown(after) == Shown::yes) {
    raise(proxy, device, value, nullptr);
    for (const auto &[row, n] : rows) row->finish(n);
    return;
  }
  lane.values.push_back({proxy, device, value, points, after, rows});
  lane.held.store(lane.values.size(), std::memory_order_relaxed);
  counters_.uses[device].queued.set(lane.values.size());
  queued_.fetch_add(1, std::memory_order_relaxed);
  lane.changed.notify_all();
}

bool Completions::reached(const std::vector<rig_point_t> &points) {
  for (rig_point_t p : points) {
    bool done = false;
    if (rig_point_reached(p, &done) != RIG_OK || !done) return false;
  }
  return true;
}

Completions::Shown Completions::shown(const std::vector<rig_proxy_wait> &after) const noexcept {
  for (const rig_proxy_wait &w : after) {
    rig_proxy_word *other = word(w.proxy);
    // A value the word showed before it was lost was done.
    if (std::atomic_ref<uint64_t>(other->value).load(std::memory_order_acquire) >= w.value) continue;
    if (lost_[w.proxy].load(std::memory_order_acquire)) return Shown::lost;
    return Shown::not_yet;
  }
  return Shown::yes;
}

void Completions::raise(uint32_t proxy, size_t device, uint64_t value, const char *failed) {
  if (failed) {
    fail(proxy, device, failed);
    return;
  }
  served_.publish_progress(device);
  if (lost_[proxy].load(std::memory_order_relaxed)) return;
  rig_proxy_word *w = word(proxy);
  // The hook first: a value that waits for this one is raised, and heard,
  // only once the word shows it, so that a remote client hears the two in
  // their order.
  if (hooks_.raised) hooks_.raised(proxy, device, value);
  rig::proxy::raise_word(&w->value, value, sleepers_);
}

void Completions::fail(uint32_t proxy, size_t device, const std::string &why) {
  rig_proxy_word *w = word(proxy);
  {
    // The first failure's why stays: the client reads it once it sees lost.
    std::lock_guard g(lost_mu_);
    if (lost_[proxy].load(std::memory_order_relaxed)) return;
    log_line(LogLevel::warning, who_ + " lost proxy " + std::to_string(proxy) + ": " + why);
    std::snprintf(w->why, sizeof w->why, "%s", why.c_str());
    std::atomic_ref<uint32_t>(w->lost).store(1, std::memory_order_seq_cst);
    lost_[proxy].store(true, std::memory_order_release);
    counters_.faults.add(1);
    counters_.uses[device].faults.add(1);
    counters_.lost(why);
  }
  rig::proxy::wake_word(&w->value, sleepers_);
  if (hooks_.lost) hooks_.lost(proxy, why);
}

bool Completions::has_room(size_t device) const noexcept {
  return lanes_[device]->held.load(std::memory_order_relaxed) < RIG_PROXY_VALUES_IN_FLIGHT;
}

void Completions::await_room(size_t device, std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  Lane &lane = *lanes_[device];
  lane.drained.wait_for(lock, wait, [&] { return lane.values.size() < RIG_PROXY_VALUES_IN_FLIGHT; });
}

void Completions::pending(uint32_t proxy, uint64_t value, std::vector<rig_point_t> &points) const {
  // Nearly always so on a device whose work is done before its submit
  // returns, such as a memory device: nothing to look for.
  if (queued_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard g(mu_);
  for (const auto &lane : lanes_) {
    if (!lane) continue;
    // The latest such value alone, found from the lane's back: its points
    // say its earlier values' too (pending's header).
    auto latest = std::find_if(lane->values.rbegin(), lane->values.rend(),
                               [&](const Value &v) { return v.proxy == proxy && v.value <= value; });
    if (latest != lane->values.rend()) points.insert(points.end(), latest->points.begin(), latest->points.end());
  }
}

void Completions::run(Lane &lane) {
  std::unique_lock lock(mu_);
  for (;;) {
    lane.changed.wait(lock, [&] { return ending_ || !lane.values.empty(); });
    if (lane.values.empty()) return;
    // The front stays put while expect appends (a deque's references
    // outlive a push_back), and only this thread pops it.
    const Value &v = lane.values.front();
    const uint32_t proxy = v.proxy;
    const size_t device = v.device;
    const uint64_t value = v.value;
    const std::vector<rig_point_t> &points = v.points;
    const std::vector<rig_proxy_wait> &after = v.after;
    const TouchedRows &rows = v.rows;
    lock.unlock();
    auto began = std::chrono::steady_clock::now();
    bool reached = true;
    for (rig_point_t p : points) reached = rig_point_wait(p) == RIG_OK && reached;
    // The values waited for are done (their points are among points): their
    // devices' threads show them in a moment, or once the values before
    // them on their devices are done.
    Shown words = Shown::not_yet;
    for (unsigned turn = 0; reached && (words = shown(after)) == Shown::not_yet; turn++) {
      if (turn < spins_before_sleep)
        rig::spin_turn(turn);
      else
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    std::string why = !reached               ? std::string("its work failed: ") + rig_last_error()
                      : words == Shown::lost ? "a value it waits for failed"
                                             : "";
    raise(proxy, device, value, why.empty() ? nullptr : why.c_str());
    // Read once the word is raised, so that the count delays no client.
    counters_.uses[device].busy_ns.add(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began).count()));
    for (const auto &[row, n] : rows) row->finish(n);
    lock.lock();
    lane.values.pop_front();
    lane.held.store(lane.values.size(), std::memory_order_relaxed);
    if (lane.values.size() == RIG_PROXY_VALUES_IN_FLIGHT - 1) lane.drained.notify_all();
    counters_.uses[device].queued.set(lane.values.size());
    queued_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace rigd
