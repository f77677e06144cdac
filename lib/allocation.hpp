// Allocations: the memory one create makes on a device, with its stamps
// (per device, the points of its last write and last use), the mappings
// other devices made of it, and its return once collected.
#pragma once

#include "device.hpp"

#include <memory>
#include <vector>

namespace rig {

struct Stamp {
  rig_device_t *device;
  uint64_t write;  // the last value of device that wrote the memory, or 0
  uint64_t use;    // the last value of device that used it (>= write)
};

// A device's mapping of an allocation, shared by every borrow on it.  It
// names its device (rig_device::named) from its making to its end.
struct Mapping {
  Mapping(rig_device_t *d, rig_device_t *owner, Region owner_region);
  ~Mapping();
  Mapping(const Mapping &) = delete;
  Mapping &operator=(const Mapping &) = delete;
  rig_device_t *device;
  rig_device_t *owner;        // the device whose memory it maps
  Region owner_region;        // that memory's region of the owner's driver
  Region region = nullptr;    // nullptr where the device needs no driver mapping
  rig_edge_location_t loc{};  // where byte 0 of the allocation lies for it
  void *io_pages = nullptr;   // an io device's pages this mapping maps, if any
  int64_t borrows = 0;        // live borrows holding it
  bool kept = false;          // made or kept for copies: lasts until the memory returns
  // Whether its region and io pages went back to their drivers: once, by
  // whoever exchanges it first (its allocation's release, or its lost
  // device's stop, STOP-04).
  std::atomic<bool> returned{false};
  bool listed = false;  // on device->mappings, under its mappings_mu
};

// The kinds of claim on memory (rig.txt, Claims), counted apart: read
// claims (rig_buffer_claim, host access, copies, submits), holds
// (Claim.hold: rig_claim_hold, prepared submissions) and the holds of
// Claim.with_ (rig_claim_begin), one of which may take the memory
// exclusive.
enum class ClaimKind { Read = 0, Hold = 1, With = 2 };

struct ClaimCounts {
  int counts[3] = {};
  int &operator[](ClaimKind k) { return counts[static_cast<int>(k)]; }
  bool any() const { return counts[0] > 0 || counts[1] > 0 || counts[2] > 0; }
};

// A consume: the buffers made before it that lie inside the bytes
// [first, end) of the memory are dead with why.
struct Death {
  std::string why;
  int64_t first;
  int64_t end;
};

// A point a use of memory must follow.
struct Dependency {
  rig_device_t *device;
  uint64_t value;
};

// Memory a device's cache keeps for reuse: what an allocation held.
struct CachedBlock {
  Region region;
  rig_edge_location_t loc;
  void *host;
  int64_t bytes;
  int64_t charged;
  rig_device_t *charged_to;
  Memory kind;
  std::vector<std::unique_ptr<Mapping>> mappings;
};

struct Allocation {
  // Buffers, views, borrows and exported arrays over it.  The record lives
  // until the last goes; its memory may return earlier (Buffer.free).
  std::atomic<int64_t> refs{1};
  // The record goes once both its references and its memory are gone.
  std::atomic<int> parts{2};
  rig_device_t *owner = nullptr;   // the device whose memory it is
  Region region = nullptr;         // the owner driver's region
  void *host = nullptr;            // host address of byte 0, if the host addresses it
  rig_edge_location_t loc{};       // byte 0 for the owner's work
  int64_t bytes = 0;               // as asked
  int64_t charged = 0;             // bytes counted in charged_to's budget
  rig_device_t *charged_to = nullptr;
  Memory kind = Memory::Device;
  bool host_paged = false;         // host, caller and memory-device memory
  // Its memory came new from its driver, reading zero (DriverDevice::zeroed),
  // not from a cache that holds what an earlier use wrote.
  bool zeroed = false;
  std::atomic<bool> outside_claims{false};
  rig_access_t access = RIG_ACCESS_READ_WRITE;
  bool collected = false;                // on its owner's collected list (mu)
  bool memory_moved = false;             // its memory went to the cache or driver (mu)
  bool never_cached = false;         // returns to its driver, never to a cache: another
                                     // process allocated it, or staging retired it
  bool staging = false;              // the host's staging memory (staging.cpp)
  rig_release_fn release = nullptr;  // caller memory
  void *release_context = nullptr;

  Mutex mu;  // stamps, mappings, claims and deaths
  std::vector<Stamp> stamps;
  // The last value of each device whose work used the memory through an
  // unordered ref: no use follows it, but its memory returns only after
  // (Reclamation).
  std::vector<Dependency> unordered;
  std::vector<std::unique_ptr<Mapping>> mappings;

  // Claims (rig.txt, Claims), and whether a hold of Claim.with_ took the
  // memory exclusive.
  ClaimCounts claims;
  bool exclusive = false;
  // Consumption: a buffer made before generation g's consume is dead with
  // deaths[g]'s reason where it lies inside deaths[g]'s bytes.
  std::atomic<uint32_t> generation{0};
  std::vector<std::unique_ptr<const Death>> deaths;

