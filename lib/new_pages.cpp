#include "rig_internal/new_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

namespace rig {

void populate_new_pages(void *dst, int64_t n) {
  constexpr int64_t kMinBytes = int64_t{1} << 20;
  if (n < kMinBytes) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<uintptr_t>(dst);
  const uintptr_t start = (at + page - 1) & ~(page - 1);
  const uintptr_t end = (at + static_cast<uintptr_t>(n)) & ~(page - 1);
  unsigned char resident = 0;
  if (end <= start || mincore(reinterpret_cast<void *>(start), page, &resident) != 0 || (resident & 1)) return;
  madvise(reinterpret_cast<void *>(start), end - start, MADV_POPULATE_WRITE);
}

}  // namespace rig
