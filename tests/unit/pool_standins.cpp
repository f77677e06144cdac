// The host's pool (drivers/host/host_pool.cpp) linked without the core:
// the core's signal primitives as lib/locks.cpp defines them, every signal
// blocked but those a fault raises.
#include <rig/edge.h>

#include <pthread.h>

#include <initializer_list>

extern "C" {

void rig_mask(sigset_t *old) {
  sigset_t s;
  sigfillset(&s);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) sigdelset(&s, sig);
  pthread_sigmask(SIG_BLOCK, &s, old);
}

void rig_unmask(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, nullptr); }

// Under ThreadSanitizer: the children of forks start workers of their own,
// which it refuses by default once the parent had threads.
const char *__tsan_default_options() { return "die_after_fork=0"; }
}
