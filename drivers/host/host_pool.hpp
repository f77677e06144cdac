// The host's launches (rig.txt, Launches, Performance cores): a launch of
// a linked function runs on the thread that submits it and on a pool of
// workers, at most as many threads at once as the host has performance
// cores.
#pragma once

#include "performance_cores.hpp"
#include "rig_internal/driver.hpp"

#include <cstdint>

namespace rig {

// Runs f over the threads [0, groups * group_threads) in calls of whole
// groups (first and end multiples of group_threads) that together run each
// thread once, on the calling thread and the pool's workers; returns once
// every call has returned.  groups and group_threads are at least 1 and
// their product at most 2^62.
void host_launch(HostFunction f, const void *params, uint64_t groups, uint64_t group_threads);

}  // namespace rig
