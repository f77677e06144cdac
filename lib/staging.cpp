#include "rig_internal/staging.hpp"

#include "allocation.hpp"
#include "registry.hpp"

#include <numaif.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace rig {
namespace {

struct Chunk {
  Allocation *alloc;
  int node;  // the NUMA node its pages sit on, or -1
  int holders = 0;
  int64_t fill = 0;             // bytes placed since its start
  uint64_t filled_from_start = 0;  // when bytes were last placed at its start
  uint64_t last_take = 0;
  bool device_written = false;
  // Its pages are not shared (share_staging): it returns once no copy
  // holds it, and until then a copy holds it, so that no take finds it.
  bool retired = false;
};

struct Pool {
  std::mutex mu;
  std::vector<Chunk> chunks;
  uint64_t takes = 0;
  size_t most = 0;  // the most chunks staging has had at once
  SharedPages shared = nullptr;  // set once the process shares host memory
};

Pool &pool() {
  static Pool *p = new Pool();
  return *p;
}

void wait_work(Allocation *a) {
  std::vector<Dependency> deps;
  dependencies(a, true, nullptr, deps);
  wait_all(deps);
}

// Moves a's pages to node (also pages a reused allocation touched), so
// that a device's copies read and write memory near it.
void place_on_node(Allocation *a, int node) {
  if (node < 0 || node >= static_cast<int>(sizeof(unsigned long) * 8)) return;
  unsigned long mask = 1UL << node;
  // Best effort: a system without NUMA, or a node with no room, leaves the
  // pages where they are.
  mbind(a->host, static_cast<unsigned long>(kStagingBytes), MPOL_PREFERRED, &mask, sizeof mask * 8, MPOL_MF_MOVE);
}

// Whether a copy may use c now without depending on work a lost device
// never reached: staging's bytes are rig's, written before they are read,
// so the points of a lost device that has stopped are forgotten, and a
// chunk waits only while such a device may still run work in it.  Another
// device's copies thus never answer the loss (LOSS-11).
bool clear_of_losses(const Chunk &c) { return forget_lost_work(c.alloc); }

// Whether a can be staging: any memory can until the process shares host
// memory, then only shared pages.
bool usable(const Pool &p, const Allocation *a) { return !p.shared || p.shared(a->host, kStagingBytes); }

// Returns chunks as freed memory returns, once their work is done; a
// retired one's memory goes back to the host's driver, since a fresh chunk
// would take it again from the host's cache.
void give_back(const std::vector<Chunk> &chunks) {
  for (const Chunk &c : chunks) {
    if (c.retired) c.alloc->never_cached = true;
    unref(c.alloc);
  }
}

// Takes out of the pool the chunks pick chooses, to give back outside the
// pool's lock.
template <class Pick>
std::vector<Chunk> take_out(Pool &p, Pick pick) {
  std::vector<Chunk> out;
  auto keep = p.chunks.begin();
  for (Chunk &c : p.chunks) {
    if (pick(c))
      out.push_back(c);
    else
      *keep++ = c;
  }
  p.chunks.erase(keep, p.chunks.end());
  return out;
}

// Allocates outside the pool's lock: an allocation may run the rounds of
// reclamation, which return idle staging memory.
Allocation *allocate_chunk(std::unique_lock<std::mutex> &g, int node) {
  g.unlock();
  Allocation *a;
  try {
    a = allocate(host(), kStagingBytes, Memory::Device);
    a->staging = true;
    place_on_node(a, node);
  } catch (...) {
    g.lock();
    throw;
  }
  g.lock();
  return a;
}

Chunk &new_chunk(Pool &p, std::unique_lock<std::mutex> &g, int node) {
  Chunk c{allocate_chunk(g, node), node};
  if (!usable(p, c.alloc)) {
    // The host's cache kept these pages from before the process shared
    // host memory; its next block of this size is shared.
    c.retired = true;
    g.unlock();
    give_back({c});
    g.lock();
    c = Chunk{allocate_chunk(g, node), node};
    // Where the system has no shared memory, the chunk serves one copy.
    c.retired = !usable(p, c.alloc);
  }
  p.chunks.push_back(c);
  p.most = std::max(p.most, p.chunks.size());
  return p.chunks.back();
}

StagingLease hold(Pool &p, Chunk &c, int64_t n) {
  c.holders++;
  c.last_take = ++p.takes;
  StagingLease lease{c.alloc, c.fill};
  if (c.fill == 0) c.filled_from_start = p.takes;
  c.fill += n;
  return lease;
}

}  // namespace

