#include "host_memory.hpp"

#include "shared_host_memory.hpp"
#include "rig_internal/new_pages.hpp"

#include <algorithm>

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace rig {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Private anonymous pages for a block of bytes.  From a huge page's size on,
// the mapping starts on a huge page, so that a read into it that asks for
// transparent huge pages (page_populator.hpp) gets them from its start.
void *map_private(size_t bytes) {
  if (bytes < kHugePage) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t length = (bytes + page - 1) / page * page;
  void *raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  // The slack around the aligned range goes back at once.
  if (aligned > start) munmap(raw, aligned - start);
  munmap(reinterpret_cast<void *>(aligned + length), start + kHugePage - aligned);
  return reinterpret_cast<void *>(aligned);
}

}  // namespace

HostBlock *host_block_alloc(int64_t bytes, size_t small_alignment) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  auto *b = new (std::nothrow) HostBlock{nullptr, static_cast<size_t>(bytes), false};
  if (!b) return nullptr;
  if (bytes >= 65536 && bytes >= 4 * page) {
    void *p = b->bytes >= kSharedBlockMin ? shared_block_map(b->bytes) : nullptr;
    b->address = p ? p : map_private(b->bytes);
    b->mapped = true;
  } else {
    size_t alignment = bytes >= 128 ? std::max<size_t>(128, small_alignment) : small_alignment;
    size_t rounded = (b->bytes + alignment - 1) / alignment * alignment;
    b->address = std::aligned_alloc(alignment, rounded);
  }
  if (!b->address) {
    delete b;
    return nullptr;
  }
  return b;
}

void host_block_free(HostBlock *b) {
  if (!b) return;
  if (b->mapped) {
    if (!shared_block_unmap(b->address)) munmap(b->address, b->bytes);
  }
  else
    std::free(b->address);
  delete b;
}

void run_part_on_host(const rig_edge_part_t &part) {
  switch (part.kind) {
    case RIG_PART_COPY: {
      const rig_edge_copy_t &c = part.u.copy;
      auto *src = static_cast<const char *>(c.src.address);
      auto *dst = static_cast<char *>(c.dst.address);
      if (c.rows == 1 || (c.src_pitch == c.width && c.dst_pitch == c.width)) {
        populate_new_pages(dst, static_cast<int64_t>(c.width * c.rows));
        std::memmove(dst, src, c.width * c.rows);
      } else {
        for (uint64_t r = 0; r < c.rows; r++) std::memmove(dst + r * c.dst_pitch, src + r * c.src_pitch, c.width);
      }
      break;
    }
    case RIG_PART_FILL:
      populate_new_pages(part.u.fill.dst.address, static_cast<int64_t>(part.u.fill.bytes));
      std::memset(part.u.fill.dst.address, part.u.fill.value, part.u.fill.bytes);
      break;
    case RIG_PART_WORDS:
      for (uint32_t i = 0; i < part.u.words.count; i++) {
        auto *word = static_cast<std::atomic<uint64_t> *>(part.u.words.writes[i].dst.address);
        word->store(part.u.words.writes[i].value, std::memory_order_release);
      }
      break;
    case RIG_PART_LAUNCH:
      break;
  }
}

}  // namespace rig
