// The failure of the process (fail, failure) and what a child of fork
// inherits: every driver's device lost with "forked".
#include "registry.hpp"

#include <pthread.h>

#include <atomic>

using namespace rig;

namespace {

std::atomic<const std::string *> failure{nullptr};

void before_fork() { lock_registry_for_fork(); }
void after_fork_in_parent() { unlock_registry_after_fork(); }
void after_fork_in_child() {
  unlock_registry_after_fork();
  // The host and memory devices are this process's own code and memory:
  // they go on in the child.  An io device is its library's to decide, as
  // the child keeps its parent's open files.
  for_each_open_device([](rig_device_t *d) {
    if (!d->facts.runs_on_host && !d->is_io()) d->lose_in_fork_child();
  });
}

}  // namespace

namespace rig {

void install_fork_handlers() { pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child); }

}  // namespace rig

extern "C" {

rig_status_t rig_fail(const char *why) {
  RIG_API_CALL({
    require(why != nullptr, "the reason is NULL");
    auto *reason = new std::string(why);
    const std::string *none = nullptr;
    if (!failure.compare_exchange_strong(none, reason)) {
      delete reason;  // only the first call acts
      return RIG_OK;
    }
    for_each_open_device([&](rig_device_t *d) { d->lose(*reason, false); });
    return RIG_OK;
  });
}

const char *rig_failure(void) {
  const std::string *why = failure.load(std::memory_order_acquire);
  return why ? why->c_str() : nullptr;
}

}  // extern "C"
