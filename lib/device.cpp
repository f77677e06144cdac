#include "device.hpp"

#include "probes.hpp"

#include "rig_internal/spin.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

using rig::Guard;

namespace rig {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace rig

const std::string &rig_device::lost_reason() const {
  static const std::string none;
  const std::string *why = lost_.load(std::memory_order_acquire);
  return why ? *why : none;
}

rig_device::~rig_device() {
  for (const QueueWait &w : queue_waits) w.on->named.fetch_sub(1);
  if (owns_reason_) delete lost_.load();
}

bool rig_device::lose(const std::string &why, bool fault) {
  if (is_host) return false;
  // Values the device reached until now stay reached; later ones are
  // dropped.  The word is read before the reason is published, so a
  // reader that sees the reason sees reached_at_loss_.
  uint64_t reached = reported.load(std::memory_order_acquire);
  if (!facts.own_word && facts.word) reached = std::max(reached, facts.word->load(std::memory_order_acquire));
  static const std::string out_of_memory = "out of memory";
  const std::string *reason = &out_of_memory;
  try {
    reason = new std::string(why);
  } catch (...) {
  }
  {
    rig::Guard g(stop_mu_);
    if (lost_.load(std::memory_order_relaxed)) {
      if (reason != &out_of_memory) delete reason;
      return false;
    }
    reached_at_loss_ = std::min(reached, submitted.load(std::memory_order_acquire));
    lost_by_fault_ = fault;
    owns_reason_ = reason != &out_of_memory;
    stop_state_.store(kStopOwed, std::memory_order_release);
    lost_.store(reason, std::memory_order_release);
  }
  RIG_PROBE(lost, name.c_str(), reason->c_str());
  return true;
}

bool rig_device::notice_loss() {
  if (is_host || is_lost()) return is_lost();
  if (auto why = drv->lost_outside_calls()) lose(*why, false);
  return is_lost();
}

void rig_device::lose_in_fork_child() {
  static const std::string forked = "forked";
  reached_at_loss_ = start;
  if (!lost_.load(std::memory_order_relaxed)) lost_.store(&forked, std::memory_order_release);
  // The stop is the parent's: the child counts it as returned without
  // calling the driver, so the name opens anew; the word never shows the
  // last value here, so its memory never returns in the child.
  stop_state_.store(kStopDone, std::memory_order_release);
  forked_ = true;
}

uint64_t rig_device::read_word() {
  if (forked_) return reported.load(std::memory_order_acquire);
  if (!facts.own_word) return note_word(facts.word->load(std::memory_order_acquire));
  // A lost device's own word is read only once its stop has returned, and
  // never once rig has freed it (free_own_word).
  if (is_lost() && !stop_returned()) return reported.load(std::memory_order_acquire);
  word_readers_.fetch_add(1, std::memory_order_seq_cst);
  uint64_t w = word_freed_.load(std::memory_order_seq_cst) ? reported.load(std::memory_order_acquire)
                                                          : note_word(drv->signaled());
  word_readers_.fetch_sub(1, std::memory_order_release);
  return w;
}

uint64_t rig_device::note_word(uint64_t w) {
  // Acquire: where another thread reported more than w, the caller counts
  // that value reached, so it must see that value's writes too.
  uint64_t seen = reported.load(std::memory_order_acquire);
  while (w > seen && !reported.compare_exchange_weak(seen, w, std::memory_order_acq_rel)) {
  }
  return std::max(w, seen);
}

void rig_device::free_own_word() {
  if (!facts.own_word || !facts.word_region || forked_) return;
  {
    rig::Guard g(stop_mu_);
    if (word_freed_.load()) return;
    note_word(drv->signaled());
    word_freed_.store(true, std::memory_order_seq_cst);
  }
  // A reader that saw the word live finishes its signaled() first.
  while (word_readers_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  try {
    rig::DriverCallMask mask;
    drv->free(facts.word_region);
  } catch (const std::exception &) {
    // The device is gone: nothing more reads or frees the word.
  }
}

bool rig_device::reached(uint64_t value) {
  if (is_lost()) {
    if (value <= reached_at_loss_) return true;
    rig::throw_lost(this);
  }
  if (reported.load(std::memory_order_acquire) >= value) return true;
  if (read_word() >= value) {
    // Lost meanwhile: the value counts only if it was reached at the loss.
    if (is_lost() && value > reached_at_loss_) rig::throw_lost(this);
    return true;
  }
  return false;
}

void rig_device::commit_to(uint64_t value) {
  if (committed.load(std::memory_order_acquire) >= value) return;
  Guard g(submit_mu);
  uint64_t last = submitted.load(std::memory_order_acquire);
  if (committed.load(std::memory_order_relaxed) >= std::min(value, last) || is_lost()) return;
  try {
    rig::DriverCallMask mask(rig::masks_queue_calls(this));
    if (facts.may_block) enter_call();
    struct Leave {
      rig_device *d;
      bool counted;
      ~Leave() {
        if (counted) d->leave_call();
      }
    } leave{this, facts.may_block};
    drv->commit(last);
  } catch (const std::exception &e) {
    lose(e.what(), true);
    rig::throw_lost(this);
  }
  committed.store(last, std::memory_order_release);
}

namespace {

// The queue waits of d it has not passed, pruning the passed ones.
std::vector<rig_device::QueueWait> pending_waits(rig_device *d) {
  Guard g(d->queue_waits_mu);
  uint64_t word = d->reported.load(std::memory_order_acquire);
  std::erase_if(d->queue_waits, [&](const rig_device::QueueWait &w) {
    if (word < w.my_value) return false;
    w.on->named.fetch_sub(1);
    return true;
  });
  return d->queue_waits;
}

// True iff d's queue waits, directly or along a chain of waits through
// devices not yet lost, for a value a lost device never reached; *culprit
// is the lost device d waits on directly, or through which the chain runs.
// Each device is visited once: queues of live devices may wait on each
// other in a cycle.
bool waits_on_lost(rig_device *d, std::vector<rig_device *> &visited, rig_device **culprit) {
  visited.push_back(d);
  for (const rig_device::QueueWait &w : pending_waits(d)) {
    if (w.on->is_lost()) {
      if (w.on_value > w.on->reached_at_loss()) {
        *culprit = w.on;
        return true;
      }
      continue;
    }
    if (std::find(visited.begin(), visited.end(), w.on) != visited.end()) continue;
    rig_device *deeper = nullptr;
    if (waits_on_lost(w.on, visited, &deeper)) {
      // The device waited on is lost first, then the loss spreads to d.
      w.on->lose(deeper->name + " lost", false);
      *culprit = w.on;
      return true;
    }
  }
  return false;
}

}  // namespace

int64_t rig_device::watch_waited() {
  int64_t bound_ms = facts.hang_ms.value_or(INT64_MAX);
  // Depth first along the queue waits not yet passed, each device once.
  std::vector<rig_device *> visited{this}, unwalked{this};
  while (!unwalked.empty()) {
    rig_device *d = unwalked.back();
    unwalked.pop_back();
    for (const QueueWait &w : pending_waits(d)) {
      rig_device *on = w.on;
      if (on->is_lost() || std::find(visited.begin(), visited.end(), on) != visited.end()) continue;
      uint64_t word = on->read_word();
      if (word >= w.on_value) continue;
      visited.push_back(on);
      unwalked.push_back(on);
      on->check_hang(word);
      on->poll_fault(word);
      if (on->facts.hang_ms) bound_ms = std::min(bound_ms, *on->facts.hang_ms);
    }
  }
  return bound_ms;
}

void rig_device::poll_fault(uint64_t word) {
  {
    // Counted while not lost: a stop, which only a loss owes, waits for it.
    rig::Guard g(stop_mu_);
    if (is_lost()) return;
    in_flight_.fetch_add(1, std::memory_order_seq_cst);
  }
  struct Leave {
    rig_device *d;
    ~Leave() { d->leave_call(); }
  } leave{this};
  try {
    rig::DriverCallMask mask(rig::masks_queue_calls(this));
    drv->sleep(word, 0);
  } catch (const rig::Fault &fault) {
    lose(fault.what(), true);
  } catch (const std::exception &) {
    // Loses nothing, as in a wait's sleep (DRV-84).
  }
}

bool rig_device::spread_loss() {
  if (is_lost()) return true;
  std::vector<rig_device *> visited;
  rig_device *culprit = nullptr;
  if (!waits_on_lost(this, visited, &culprit)) return false;
  lose(culprit->name + " lost", false);
  return true;
}

void rig_device::check_hang(uint64_t word) {
  if (!facts.hang_ms) return;
  // A queue that waits for another device's unreached point is idle.
  bool waiting_on_other = false;
  {
    Guard g(queue_waits_mu);
    for (const QueueWait &w : queue_waits)
      if (word < w.my_value && w.on->reported.load(std::memory_order_acquire) < w.on_value) waiting_on_other = true;
  }
  Guard g(hang_mu_);
  int64_t now = rig::now_ns();
  bool idle = waiting_on_other || word >= committed.load(std::memory_order_acquire);
  if (clock_start_ns_ == 0 || word != clock_value_ || idle) {
    clock_start_ns_ = now;
    clock_value_ = word;
    return;
  }
  if (now - clock_start_ns_ > *facts.hang_ms * 1000000) {
    lose("no progress for " + std::to_string(*facts.hang_ms) + " ms", true);
  }
}

namespace {

// The turns a wait spins on the word before the driver's sleep.
constexpr unsigned kWaitSpins = 2048;

}  // namespace

void rig_device::wait(uint64_t value) {
  if (reached(value)) return;
  commit_to(value);
  // A short wait ends in this spin: the reads of the word need no signal
  // mask (ERR-06), whose two system calls the driver's sleep would cost.
  for (unsigned turn = 0; turn < kWaitSpins; turn++) {
    if (reached(value)) return;
    rig::spin_turn(turn);
  }
  for (;;) {
    uint64_t word = read_word();
    if (reached(value)) return;
    // The devices the queue waits on, and those they wait on, are watched
    // as this one is: their hang clocks and faults (HANG-02, LOSS-15).
    int64_t bound_ms = watch_waited();
    spread_loss();
    check_hang(word);
    if (reached(value)) return;
    rig::check_interrupt();
    int64_t still_ms = std::min<int64_t>(200, std::max<int64_t>(1, bound_ms / 4));
    try {
      rig::driver_call(this, false, [&] { drv->sleep(word, still_ms); }, true);
    } catch (const rig::Error &) {
      throw;
    } catch (const std::exception &) {
      // An exception other than a fault from sleep loses nothing: read the
      // word again (DRV-84).
    }
  }
}

// No lock on the way in and out of a call: only a stop waits for the
// count, and it takes stop_mu_.  The count's update and the read of the
// stop's state are sequentially consistent, as are the stop's store of its
// state and its reads of the count, so that either the last call to leave
// sees the stop running and wakes it, or the stop sees the count at 0.
void rig_device::enter_call() { in_flight_.fetch_add(1, std::memory_order_seq_cst); }

void rig_device::leave_call() {
  if (in_flight_.fetch_sub(1, std::memory_order_seq_cst) != 1 ||
      stop_state_.load(std::memory_order_seq_cst) != kStopRunning)
    return;
  // Under the stop's lock: a stop that has not yet waited on stop_cv_
  // holds it, so the wake reaches it once it waits.
  rig::Guard g(stop_mu_);
  stop_cv_.notify_all();
}

void rig_device::stop() {
  std::unique_lock<rig::Mutex> g(stop_mu_);
  int state = stop_state_.load(std::memory_order_acquire);
  if (state == kStopNone || state == kStopDone) return;
  if (state == kStopRunning) {
    stop_cv_.wait(g, [&] { return stop_state_.load() == kStopDone; });
    return;
  }
  stop_state_.store(kStopRunning, std::memory_order_seq_cst);
  stop_cv_.wait(g, [&] { return in_flight_.load(std::memory_order_seq_cst) == 0; });
  std::optional<std::string> fault;
  if (lost_by_fault_) fault = lost_reason();
  g.unlock();
  try {
    rig::DriverCallMask mask;
    drv->stop(fault, submitted.load(std::memory_order_acquire));
  } catch (...) {
    // The stop returned (by raising): mark it done, then answer its error.
    rig::drop_locals(this);
    g.lock();
    stop_state_.store(kStopDone, std::memory_order_release);
    stop_cv_.notify_all();
    throw;
  }
  rig::drop_locals(this);
  g.lock();
  stop_state_.store(kStopDone, std::memory_order_release);
  stop_cv_.notify_all();
}

bool rig_device::stopped() {
  if (!stop_returned()) return false;
  return read_word() >= submitted.load(std::memory_order_acquire);
}
