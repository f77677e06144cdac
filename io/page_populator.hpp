// Pages of new memory faulted in ahead of a read into them.  A read into a
// buffer just made would otherwise fault each page on the read path: the
// ring's submitter pins them for O_DIRECT, and a page-cache read's copy
// faults them one at a time, each zeroed first.  A PagePopulator does that
// work on a thread of its own, a window at a time from the start, while the
// reads run behind it (MADV_POPULATE_WRITE, Linux 5.14): on memory already
// present it only looks (mincore) and moves on.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace rig::io {

class PagePopulator {
 public:
  // Reads smaller than this fault few enough pages to leave them be.
  static constexpr int64_t kMinBytes = int64_t{16} << 20;

  // Starts populating [dst, dst + n) if n is at least kMinBytes.  With
  // huge, memory none of whose pages exist yet asks for transparent huge
  // pages first (MADV_HUGEPAGE, where the system has them), before the
  // read's first fault.
  PagePopulator(void *dst, int64_t n, bool huge);
  // Stops where it is (the read is over) and joins the thread.
  ~PagePopulator();
  PagePopulator(const PagePopulator &) = delete;
  PagePopulator &operator=(const PagePopulator &) = delete;

 private:
  void run(uintptr_t start, uintptr_t end);

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rig::io
