// The pools of handles' records (handles.hpp).
#include "rig_internal/handles.hpp"

#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define RIG_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define RIG_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define RIG_POISON(p, n) ((void)(p), (void)(n))
#define RIG_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace rig {
namespace {

// Before each record, keeping it on the alignment of new.
struct alignas(alignof(std::max_align_t)) Header {
  std::atomic<uint32_t> live;  // the record's type while live, else 0
  size_t bytes;
};

Header *header_of(const void *record) {
  return reinterpret_cast<Header *>(const_cast<char *>(static_cast<const char *>(record)) - sizeof(Header));
}

struct Pool {
  std::mutex mu;
  std::deque<Header *> released;  // oldest first
};

Pool &pool_of(HandleType t) {
  // Never destroyed: records are released until the process exits.
  static auto *pools = new Pool[static_cast<size_t>(HandleType::Count)];
  return pools[static_cast<size_t>(t)];
}

}  // namespace

void *handle_allocate(HandleType t, size_t bytes) {
  Pool &p = pool_of(t);
  Header *h = nullptr;
  {
    std::lock_guard<std::mutex> g(p.mu);
    if (p.released.size() > quarantine_of(t) && p.released.front()->bytes == bytes) {
      h = p.released.front();
      p.released.pop_front();
    }
  }
  if (h) {
    RIG_UNPOISON(h + 1, bytes);
  } else {
    void *block = std::malloc(sizeof(Header) + bytes);
    if (!block) throw std::bad_alloc();
    h = new (block) Header{{0}, bytes};
  }
  h->live.store(static_cast<uint32_t>(t), std::memory_order_release);
  return h + 1;
}

void handle_release(HandleType t, void *record) {
  if (!record) return;
  Header *h = header_of(record);
  h->live.store(0, std::memory_order_release);
  RIG_POISON(record, h->bytes);
  Pool &p = pool_of(t);
  std::lock_guard<std::mutex> g(p.mu);
  p.released.push_back(h);
}

bool handle_live(const void *record, HandleType t) {
  // A pointer off new's alignment was never a record: its header is not read.
  if (!record || reinterpret_cast<uintptr_t>(record) % alignof(Header) != 0) return false;
  return header_of(record)->live.load(std::memory_order_acquire) == static_cast<uint32_t>(t);
}

}  // namespace rig
