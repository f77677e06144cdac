// The count of the host's performance cores (rig.txt, Performance cores)
// as a pure computation over what Linux reports, so that tests can give it
// any machine.  performance_cores() feeds it this
// process's affinity mask, sysfs and cgroup files.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rig {

// The CPUs of affinity (the asking thread's mask) whose reported capacity
// is more than half the largest reported among them, or all of them where
// none reports one (HOST-18, HOST-19); at most what the cgroup v2 quotas
// allow, and at least 1 (HOST-20).
//
// capacity(cpu) is the CPU's cpu_capacity, nullopt where it reports none;
// the largest is taken over the mask, so a process held to slower cores
// uses them all.  cpu_max holds the cpu.max text of the process's cgroup
// and of each of its parents: "max PERIOD" allows any number of CPUs,
// "QUOTA PERIOD" ceil(QUOTA / PERIOD); the smallest counts, and a text of
// neither form counts as no limit.
int count_performance_cores(const std::vector<int> &affinity,
                            const std::function<std::optional<int64_t>(int cpu)> &capacity,
                            const std::vector<std::string> &cpu_max);

// The host's performance cores: taken at the first call, then the same for
// the life of the process (HOST-16..20).
int performance_cores();

// The CPUs that cpu.max text allows, or nullopt for no limit (as above).
std::optional<int64_t> cgroup_cpu_limit(const std::string &cpu_max);

}  // namespace rig
