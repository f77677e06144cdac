// rig's locks, counted per thread so that a call made inside one (from a
// signal handler or a driver's callback) is refused before it takes any;
// the signal masks around driver calls; the waits' interrupt flag.
#pragma once

#include <rig/edge.h>

#include <csignal>
#include <mutex>

// A per-thread word the hot path reads (a submit's, a lock's): the
// initial-exec model reads it without a call into the dynamic linker.  It
// takes a few bytes of the static TLS block, which has room for them also
// when librig is loaded with dlopen; larger per-thread state lives behind
// such a word in heap memory.
#define RIG_HOT_TLS thread_local __attribute__((tls_model("initial-exec")))

namespace rig {

// A mutex whose holds count in rig_holds().
class Mutex {
 public:
  void lock() {
    rig_hold(1);
    m_.lock();
  }
  void unlock() {
    m_.unlock();
    rig_hold(0);
  }
  std::mutex &native() { return m_; }

 private:
  std::mutex m_;
};

using Guard = std::lock_guard<Mutex>;

// Refuses (RIG_EINVAL) a call that may take a lock while the calling thread
// holds one: every exported function that may lock starts with it.
void refuse_inside_lock();

// Masks signals but the fault signals for the life of the object: rig makes
// every driver call that is not a cheap read inside one, but the queue
// calls of a driver whose facts say they are signal-safe (needed false:
// then it masks nothing).
class DriverCallMask {
 public:
  explicit DriverCallMask(bool needed = true);
  ~DriverCallMask();
  DriverCallMask(const DriverCallMask &) = delete;
  DriverCallMask &operator=(const DriverCallMask &) = delete;

 private:
  sigset_t old_;
  bool needed_;
  bool outermost_;
};

// Throws RIG_EINTR if this thread's interrupt flag is up.
void check_interrupt();

}  // namespace rig
