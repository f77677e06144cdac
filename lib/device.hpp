// The record of an open device: its properties, its timeline and the
// reason it was lost.  A record lives until the registry retires it (once
// it is lost, stopped and nothing names it) and then for 4096 later
// retirements more, so that a rig_device_t pointer a program kept still
// answers as a closed device (registry.hpp).  The registry then releases
// it to the device pool (handles.hpp), whose header the public calls read
// first (require_device), so that a kept pointer answers RIG_ELOST until
// kDeviceQuarantine more records were released and its memory may hold a
// new device.
#pragma once

#include "rig_internal/handles.hpp"
#include "rig_internal/driver.hpp"
#include "rig_internal/errors.hpp"
#include "rig_internal/locks.hpp"

#include <rig/edge.h>
#include <rig/rig.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <string>
#include <map>
#include <vector>

namespace rig {
struct Allocation;
struct CachedBlock;
struct Mapping;
}

struct rig_device : rig::HandleRecord<rig::HandleType::Device> {
  // Properties, set at open and never changed.
  std::string name;
  rig::Driver *driver = nullptr;
  rig::Facts facts;
  std::string arch;
  std::string instruction_set;
  bool is_host = false;
  // An io device: its library's functions (edge.h), else nullptr.
  const rig_io_ops_t *io_ops = nullptr;
  void *io_library = nullptr;
  bool is_io() const { return io_ops != nullptr; }
  uint16_t slot = 0;
  uint64_t start = 0;  // the value the timeline started after

  std::unique_ptr<rig::DriverDevice> drv;

  // Timeline.  submit_mu orders the assignment of values with the driver's
  // room, submit and commit, which rig calls one at a time per device.
  rig::Mutex submit_mu;
  std::atomic<uint64_t> submitted{0};
  std::atomic<uint64_t> committed{0};
  std::atomic<uint64_t> reported{0};  // the last value read from the word

  // Budget and the bytes that count in it.
  std::atomic<int64_t> budget{INT64_MAX};
  std::atomic<int64_t> allocated{0};

  // Reclamation: allocations collected but not yet returned, and the cache.
  rig::Mutex reclaim_mu;
  std::vector<rig::Allocation *> collected;
  // The cache, by kind and bytes, and the bytes it holds, at most
  // cache_limit (rig_set_cache_limit).
  std::multimap<std::pair<int, int64_t>, rig::CachedBlock *> cache;
  int64_t cache_bytes = 0;
  std::atomic<int64_t> cache_limit{INT64_MAX};
  // Allocations (live, collected or cached) and other holdings that keep the
  // device in its slot after it is closed.
  std::atomic<int64_t> holdings{0};
  // Stamps, unordered uses and queue waits of others that name the device:
  // its record is retired only once none does.
  std::atomic<int64_t> named{0};
  // The device's mappings of other memory (rig::Mapping), so that they go
  // back once it has stopped lost (rig::return_mappings).  A leaf lock:
  // nothing is taken while it is held.
  rig::Mutex mappings_mu;
  std::vector<rig::Mapping *> mappings;
  bool record_retired = false;  // by the registry, under its lock

  rig_device() = default;
  rig_device(const rig_device &) = delete;
  rig_device &operator=(const rig_device &) = delete;
  ~rig_device();

  // The waits of its queue on other devices' values, until it passes them:
  // a loss spreads along them (rig.txt, Loss).
  struct QueueWait {
    rig_device *on;
    uint64_t on_value;
    uint64_t my_value;
  };
  rig::Mutex queue_waits_mu;
  std::vector<QueueWait> queue_waits;
  // Loses the device with "NAME lost" if its queue waits for a value that a
  // lost device NAME never reached; returns true if it is lost.
  bool spread_loss();
  // Watches each device the queue waits on, directly or along a chain of
  // waits, for a value it has not reached: checks its hang clock and asks
  // its driver for a fault (a sleep of 0 ms), losing it for either.
  // Returns the least hang bound of the device and those watched (ms;
  // INT64_MAX where none declares one).
  int64_t watch_waited();

  // Closed by rig_close: its images are no longer live (Valid submissions).
  std::atomic<bool> closed{false};

  // What waits for the device's work before it returns: released
  // submissions (their memory, images and keep) and images to unload.
  // Each runs once the device reaches value, or once it has stopped
  // where it is lost (rig::release_retired).
  struct Retired {
    uint64_t value;
    void (*release)(void *object);
    void *object;
  };
  rig::Mutex retired_mu;
  std::vector<Retired> retired;

  // Values per device (Local): each key's value, dropped after the stop.
  std::mutex locals_mu;
  std::vector<std::pair<rig_local_key_t *, void *>> locals;
  bool locals_dropped = false;  // drop_locals took them: a later value drops at once

  // The reason of its loss, set once; the values reached when it was lost.
  const std::string &lost_reason() const;
  bool is_lost() const { return lost_.load(std::memory_order_acquire) != nullptr; }
  uint64_t reached_at_loss() const { return reached_at_loss_; }
  bool lost_by_fault() const { return lost_by_fault_; }

