// The poller of a client's rings (poller.hpp).
#include "poller.hpp"

#include <chrono>
#include <thread>

namespace rigd {

using rig::proxy::RingStatus;

namespace {

// How long an idle poller sleeps before it looks at its stop flag again,
// should a wake be lost to the race between that flag and the futex.
constexpr int idle_sleep_ms = 200;
// How long the poller spins on an empty ring after its last entry before
// it sleeps: longer than a client's turn between two requests (its wait for
// the last answer and its next submit), shorter than anything a person
// would call busy.
constexpr auto spin_after_entry = std::chrono::microseconds(200);
// A client that sent nothing for this long is idle: the memory cached for
// it goes back to the drivers (Requests::release_caches).
constexpr auto idle_after_entry = std::chrono::seconds(1);
// How often the poller looks at its stop flag while an allocation waits
// on a waiter thread (Requests::waiting), or a hand-over for room.
constexpr auto waiting_look = std::chrono::milliseconds(10);

}  // namespace

PollerEnd run_poller(const rig::proxy::RingSegment &rings, Requests &requests, const std::atomic<bool> &stopping) {
  auto submissions = rings.submission_consumer();
  auto completions = rings.completion_producer();
  auto last_entry = std::chrono::steady_clock::now(), last_work = last_entry;
  // Entries came since the clock was last read: the spin starts anew.
  bool fresh = false;
  // Entries came since the caches were last released.
  bool worked = false;
  for (unsigned empty_polls = 0; !stopping.load(std::memory_order_acquire);) {
    rig_proxy_entry entry;
    RingStatus status = submissions.peek(entry);
    if (status == RingStatus::empty) {
      // The clock is read once every 64 polls: a poll costs nanoseconds.
      if (++empty_polls % 64 != 0) {
        rig::spin_turn(empty_polls);
        continue;
      }
      auto now = std::chrono::steady_clock::now();
      if (fresh) last_entry = last_work = now, fresh = false;
      if (worked && now - last_work >= idle_after_entry) {
        requests.release_caches();
        worked = false;
      }
      if (now - last_entry < spin_after_entry) {
        rig::spin_turn(empty_polls);
        continue;
      }
      status = submissions.sleep(idle_sleep_ms);
      if (status == RingStatus::breach) return PollerEnd::breach;
      last_entry = std::chrono::steady_clock::now();
      continue;
    }
    empty_polls = 0;
    fresh = worked = true;
    if (status == RingStatus::breach) return PollerEnd::breach;
    // A hand-over past the values a device holds for the client waits in
    // its slot: the client finds its ring full, and rigd's memory of its
    // values stays bounded.
    while (!requests.has_room(entry)) {
      if (stopping.load(std::memory_order_acquire)) return PollerEnd::stopped;
      requests.await_room(entry, waiting_look);
    }
    rig_proxy_completion answer;
    bool answered = requests.handle(entry, answer);
    // The slot, and the payload it names, go back to the client only now
    // that rigd has copied what it needs of them.
    submissions.release();
    // Completions keep the ring's order: the entries after a waiting
    // allocation wait with it, but the poller itself waits for nothing, and
    // ends as soon as it is stopped.
    while (!answered && requests.waiting()) {
      if (stopping.load(std::memory_order_acquire)) return PollerEnd::stopped;
      answered = requests.finish_waiting(waiting_look, answer);
    }
    if (!answered) continue;
    while ((status = completions.push(answer)) == RingStatus::full) {
      if (stopping.load(std::memory_order_acquire)) return PollerEnd::stopped;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (status == RingStatus::breach) return PollerEnd::breach;
  }
  return PollerEnd::stopped;
}

void wake_poller(const rig::proxy::RingSegment &rings) noexcept { rings.wake_submission_consumer(); }

}  // namespace rigd