  Allocation() = default;
  ~Allocation();  // its stamps and unordered uses name their devices no more
  Allocation(const Allocation &) = delete;
  Allocation &operator=(const Allocation &) = delete;
};

// The points a use must follow: a read follows every device's last write,
// any other use every use.  Throws RIG_ELOST where Memory after a loss
// says.  Points of `except` (the device that runs the use) are left out,
// since its own order covers them.
void dependencies(Allocation *a, bool write, rig_device_t *except, std::vector<Dependency> &out);
// Waits on the host for each dependency.
void wait_all(const std::vector<Dependency> &deps);
// Records that (d, v) reads (write false) or writes the allocation.
void add_stamp(Allocation *a, rig_device_t *d, uint64_t v, bool write);
// Records that (d, v) used the memory through an unordered ref.
void add_unordered(Allocation *a, rig_device_t *d, uint64_t v);
// True iff every point of a's stamps is reached or, on a lost device,
// reported: dropped values count for the return of memory.
bool work_done(Allocation *a);
// True iff the host may use the memory without waiting.
bool stamps_reached(Allocation *a, bool write);
// For memory of rig's own whose bytes a use writes before anything reads
// them (staging): drops from a's stamps the points of lost devices that
// have stopped, whose unreached work never runs, and answers false while
// a lost device that has not stopped has a point there it never reached,
// whose work may run yet.  A program's memory keeps such points (Memory
// after a loss).
bool forget_lost_work(Allocation *a);

// Allocates n bytes of d's memory m (n > 0), reusing cached memory and
// running the rounds of reclamation before answering RIG_ENOMEM.
Allocation *allocate(rig_device_t *d, int64_t n, Memory m);
// An allocation over the caller's memory on the host.
Allocation *wrap_caller_memory(void *p, int64_t n, rig_release_fn release, void *context);
// An allocation over region r of d's memory, n bytes, that another process
// allocated (a proxy's import): charged to no budget, never cached, and
// given back to d's driver once no buffer over it remains and its work is
// done.
Allocation *wrap_foreign_region(rig_device_t *d, Region r, int64_t n);
// An allocation over region, memory of the io device d, outside the claims.
Allocation *wrap_io_region(rig_device_t *d, void *region, rig_access_t access, int64_t n);
// An empty allocation on d: allocates nothing.
Allocation *empty_allocation(rig_device_t *d);

void ref(Allocation *a);
// Drops a reference; the last one collects the allocation.
void unref(Allocation *a);
// Collects a's memory now, while buffers over it remain (Buffer.free).
void collect_early(Allocation *a);

// The mapping of a by d, made once (map_host or map_peer) and shared.
// nullptr where d cannot map a's memory.
Mapping *hold_mapping(Allocation *a, rig_device_t *d);
void release_mapping(Allocation *a, Mapping *m);
// Gives back every mapping of other memory that the lost device d holds
// once d has stopped, borrowed or kept for copies alike (STOP-04,
// STOP-05): no work of d can use them any more.  The records stay with
// their memory until the borrows over them go.
void return_mappings(rig_device_t *d);
// The mapping through which d copies a's memory directly, made once and
// kept until the memory returns; nullptr where d cannot map it.
Mapping *copy_mapping(Allocation *a, rig_device_t *d);

// The rounds of reclamation an allocation runs before RIG_ENOMEM, and one
// of them for budget_device's budget.
constexpr int kReclaimRounds = 3;
void reclaim_round(rig_device_t *budget_device, int round);
// Counts the bytes of code an image loaded on d holds in d's budget,
// running the rounds of reclamation before RIG_ENOMEM; and returns them
// at its unload.
void charge_code(rig_device_t *d, int64_t bytes);
void uncharge_code(rig_device_t *d, int64_t bytes);

// Moves d's collected memory whose work is done to its cache or driver.
void move_collected(rig_device_t *d);
// free_cache: collected memory moved, then all of d's cached memory
// returned to its driver.
void free_cache(rig_device_t *d);
// set_budget's part: d's cached memory returned until d holds at most
// target bytes of its budget or its cache is empty.
void trim_cache(rig_device_t *d, int64_t target);
// rig_set_cache_limit's part: d's cache keeps at most n bytes from now on,
// its cached memory returned to its driver until it holds no more.
void limit_cache(rig_device_t *d, int64_t n);
// A round's part: the cached memory charged to budget_device's budget, on
// every device (Pinned memory counts in the host's), or to a device that
// shares its bound (Facts::shared_bound).
void free_cache_charged_to(rig_device_t *budget_device);
// Runs what waits on d's retired list whose work is done (or whose device
// has stopped): released submissions, images to unload (lib/retire.cpp).
void release_retired(rig_device_t *d);
// Releases object with release once d reaches value (now, if it has), or
// once d has stopped where it is lost.
void retire(rig_device_t *d, uint64_t value, void (*release)(void *), void *object);
// Returns the memory of a lost device that has stopped.
void reclaim_stopped(rig_device_t *d);

}  // namespace rig