  // Loses the device with why, once; later losses keep the first reason.
  // Returns true if this call lost it.
  bool lose(const std::string &why, bool fault);
  // In a child of fork, with one thread: a driver's device inherited from
  // the parent is lost ("forked" unless lost before), its points count as
  // never reached, and rig never calls its driver again.
  void lose_in_fork_child();
  // Loses the device where its driver learned outside any call that it is
  // lost (DriverDevice::lost_outside_calls), and answers is_lost(): the
  // checks of rig_lost and of an open of its name.  Outside rig's locks.
  bool notice_loss();

  // The last value the device reports: reads its word (or the last value
  // read where the device is lost and its driver's word is not readable).
  uint64_t read_word();
  // Gives a word of the driver's own back to its driver's free, once: when
  // the lost device has left its slot (DEV-21).  Later reads answer the last
  // value read.
  void free_own_word();
  // True iff value is reached (and not dropped by a loss).  Throws
  // RIG_ELOST if the device is lost and never reached it.
  bool reached(uint64_t value);
  // Commits the work up to value (a wait's first step).
  void commit_to(uint64_t value);
  // Returns once value is reached; checks the hang bound and the thread's
  // interrupt flag.  Throws RIG_ELOST or RIG_EINTR.
  void wait(uint64_t value);

  // Driver calls counted while the device is not lost: the stop runs only
  // once none is in flight.
  void enter_call();
  void leave_call();

  // Stopping.  stop() runs the owed stop (or waits for the one under way).
  void stop();
  bool stop_returned() const { return stop_state_.load(std::memory_order_acquire) == kStopDone; }
  // Stopped: the driver's stop returned and the word shows the last value.
  bool stopped();

 private:
  std::atomic<const std::string *> lost_{nullptr};
  bool owns_reason_ = false;  // lost_ was made by new
  uint64_t reached_at_loss_ = 0;
  bool lost_by_fault_ = false;

  // The hang clock (rig.txt, Hangs).
  rig::Mutex hang_mu_;
  int64_t clock_start_ns_ = 0;
  uint64_t clock_value_ = 0;
  void check_hang(uint64_t word);
  // A sleep of 0 ms on the device not lost, counted: a Fault loses it.
  void poll_fault(uint64_t word);

  static constexpr int kStopNone = 0, kStopOwed = 1, kStopRunning = 2, kStopDone = 3;
  // Counted (rig_hold): a driver's queue calls and waits, which a
  // signal-safe driver's make with no mask, take it in and out of the call.
  rig::Mutex stop_mu_;
  std::condition_variable_any stop_cv_;
  std::atomic<int> in_flight_{0};  // enter_call and leave_call take no lock
  std::atomic<int> stop_state_{kStopNone};
  bool forked_ = false;
  std::atomic<bool> word_freed_{false};
  std::atomic<int> word_readers_{0};  // in read_word's signaled()
  uint64_t note_word(uint64_t w);     // raises reported to w; the larger
};

namespace rig {

// Whether rig masks signals around d's queue calls (room, submit,
// commit, sleep): unless its driver says they are signal-safe (ERR-06).
inline bool masks_queue_calls(const rig_device_t *d) { return !d->facts.signal_safe; }

// Runs a counted driver call of d with signals masked (for a queue call,
// where masks_queue_calls).  A Fault loses d; another exception from a
// call that changes d's memory or code loses it too (changes_state).
// Either way the call answers RIG_ELOST.
template <class F>
auto driver_call(rig_device_t *d, bool changes_state, F &&f, bool queue_call = false) -> decltype(f()) {
  DriverCallMask mask(!queue_call || masks_queue_calls(d));
  d->enter_call();
  struct Leave {
    rig_device_t *d;
    ~Leave() { d->leave_call(); }
  } leave{d};
  try {
    return f();
  } catch (const Fault &fault) {
    d->lose(fault.what(), true);
    throw_lost(d);
  } catch (const Error &) {
    throw;
  } catch (const std::exception &e) {
    if (!changes_state) throw;
    d->lose(e.what(), false);
    throw_lost(d);
  }
}

// True iff d is a live device record: not NULL, nor released by the
// registry (a load of the word before the record).
inline bool live_handle(const rig_device_t *d) { return handle_live(d, HandleType::Device); }

// The first check of a public call given d: RIG_EINVAL where d is NULL,
// RIG_ELOST "the device was closed and its record retired" where the
// registry released its record.
inline void require_device(const rig_device_t *d) {
  require(d != nullptr, "the device is NULL");
  if (!live_handle(d)) throw_retired();
}

// The first check of a public call given d that answers no status: true
// iff d is a live device record; a released one records RIG_ELOST, as
// require_device, as the thread's last error.
inline bool device_answers(const rig_device_t *d) {
  if (live_handle(d)) return true;
  if (d) record_retired();
  return false;
}

// Throws RIG_ELOST if d is lost.
inline void require_live(rig_device_t *d) {
  if (d->is_lost()) throw_lost(d);
}

int64_t now_ns();

// Drops d's values per device (after its driver's stop returned), and
// every value an init racing it makes afterwards.
void drop_locals(rig_device_t *d);

}  // namespace rig
