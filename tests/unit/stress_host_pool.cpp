// Stress of the host's pool (drivers/host/host_pool.cpp) without Criterion,
// so that ThreadSanitizer runs it too: several threads launch at once,
// grids of many sizes, some launching again inside their kernels.  Each
// kernel call writes its threads' slots without atomics, and the launching
// thread reads them once host_launch returns, so a launch that returned
// before its calls were done, or whose writes it did not order, shows as a
// wrong count or a data race (HOST-06, HOST-11).  Exit status 0 if every
// thread of every launch ran exactly once.
#include "host_pool.hpp"

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 4, kLaunches = 1000;

std::atomic<long> wrong{0};

struct Grid {
  std::vector<int> counts;
  bool nested;
};

void count(const void *params, int64_t first, int64_t end) {
  auto *counts = static_cast<int *>(const_cast<void *>(params));
  for (int64_t i = first; i < end; i++) counts[i]++;
}

// Launches groups x t threads of count and checks each ran once.
void launch_and_check(uint64_t groups, uint64_t t) {
  std::vector<int> counts(groups * t, 0);
  rig::host_launch(count, counts.data(), groups, t);
  for (int c : counts) wrong += c != 1;
}

// A kernel whose every thread launches a small grid of its own.
void nest(const void *, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) launch_and_check(static_cast<uint64_t>(i % 13 + 1), 3);
}

void launcher(int seed) {
  for (int i = 0; i < kLaunches; i++) {
    uint64_t groups = static_cast<uint64_t>((seed * 7919 + i * 104729) % 300 + 1), t = static_cast<uint64_t>(i % 5 + 1);
    if (i % 25 == 0)
      rig::host_launch(nest, nullptr, 16, 1);
    else
      launch_and_check(groups, t);
  }
}

}  // namespace

int main() {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(launcher, t);
  for (auto &t : threads) t.join();
  if (wrong.load() != 0) {
    std::fprintf(stderr, "%ld threads of launches did not run exactly once\n", wrong.load());
    return 1;
  }
  std::printf("stress_host_pool: %d threads x %d launches on %d performance cores: ok\n", kThreads, kLaunches,
              rig::performance_cores());
  return 0;
}
