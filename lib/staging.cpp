#include "staging.hpp"

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
};

struct Pool {
  std::mutex mu;
  std::vector<Chunk> chunks;
  uint64_t takes = 0;
  size_t most = 0;  // the most chunks staging has had at once
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

// Allocates outside the pool's lock: an allocation may run the rounds of
// reclamation, which return idle staging memory.
// Moves a's pages to node (also pages a reused allocation touched), so
// that a device's copies read and write memory near it.
void place_on_node(Allocation *a, int node) {
  if (node < 0 || node >= static_cast<int>(sizeof(unsigned long) * 8)) return;
  unsigned long mask = 1UL << node;
  // Best effort: a system without NUMA, or a node with no room, leaves the
  // pages where they are.
  mbind(a->host, static_cast<unsigned long>(kStagingBytes), MPOL_PREFERRED, &mask, sizeof mask * 8, MPOL_MF_MOVE);
}

Chunk &new_chunk(Pool &p, std::unique_lock<std::mutex> &g, int node) {
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
  p.chunks.push_back(Chunk{a, node});
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
  for (Chunk &c : p.chunks)
    if (c.node == node && c.holders == 0 && c.fill > 0 && work_done(c.alloc)) {
      c.fill = 0;
      c.device_written = false;
    }
  for (Chunk &c : p.chunks)
    if (c.node == node && c.holders == 0 && !c.device_written && c.fill + n <= kStagingBytes) return hold(p, c, n);
  Chunk *oldest = nullptr;
  for (Chunk &c : p.chunks)
    if (c.node == node && c.holders == 0 && (!oldest || c.filled_from_start < oldest->filled_from_start)) oldest = &c;
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
    if (c.node == node && c.holders == 0 && work_done(c.alloc)) {
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
  std::vector<Allocation *> returning;
  {
    std::lock_guard<std::mutex> g(p.mu);
    auto keep = p.chunks.begin();
    for (Chunk &c : p.chunks) {
      if (c.alloc == lease.alloc) c.holders--;
      bool stale = c.holders == 0 && c.last_take + p.most <= p.takes;
      if (stale)
        returning.push_back(c.alloc);
      else
        *keep++ = c;
    }
    p.chunks.erase(keep, p.chunks.end());
  }
  // They return as freed memory does: once their work is done.
  for (Allocation *a : returning) unref(a);
}

void release_idle_staging() {
  Pool &p = pool();
  std::vector<Allocation *> returning;
  {
    std::lock_guard<std::mutex> g(p.mu);
    auto keep = p.chunks.begin();
    for (Chunk &c : p.chunks) {
      if (c.holders == 0)
        returning.push_back(c.alloc);
      else
        *keep++ = c;
    }
    p.chunks.erase(keep, p.chunks.end());
  }
  for (Allocation *a : returning) unref(a);
}

}  // namespace rig
