// Staging memory: host memory in allocations of 32 MiB through which a
// device copies from or into memory the host pages (rig-buffer.txt,
// Copying).  Each allocation is mapped once on each device that copies
// through it, for its life.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rig {

struct Allocation;  // lib/allocation.hpp

constexpr int64_t kStagingBytes = int64_t{32} << 20;

// A staging allocation a copy holds, and where its bytes start in it.
struct StagingLease {
  Allocation *alloc = nullptr;
  int64_t offset = 0;
};

// Room for n <= 32 MiB bytes the host writes: after the bytes earlier such
// copies put in an allocation no copy holds, where it has room and without
// waiting; otherwise at the start of one whose work is done, else of the
// one filled from its start longest ago, after its work; else a new one.
// Staging a device copies through sits on its NUMA node where the device
// states one (node >= 0); allocations of one node serve that node only.
StagingLease take_host_written(int64_t n, int node);
// An allocation whose work is done, or a new one, for bytes a device
// writes; no copy puts bytes after them.
StagingLease take_device_written(int node);
// A copy that holds lease puts n bytes at its allocation's start again,
// once the work that last used it is done (it waits for that work).
StagingLease refill_from_start(const StagingLease &lease, int64_t n);
// Ends a copy's hold.  Allocations no copy holds and no copy took within
// the last n takes (n the most allocations staging has had at once) return.
void release_staging(const StagingLease &lease);
// Returns every staging allocation no copy holds, once its work is done.
void release_idle_staging();

// Whether the bytes at host are pages the process shares with rigd.
using SharedPages = bool (*)(const void *host, size_t bytes);
// From now on staging uses only allocations whose pages shared tells are
// shared (the process connected to rigd, whose proxies map no other host
// memory: the proxy driver calls it as it connects).  The others retire: those no
// copy holds return now, the others once their copies give them back, and
// later copies take fresh allocations.  A retired allocation returns to the
// host's driver, not to its cache, where a fresh one would find its pages.
void share_staging(SharedPages shared);
// Whether share_staging's predicate holds for the bytes at host: false
// before the process shares host memory.
bool host_pages_shared(const void *host, size_t bytes);

}  // namespace rig
