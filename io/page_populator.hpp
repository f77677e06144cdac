// Pages of new memory faulted in ahead of a read into them.  A read into a
// buffer just made would otherwise fault each page on the read path: the
// ring's submitter pins them for O_DIRECT, and a page-cache read's copy
// faults them one at a time, each zeroed first.  A PagePopulator does that
// work on a thread of its own, a window at a time from the start, while the
// reads run behind it (MADV_POPULATE_WRITE, Linux 5.14): on memory already
// present it only looks (mincore) and moves on.
//
// Reads into shared memory (a memfd's pages: a process connected to rigd,
// shared_host_memory.hpp) stay behind it (ready, wait_until).  A read that
// overtook it would fault the same pages it populates, and on shared
// memory the two then queue on each page's lock, a sleep and a wake per
// page: reading 64 MiB from the page cache, the reading thread slept 319
// to 741 times so and 11 to 60 times held behind, and a 2 GiB run of
// bench_io_device made 221,553 context switches so and 7,795 held behind.
// Reads into private memory may overtake it: their faults and its own
// take no such lock, and where it is the slower (huge pages populated at
// 0.15-0.20x the rate of 4 KiB ones on a virtual machine, same runs) a
// cold 2 GiB load held behind it ran at 0.28-0.56x one that overtook it
// (three runs, the two builds alternating).
//
// Measured on a 2-core virtio machine, 1 GiB into new MEM:0 buffers, the
// choices alternating in one process, medians of 5 to 9 (load about 6):
// cold, 4 KiB pages 0.66 GB/s, huge pages 0.57, 4 KiB populated ahead
// 0.73, huge pages populated ahead 1.10; warm (the page cache's copy),
// 0.75, 0.43, 0.76 and 0.40.  Hence huge pages for reads from the disk
// alone (huge, below), populated ahead in both.  Huge pages help O_DIRECT
// besides: 1 MiB into 4 KiB pages is 256 segments, more than a virtio disk
// takes in one request (uring_file.cpp, staging).
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

  // Whether a read may write below end: the populator has passed it, or
  // has ended (done, refused, or never started).
  bool ready(const void *end) const noexcept;
  // Blocks until ready(end).
  void wait_until(const void *end) const noexcept;

 private:
  void run(uintptr_t start, uintptr_t end);
  // Moves the mark reads may write below, and wakes a read waiting for it.
  void pass(uintptr_t to) noexcept;

  std::atomic<bool> stop_{false};
  // Where the populated pages end; UINTPTR_MAX once it has ended.
  std::atomic<uintptr_t> populated_{UINTPTR_MAX};
  std::thread thread_;
};

}  // namespace rig::io
