#include "rig_internal/locks.hpp"

#include "rig_internal/errors.hpp"

#include <pthread.h>

namespace rig {
namespace {

RIG_HOT_TLS int holds = 0;
thread_local volatile sig_atomic_t *interrupt_flag = nullptr;
// The mask the outermost DriverCallMask replaced: what rig_unblock lets
// through during a driver's wait.
thread_local sigset_t caller_mask;
RIG_HOT_TLS int mask_depth = 0;

// Every signal but those a fault raises, made once.
const sigset_t &all_but_faults() {
  static const sigset_t set = [] {
    sigset_t s;
    sigfillset(&s);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) sigdelset(&s, sig);
    return s;
  }();
  return set;
}

}  // namespace

void refuse_inside_lock() {
  if (holds > 0) throw_invalid("called inside a lock of rig's, a driver's or an io library's");
}

void check_interrupt() {
  if (interrupt_flag && *interrupt_flag) throw_interrupted();
}

DriverCallMask::DriverCallMask(bool needed) : needed_(needed), outermost_(needed && mask_depth == 0) {
  if (!needed_) return;
  if (outermost_) {
    rig_mask(&old_);
    caller_mask = old_;
  }
  mask_depth++;
}

DriverCallMask::~DriverCallMask() {
  if (!needed_) return;
  mask_depth--;
  if (outermost_) rig_unmask(&old_);
}

}  // namespace rig

extern "C" {

int rig_holds(void) { return rig::holds; }

void rig_hold(int take) {
  if (take)
    rig::holds++;
  else if (rig::holds > 0)
    rig::holds--;
}

void rig_mask(sigset_t *old) { pthread_sigmask(SIG_BLOCK, &rig::all_but_faults(), old); }

void rig_unmask(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, nullptr); }

void rig_unblock(void) {
  if (rig::mask_depth > 0) pthread_sigmask(SIG_SETMASK, &rig::caller_mask, nullptr);
}

void rig_block(void) {
  if (rig::mask_depth > 0) pthread_sigmask(SIG_BLOCK, &rig::all_but_faults(), nullptr);
}

void rig_set_interrupt_flag(volatile sig_atomic_t *flag) { rig::interrupt_flag = flag; }

}  // extern "C"
