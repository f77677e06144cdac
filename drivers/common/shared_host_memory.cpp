// Shared host memory (shared_host_memory.hpp).
#include "shared_host_memory.hpp"

#include "rig_internal/locks.hpp"
#include "rig_internal/staging.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <map>

namespace rig {

static_assert(kSharedBlockMin <= static_cast<size_t>(kStagingBytes), "staging's chunks are shared blocks");

namespace {

std::atomic<bool> sharing{false};

// Counted (locks.hpp): a proxy's submit finds its parts' blocks here.
struct Blocks {
  Mutex mu;
  std::map<uintptr_t, SharedBlock> by_start;
};

Blocks &blocks() {
  static Blocks *b = new Blocks();  // outlives every static destructor
  return *b;
}

}  // namespace

void share_host_memory() { sharing.store(true, std::memory_order_release); }

void *shared_block_map(size_t bytes) {
  if (!sharing.load(std::memory_order_acquire)) return nullptr;
  int fd = memfd_create("rig-host", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return nullptr;
  void *p = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(bytes)) == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) == 0)
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  Blocks &b = blocks();
  Guard g(b.mu);
  b.by_start[reinterpret_cast<uintptr_t>(p)] = SharedBlock{fd, p, bytes};
  return p;
}

bool shared_block_unmap(void *address) {
  SharedBlock block;
  {
    Blocks &b = blocks();
    Guard g(b.mu);
    auto it = b.by_start.find(reinterpret_cast<uintptr_t>(address));
    if (it == b.by_start.end()) return false;
    block = it->second;
    b.by_start.erase(it);
  }
  munmap(block.base, block.bytes);
  close(block.fd);
  return true;
}

std::optional<SharedBlock> find_shared_block(const void *address, size_t bytes) {
  auto at = reinterpret_cast<uintptr_t>(address);
  Blocks &b = blocks();
  Guard g(b.mu);
  auto it = b.by_start.upper_bound(at);
  if (it == b.by_start.begin()) return std::nullopt;
  --it;
  const SharedBlock &block = it->second;
  uintptr_t start = it->first;
  if (at - start > block.bytes || bytes > block.bytes - (at - start)) return std::nullopt;
  return block;
}

}  // namespace rig
