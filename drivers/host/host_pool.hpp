// The host's launches (rig.txt, Launches, Performance cores): a launch of
// a linked function runs on the thread that submits it and on a pool of
// workers, at most as many threads at once as the host has performance
// cores.
#pragma once

#include <cstdint>

namespace rig {

// A host function's C type (HOST-07).
using HostFunction = void (*)(const void *params, int64_t first, int64_t end);

// The host's performance cores: taken at the first call, then the same for
// the life of the process (HOST-16..20).
int performance_cores();

// Runs f over the threads [0, groups * group_threads) in calls of whole
// groups (first and end multiples of group_threads) that together run each
// thread once, on the calling thread and the pool's workers; returns once
// every call has returned.  groups and group_threads are at least 1 and
// their product at most 2^62.
void host_launch(HostFunction f, const void *params, uint64_t groups, uint64_t group_threads);

}  // namespace rig