StagingLease take_host_written(int64_t n, int node) {
  Pool &p = pool();
  std::unique_lock<std::mutex> g(p.mu);
  // Once an allocation's work is seen done, bytes go to its start again.
  // The chunks a copy may take now; kept from call to call, so that a
  // staged copy allocates nothing here.
  thread_local std::vector<Chunk *> takeable;
  takeable.clear();
  for (Chunk &c : p.chunks)
    if (c.node == node && c.holders == 0 && clear_of_losses(c)) takeable.push_back(&c);
  for (Chunk *c : takeable)
    if (c->fill > 0 && work_done(c->alloc)) {
      c->fill = 0;
      c->device_written = false;
    }
  for (Chunk *c : takeable)
    if (!c->device_written && c->fill + n <= kStagingBytes) return hold(p, *c, n);
  Chunk *oldest = nullptr;
  for (Chunk *c : takeable)
    if (!oldest || c->filled_from_start < oldest->filled_from_start) oldest = c;
  if (!oldest) return hold(p, new_chunk(p, g, node), n);
  // Reuse the allocation filled longest ago, once its work is done.  The
  // hold keeps other copies off it while this one waits.
  oldest->holders++;
  Allocation *a = oldest->alloc;
  g.unlock();
  try {
    wait_work(a);
  } catch (...) {
    g.lock();
    for (Chunk &c : p.chunks)
      if (c.alloc == a) c.holders--;
    throw;
  }
  g.lock();
  for (Chunk &c : p.chunks)
    if (c.alloc == a) {
      c.holders--;
      c.fill = 0;
      c.device_written = false;
      return hold(p, c, n);
    }
  throw_invalid("staging memory vanished");  // unreachable: held chunks stay
}

StagingLease take_device_written(int node) {
  Pool &p = pool();
  std::unique_lock<std::mutex> g(p.mu);
  for (Chunk &c : p.chunks)
    if (c.node == node && c.holders == 0 && clear_of_losses(c) && work_done(c.alloc)) {
      c.fill = 0;
      StagingLease lease = hold(p, c, kStagingBytes);
      c.device_written = true;
      return lease;
    }
  Chunk &c = new_chunk(p, g, node);
  StagingLease lease = hold(p, c, kStagingBytes);
  c.device_written = true;
  return lease;
}

StagingLease refill_from_start(const StagingLease &lease, int64_t n) {
  wait_work(lease.alloc);
  Pool &p = pool();
  std::lock_guard<std::mutex> g(p.mu);
  for (Chunk &c : p.chunks)
    if (c.alloc == lease.alloc) {
      // Later copies place their bytes after these.
      c.fill = n;
      c.filled_from_start = ++p.takes;
      c.device_written = false;
    }
  return StagingLease{lease.alloc, 0};
}

void release_staging(const StagingLease &lease) {
  Pool &p = pool();
  std::vector<Chunk> returning;
  {
    std::lock_guard<std::mutex> g(p.mu);
    for (Chunk &c : p.chunks)
      if (c.alloc == lease.alloc) c.holders--;
    returning = take_out(p, [&](const Chunk &c) {
      return c.holders == 0 && (c.retired || c.last_take + p.most <= p.takes);
    });
  }
  give_back(returning);
}

void release_idle_staging() {
  Pool &p = pool();
  std::vector<Chunk> returning;
  {
    std::lock_guard<std::mutex> g(p.mu);
    returning = take_out(p, [](const Chunk &c) { return c.holders == 0; });
  }
  give_back(returning);
}

bool host_pages_shared(const void *host, size_t bytes) {
  Pool &p = pool();
  SharedPages shared;
  {
    std::lock_guard<std::mutex> g(p.mu);
    shared = p.shared;
  }
  return shared && shared(host, bytes);
}

void share_staging(SharedPages shared) {
  Pool &p = pool();
  std::vector<Chunk> returning;
  {
    std::lock_guard<std::mutex> g(p.mu);
    p.shared = shared;
    for (Chunk &c : p.chunks)
      if (!usable(p, c.alloc)) c.retired = true;
    returning = take_out(p, [](const Chunk &c) { return c.retired && c.holders == 0; });
  }
  give_back(returning);
}

}  // namespace rig
