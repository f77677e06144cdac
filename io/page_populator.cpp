// page_populator.hpp.
#include "page_populator.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>
#include <vector>

namespace rig::io {
namespace {

// Populated at a time, on boundaries of its size: 4 huge pages, small
// enough that the thread stays just ahead of the reads, large enough that
// its system calls cost little.
constexpr uintptr_t kWindow = uintptr_t{8} << 20;

// Whether no page of [start, end) exists yet: memory just made.
bool none_resident(uintptr_t start, uintptr_t end) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((end - start) / page);
  return mincore(reinterpret_cast<void *>(start), end - start, resident.data()) == 0 &&
         std::none_of(resident.begin(), resident.end(), [](unsigned char r) { return (r & 1) != 0; });
}

}  // namespace

PagePopulator::PagePopulator(void *dst, int64_t n, bool huge) {
  if (n < kMinBytes) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<uintptr_t>(dst);
  // Whole pages within the range only: a page it shares with other bytes
  // is the read's to fault.
  const uintptr_t start = (at + page - 1) / page * page;
  const uintptr_t end = (at + static_cast<uintptr_t>(n)) / page * page;
  // Before the first read: the reads fault pages from the moment they are
  // issued, and a page faulted small stays small.
  if (huge && none_resident(start, end)) madvise(reinterpret_cast<void *>(start), end - start, MADV_HUGEPAGE);
  populated_.store(start, std::memory_order_relaxed);
  try {
    thread_ = std::thread([this, start, end] { run(start, end); });
  } catch (const std::system_error &) {
    // No thread: the read faults its pages itself.
    populated_.store(UINTPTR_MAX, std::memory_order_relaxed);
  }
}

PagePopulator::~PagePopulator() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

bool PagePopulator::ready(const void *end) const noexcept {
  return populated_.load(std::memory_order_acquire) >= reinterpret_cast<uintptr_t>(end);
}

void PagePopulator::wait_until(const void *end) const noexcept {
  for (uintptr_t at = populated_.load(std::memory_order_acquire); at < reinterpret_cast<uintptr_t>(end);
       at = populated_.load(std::memory_order_acquire))
    populated_.wait(at, std::memory_order_acquire);
}

void PagePopulator::pass(uintptr_t to) noexcept {
  populated_.store(to, std::memory_order_release);
  populated_.notify_all();
}

void PagePopulator::run(uintptr_t start, uintptr_t end) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident(kWindow / page);
  for (uintptr_t at = start; at < end && !stop_.load(std::memory_order_relaxed);) {
    const uintptr_t next = std::min(end, (at / kWindow + 1) * kWindow);
    const uintptr_t len = next - at;
    auto *window = reinterpret_cast<void *>(at);
    at = next;
    // Not memory it can populate, or refused (an older kernel, memory of a
    // device's mapping): the read faults the rest itself.
    if (mincore(window, len, resident.data()) != 0) break;
    const auto pages = static_cast<std::ptrdiff_t>(len / page);
    auto is_resident = [](unsigned char r) { return (r & 1) != 0; };
    if (!std::all_of(resident.begin(), resident.begin() + pages, is_resident) &&
        madvise(window, len, MADV_POPULATE_WRITE) != 0)
      break;
    pass(next);
  }
  pass(UINTPTR_MAX);
}

}  // namespace rig::io
