// The host's performance cores on Linux (rig.txt, Performance cores):
// the asking thread's affinity mask, sysfs's cpu_capacity and the cgroup
// v2 cpu.max quotas, counted once per process.
#include "performance_cores.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace rig {
namespace {

std::optional<std::string> read_text(const std::string &path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A whole positive decimal number, or nullopt.
std::optional<int64_t> parse_positive(const std::string &s) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  int64_t v = std::stoll(s);
  return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
}

// The CPUs in the calling thread's affinity mask, however many the
// machine has.
std::vector<int> affinity_cpus() {
  long configured = sysconf(_SC_NPROCESSORS_CONF);
  for (int size = static_cast<int>(std::max(configured, 1024L));; size *= 2) {
    cpu_set_t *set = CPU_ALLOC(size);
    if (!set) return {};
    size_t bytes = CPU_ALLOC_SIZE(size);
    if (sched_getaffinity(0, bytes, set) != 0) {
      CPU_FREE(set);
      if (errno == EINVAL && size < (1 << 20)) continue;  // a mask wider than size
      return {};
    }
    std::vector<int> cpus;
    for (int cpu = 0; cpu < size; cpu++)
      if (CPU_ISSET_S(cpu, bytes, set)) cpus.push_back(cpu);
    CPU_FREE(set);
    return cpus;
  }
}

std::optional<int64_t> sysfs_capacity(int cpu) {
  auto text = read_text("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpu_capacity");
  if (!text) return std::nullopt;
  return parse_positive(text->substr(0, text->find_first_of(" \n")));
}

// The cpu.max texts of this process's cgroup v2 group and its parents.
std::vector<std::string> cgroup_cpu_max() {
  auto groups = read_text("/proc/self/cgroup");
  if (!groups) return {};
  std::istringstream lines(*groups);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    std::vector<std::string> texts;
    for (std::string path = line.substr(3);;) {
      if (auto text = read_text("/sys/fs/cgroup" + path + "/cpu.max")) texts.push_back(*text);
      size_t slash = path.find_last_of('/');
      if (slash == std::string::npos || path.size() <= 1) break;
      path.resize(slash);
    }
    return texts;
  }
  return {};
}

}  // namespace

std::optional<int64_t> cgroup_cpu_limit(const std::string &cpu_max) {
  std::istringstream in(cpu_max);
  std::string quota_text, period_text;
  if (!(in >> quota_text >> period_text)) return std::nullopt;
  auto quota = parse_positive(quota_text), period = parse_positive(period_text);
  if (!quota || !period) return std::nullopt;  // "max", or not a quota
  return *quota / *period + (*quota % *period != 0);
}

int count_performance_cores(const std::vector<int> &affinity,
                            const std::function<std::optional<int64_t>(int cpu)> &capacity,
                            const std::vector<std::string> &cpu_max) {
  std::vector<std::optional<int64_t>> capacities;
  int64_t largest = 0;
  for (int cpu : affinity) {
    capacities.push_back(capacity(cpu));
    largest = std::max(largest, capacities.back().value_or(0));
  }
  int64_t count = 0;
  for (const auto &c : capacities)
    if (largest == 0 || c.value_or(0) * 2 > largest) count++;
  for (const std::string &text : cpu_max)
    if (auto limit = cgroup_cpu_limit(text)) count = std::min(count, *limit);
  return static_cast<int>(std::clamp<int64_t>(count, 1, INT32_MAX));
}

// Kept in an atomic rather than a function-local static, whose guard a
// fork during the first count would leave held in the child.  Of threads
// that ask first at once, the first to finish counting sets it.
int performance_cores() {
  static std::atomic<int> cores{0};
  if (int c = cores.load(std::memory_order_acquire)) return c;
  int counted = count_performance_cores(affinity_cpus(), sysfs_capacity, cgroup_cpu_max()), none = 0;
  return cores.compare_exchange_strong(none, counted, std::memory_order_acq_rel) ? counted : none;
}

}  // namespace rig
