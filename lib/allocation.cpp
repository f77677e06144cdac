#include "allocation.hpp"

#include "buffer.hpp"
#include "probes.hpp"
#include "registry.hpp"
#include "rig_internal/staging.hpp"

#include <algorithm>
#include <functional>
#include <cstring>
#include <optional>

namespace rig {
namespace {

constexpr int64_t kWord = RIG_WORD_BYTES;

int64_t whole_words(int64_t n) { return (n + kWord - 1) / kWord * kWord; }

// The bytes an allocation counts in its budget (rig.txt, Reclamation): its
// whole words, and for a host buffer that starts on 128 bytes the C
// library's 112 more.
int64_t charge_of(rig_device_t *d, int64_t n) {
  int64_t words = whole_words(n);
  if (d->is_host && n >= 128 && !(n >= 65536 && n >= 4 * 4096)) return words + 112;
  return words;
}

bool host_keeps(rig_device_t *d, const Allocation *a) {
  // The host keeps collected buffers of 64 KiB or more, up to 32 MiB of them.
  constexpr int64_t kKeepMin = 64 * 1024, kKeepMax = 32 * 1024 * 1024;
  if (a->bytes < kKeepMin) return false;
  return d->cache_bytes + a->charged <= kKeepMax;
}

// Gives a region back to d's driver: a counted call while d is live, whose
// failure loses d (the memory's return goes on); after d's stop an
// uncounted one whose faults are dropped (DRV-99).
void driver_free(rig_device_t *d, Region r) {
  if (d->is_lost()) {
    try {
      DriverCallMask mask;
      d->drv->free(r);
    } catch (...) {
    }
    return;
  }
  try {
    driver_call(d, true, [&] { d->drv->free(r); });
  } catch (const Error &) {
    // d is lost with the failure's text; nothing else to undo.
  }
}

// What a mapping gives back to its drivers: the device's region, then the
// io pages it mapped of owner's region.
struct MappedParts {
  rig_device_t *device;
  Region region;
  rig_device_t *owner;
  Region owner_region;
  void *io_pages;
};

void give_back(const MappedParts &p) {
  if (p.region) driver_free(p.device, p.region);
  if (p.io_pages) {
    DriverCallMask mask;
    p.owner->io_ops->unpages(p.owner->io_library, p.owner_region, p.io_pages, 0);
  }
}

// The parts of m to give back, where no one took them before.
std::optional<MappedParts> take_parts(Mapping &m) {
  if (m.returned.exchange(true, std::memory_order_acq_rel)) return std::nullopt;
  return MappedParts{m.device, m.region, m.owner, m.owner_region, m.io_pages};
}

// Gives back a device's mapping of its owner's memory, unless its lost
// device's stop did (return_mappings).
void free_mapping(Mapping &m) {
  if (std::optional<MappedParts> parts = take_parts(m)) give_back(*parts);
}

// Returns a region and the mappings of it to their drivers: the mappings
// first, then the memory they map.
void free_region(rig_device_t *owner, Region region, std::vector<std::unique_ptr<Mapping>> &mappings) {
  for (auto &m : mappings) free_mapping(*m);
  mappings.clear();
  if (region) driver_free(owner, region);
}

void give_back_block(rig_device_t *owner, CachedBlock *c) {
  free_region(owner, c->region, c->mappings);
  RIG_PROBE(free, owner->name.c_str(), c->bytes);
  c->charged_to->allocated.fetch_sub(c->charged);
  owner->holdings.fetch_sub(1);
  delete c;
}

// The record outlives its memory while buffers over it remain, and its
// memory outlives the last buffer until its work is done.
void release_part(Allocation *a) {
  if (a->parts.fetch_sub(1, std::memory_order_acq_rel) == 1) delete a;
}

// a's memory, its work done, goes to its owner's cache or back to the
// driver; the record goes once no buffer refers to it.
void move_memory(Allocation *a, bool to_cache) {
  rig_device_t *owner = a->owner;
  CachedBlock *cached = nullptr;
  Region region;
  std::vector<std::unique_ptr<Mapping>> mappings;
  {
    Guard g(a->mu);
    // Borrows of memory freed early are dead: their holds end here.
    for (auto &m : a->mappings) m->borrows = 0;
    region = a->region;
    mappings = std::move(a->mappings);
    a->region = nullptr;
    a->memory_moved = true;
  }
  // Drivers and the caller's release are called holding no lock of rig's
  // (DRV-09), and the device's lock is never taken under an allocation's.
  if (to_cache) {
    cached = new CachedBlock{region, a->loc, a->host, a->bytes, a->charged, a->charged_to, a->kind, std::move(mappings)};
    Guard g(owner->reclaim_mu);
    owner->cache.insert({{static_cast<int>(cached->kind), cached->bytes}, cached});
    owner->cache_bytes += cached->charged;
    return;
  }
  free_region(owner, region, mappings);
  if (region) RIG_PROBE(free, owner->name.c_str(), a->bytes);
  if (a->release) a->release(a->release_context);
  if (a->charged_to) a->charged_to->allocated.fetch_sub(a->charged);
  owner->holdings.fetch_sub(1);
}

}  // namespace

Allocation::~Allocation() {
  for (const Stamp &s : stamps) s.device->named.fetch_sub(1);
  for (const Dependency &u : unordered) u.device->named.fetch_sub(1);
}

bool work_done(Allocation *a) {
  Guard g(a->mu);
  for (const Stamp &s : a->stamps)
    if (s.device->read_word() < s.use) return false;
  for (const Dependency &u : a->unordered)
    if (u.device->read_word() < u.value) return false;
  return true;
}

void add_unordered(Allocation *a, rig_device_t *d, uint64_t v) {
  Guard g(a->mu);
  for (Dependency &u : a->unordered)
    if (u.device == d) {
      u.value = std::max(u.value, v);
      return;
    }
  a->unordered.push_back({d, v});
  d->named.fetch_add(1);
}

void dependencies(Allocation *a, bool write, rig_device_t *except, std::vector<Dependency> &out) {
  if (a->owner->is_lost()) throw_lost(a->owner);
  Guard g(a->mu);
  for (const Stamp &s : a->stamps) {
    rig_device_t *d = s.device;
    if (d->is_lost()) {
      uint64_t reached = d->reached_at_loss();
      // A last write the lost device never reached poisons every use; a use
      // it never reached poisons the uses that depend on every point until
      // the device has stopped (Memory after a loss).
      if (s.write > reached) throw_lost(d);
      if (write && s.use > reached && !d->stopped()) throw_lost(d);
      continue;
    }
    if (d == except) continue;
    uint64_t v = write ? s.use : s.write;
    if (v != 0 && d->reported.load(std::memory_order_acquire) < v) out.push_back({d, v});
  }
}

void wait_all(const std::vector<Dependency> &deps) {
  for (const Dependency &dep : deps) dep.device->wait(dep.value);
}

void add_stamp(Allocation *a, rig_device_t *d, uint64_t v, bool write) {
  if (d->is_host) return;  // work on the host is done when it returns
  Guard g(a->mu);
  for (Stamp &s : a->stamps)
    if (s.device == d) {
      s.use = std::max(s.use, v);
      if (write) s.write = std::max(s.write, v);
      return;
    }
  a->stamps.push_back({d, write ? v : 0, v});
  d->named.fetch_add(1);
}

bool forget_lost_work(Allocation *a) {
  Guard g(a->mu);
  bool may_run = false;
  std::erase_if(a->stamps, [&](const Stamp &s) {
    if (!s.device->is_lost()) return false;
    if (s.device->stopped()) {
      s.device->named.fetch_sub(1);
      return true;
    }
    may_run = may_run || s.use > s.device->reached_at_loss();
    return false;
  });
  return !may_run;
}

bool stamps_reached(Allocation *a, bool write) {
  std::vector<Dependency> deps;
  dependencies(a, write, nullptr, deps);
  for (const Dependency &dep : deps)
    if (!dep.device->reached(dep.value)) return false;
  return true;
}

namespace {

// Counts charged bytes in budget_device's budget, or answers false,
// counting nothing, where the budget has no room for them.
bool take_budget(rig_device_t *budget_device, int64_t charged) {
  int64_t before = budget_device->allocated.fetch_add(charged);
  if (before + charged <= budget_device->budget.load()) return true;
  budget_device->allocated.fetch_sub(charged);
  return false;
}

// One try of the driver, or of the cache, for n bytes of m.
Allocation *try_allocate(rig_device_t *d, rig_device_t *budget_device, int64_t n, Memory m) {
  int64_t charged = charge_of(d, n);
  CachedBlock *reuse = nullptr;
  {
    Guard g(d->reclaim_mu);
    auto it = d->cache.find({static_cast<int>(m), n});
    if (it != d->cache.end()) {
      reuse = it->second;
      d->cache_bytes -= reuse->charged;
      d->cache.erase(it);
    }
  }
  if (reuse) {
    // Cached memory comes back with empty stamps: it waits for no work of
    // its earlier use.
    auto *a = new Allocation();
    a->owner = d;
    a->region = reuse->region;
    a->loc = reuse->loc;
    a->host = reuse->host;
    a->bytes = reuse->bytes;
    a->charged = reuse->charged;
    a->charged_to = reuse->charged_to;
    a->kind = reuse->kind;
    a->host_paged = d->is_host || d->facts.runs_on_host;
    a->mappings = std::move(reuse->mappings);
    delete reuse;
    return a;
  }
  if (!take_budget(budget_device, charged)) return nullptr;
  Region r = nullptr;
  try {
    r = driver_call(d, true, [&] { return d->drv->alloc(m, whole_words(n)); });
  } catch (...) {
    budget_device->allocated.fetch_sub(charged);
    throw;
  }
  if (!r) {
    budget_device->allocated.fetch_sub(charged);
    return nullptr;
  }
  auto *a = new Allocation();
  a->owner = d;
  a->region = r;
  a->loc = d->drv->locate(r);
  a->zeroed = d->drv->zeroed(r);
  a->bytes = n;
  RIG_PROBE(alloc, d->name.c_str(), n);
  a->charged = charged;
  a->charged_to = budget_device;
  a->kind = m;
  bool host_addressed = d->is_host || d->facts.host_addresses || m != Memory::Device;
  a->host = host_addressed ? a->loc.address : nullptr;
  a->host_paged = d->is_host || d->facts.runs_on_host;
  d->holdings.fetch_add(1);
  return a;
}

}  // namespace

namespace {

// Whether memory charged to d counts in budget_device's budget, or in the
// bound its driver sets on both (Facts::shared_bound).
bool counts_with(const rig_device_t *d, const rig_device_t *budget_device) {
  const void *bound = budget_device->facts.shared_bound;
  return d == budget_device || (bound && d->facts.shared_bound == bound);
}

}  // namespace

// A round of reclamation for the budget of budget_device.
void reclaim_round(rig_device_t *budget_device, int round) {
  if (round >= 1) release_idle_staging();
  // Wait for the work that holds back collected memory, then free the cache.
  std::vector<std::pair<rig_device_t *, uint64_t>> waits;
  auto wait_for_collected = [&](rig_device_t *d) {
    // Locks nest in this order only: a device's, then an allocation's.
    Guard g(d->reclaim_mu);
    for (Allocation *a : d->collected) {
      Guard ga(a->mu);
      for (const Stamp &s : a->stamps) waits.push_back({s.device, s.use});
    }
  };
  if (budget_device->facts.shared_bound)
    for_each_open_device([&](rig_device_t *d) {
      if (counts_with(d, budget_device)) wait_for_collected(d);
    });
  else
    wait_for_collected(budget_device);
  for (auto &[dev, v] : waits) {
    try {
      dev->wait(v);
    } catch (const Error &) {
    }
  }
  free_cache_charged_to(budget_device);
}

void charge_code(rig_device_t *d, int64_t bytes) {
  if (bytes <= 0 || take_budget(d, bytes)) return;
  for (int round = 0; round < kReclaimRounds; round++) {
    reclaim_round(d, round);
    require_live(d);
    if (take_budget(d, bytes)) return;
  }
  throw_no_memory(d, bytes, "of code");
}

void uncharge_code(rig_device_t *d, int64_t bytes) {
  if (bytes > 0) d->allocated.fetch_sub(bytes);
}

Allocation *allocate(rig_device_t *d, int64_t n, Memory m) {
  // A create on a lost device returns what it held once it has stopped
  // (STOP-05), then answers that it is lost.
  if (d->is_lost()) reclaim_stopped(d);
  require_live(d);
  move_collected(d);
  // Pinned memory counts in the host's budget.
  auto budget_of = [&](Memory kind) { return kind == Memory::Pinned ? host() : d; };
  rig_device_t *budget_device = budget_of(m);
  int64_t charged = charge_of(d, n);
  if (!d->is_host && charged > budget_device->budget.load()) throw_no_memory(d, n);
  if (Allocation *a = try_allocate(d, budget_device, n, m)) return a;
  if (m == Memory::Mapped) {
    // Mapped falls back, without freeing the cache, to the device's own
    // memory where the host addresses it, else to Pinned memory.
    Memory fallback = d->facts.host_addresses ? Memory::Device : Memory::Pinned;
    if (Allocation *a = try_allocate(d, budget_of(fallback), n, fallback)) return a;
  }
  for (int round = 0; round < kReclaimRounds; round++) {
    reclaim_round(budget_device, round);
    if (budget_device != d) free_cache(d);
    require_live(d);
    if (Allocation *a = try_allocate(d, budget_device, n, m)) return a;
  }
  std::string refusal = d->drv->refusal();
  throw_no_memory(d, n, refusal.empty() ? refusal : "(" + refusal + ")");
}

Allocation *wrap_caller_memory(void *p, int64_t n, rig_release_fn release, void *context) {
  auto *a = new Allocation();
  a->owner = host();
  a->host = p;
  a->loc.address = p;
  a->bytes = n;
  a->host_paged = true;
  a->outside_claims = true;
  a->release = release;
  a->release_context = context;
  a->owner->holdings.fetch_add(1);
  return a;
}

Allocation *wrap_foreign_region(rig_device_t *d, Region r, int64_t n) {
  auto *a = new Allocation();
  a->owner = d;
  a->region = r;
  a->loc = d->drv->locate(r);
  a->bytes = n;
  a->never_cached = true;
  d->holdings.fetch_add(1);
  return a;
}

Allocation *wrap_io_region(rig_device_t *d, void *region, rig_access_t access, int64_t n) {
  auto *a = new Allocation();
  a->owner = d;
  a->region = region;
  a->bytes = n;
  a->access = access;
  a->outside_claims = true;
  d->holdings.fetch_add(1);
  return a;
}

Allocation *empty_allocation(rig_device_t *d) {
  require_live(d);
  auto *a = new Allocation();
  a->owner = d;
  a->host_paged = d->is_host || d->facts.runs_on_host;
  d->holdings.fetch_add(1);
  return a;
}

void ref(Allocation *a) { a->refs.fetch_add(1, std::memory_order_relaxed); }

void collect_early(Allocation *a) {
  rig_device_t *d = a->owner;
  {
    Guard g(a->mu);
    if (a->collected) return;
    a->collected = true;
  }
  {
    Guard g(d->reclaim_mu);
    d->collected.push_back(a);
  }
  move_collected(d);
}

void unref(Allocation *a) {
  if (a->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  collect_early(a);
  release_part(a);
}

Mapping::Mapping(rig_device_t *d, rig_device_t *memory_owner, Region memory_region)
    : device(d), owner(memory_owner), owner_region(memory_region) {
  device->named.fetch_add(1);
}

Mapping::~Mapping() {
  if (listed) {
    Guard g(device->mappings_mu);
    std::erase(device->mappings, this);
  }
  device->named.fetch_sub(1);
}

void return_mappings(rig_device_t *d) {
  if (!d->is_lost() || !d->stopped()) return;
  // Taken under the device's lock, given back without it: once the lock
  // is let go, another thread may end a mapping whose parts were taken.
  std::vector<MappedParts> taken;
  {
    Guard g(d->mappings_mu);
    for (Mapping *m : d->mappings)
      if (std::optional<MappedParts> parts = take_parts(*m)) taken.push_back(*parts);
  }
  for (const MappedParts &p : taken) give_back(p);
}

Mapping *hold_mapping(Allocation *a, rig_device_t *d) {
  {
    Guard g(a->mu);
    for (auto &m : a->mappings)
      if (m->device == d) {
        m->borrows++;
        return m.get();
      }
  }
  auto m = std::make_unique<Mapping>(d, a->owner, a->region);
  if (a->owner->is_io()) {
    // A borrow of an io device's memory maps its pages.
    rig_device_t *io = a->owner;
    if (!(d->is_host || d->facts.runs_on_host || d->facts.maps_host)) return nullptr;
    void *pages = nullptr;
    int r;
    {
      DriverCallMask mask;
      r = io->io_ops->pages(io->io_library, a->region, a->bytes, &pages);
    }
    if (r < 0) {
      Error e(RIG_EIO, io_region_name(io, a->region) + ": its pages could not be mapped: " + std::strerror(-r));
      e.code = -r;
      throw e;
    }
    m->io_pages = pages;
    m->loc.address = pages;
    if (!(d->is_host || d->facts.runs_on_host)) {
      m->region = reinterpret_cast<uintptr_t>(pages) % 4096 == 0
                      ? driver_call(d, true, [&] { return d->drv->map_host(pages, whole_words(a->bytes)); })
                      : nullptr;
      if (!m->region) {
        DriverCallMask mask;
        io->io_ops->unpages(io->io_library, a->region, pages, a->bytes);
        return nullptr;
      }
      m->loc = d->drv->locate(m->region);
    }
  } else if (d->is_host || d->facts.runs_on_host) {
    // The host and memory devices address host memory as it is, and no
    // other memory.
    if (!a->host) return nullptr;
    m->loc.address = a->host;
  } else if (a->host) {
    // A device that maps host memory maps memory that starts on a page.
    bool maps = d->facts.maps_host || (d->facts.maps_staging && a->staging);
    if (!maps || reinterpret_cast<uintptr_t>(a->host) % 4096 != 0) return nullptr;
    m->region = driver_call(d, true, [&] { return d->drv->map_host(a->host, whole_words(a->bytes)); });
    if (!m->region) return nullptr;
    m->loc = d->drv->locate(m->region);
  } else {
    rig_device_t *owner = a->owner;
    if (owner->driver != d->driver || !d->drv->peer(*owner->drv)) return nullptr;
    m->region = driver_call(d, true, [&] { return d->drv->map_peer(*owner->drv, a->region); });
    if (!m->region) return nullptr;
    m->loc = d->drv->locate(m->region);
  }
  Mapping *theirs = nullptr;
  {
    Guard g(a->mu);
    for (auto &other : a->mappings)
      if (other->device == d) theirs = other.get();
    if (theirs) {
      theirs->borrows++;
    } else {
      m->borrows = 1;
      {
        Guard listing(d->mappings_mu);
        d->mappings.push_back(m.get());
        m->listed = true;
      }
      a->mappings.push_back(std::move(m));
      return a->mappings.back().get();
    }
  }
  // Another thread mapped it meanwhile: keep theirs, and give this one back
  // holding no lock.
  free_mapping(*m);
  return theirs;
}

Mapping *copy_mapping(Allocation *a, rig_device_t *d) {
  {
    Guard g(a->mu);
    for (auto &m : a->mappings)
      if (m->device == d && m->kept) return m.get();
  }
  Mapping *m = hold_mapping(a, d);
  if (!m) return nullptr;
  Guard g(a->mu);
  if (m->kept)
    m->borrows--;  // another copy kept it meanwhile
  else
    m->kept = true;
  return m;
}

void release_mapping(Allocation *a, Mapping *m) {
  std::unique_ptr<Mapping> gone;
  {
    Guard g(a->mu);
    // Memory freed early took its mappings along: m is gone.
    if (a->memory_moved || --m->borrows > 0 || m->kept) return;
    rig_device_t *d = m->device;
    // The mapping goes back once the borrowing device has run the work
    // submitted until now; until then the allocation's collection frees it.
    if ((m->region || m->io_pages) && d->read_word() < d->submitted.load()) return;
    if (d->is_lost() && !d->stopped()) return;
    for (auto it = a->mappings.begin(); it != a->mappings.end(); ++it)
      if (it->get() == m) {
        gone = std::move(*it);
        a->mappings.erase(it);
        break;
      }
  }
  if (gone) free_mapping(*gone);
}

void move_collected(rig_device_t *d) {
  release_retired(d);
  // A lost device's memory returns only once it has stopped, and its
  // mappings of other memory then (STOP-05).
  if (d->is_lost() && !d->stopped()) return;
  if (d->is_lost()) return_mappings(d);
  std::vector<Allocation *> candidates;
  {
    Guard g(d->reclaim_mu);
    candidates.swap(d->collected);
  }
  if (candidates.empty()) return;
  // Checked without the device's lock: an allocation's lock is never taken
  // under it.
  std::vector<Allocation *> done, waiting;
  for (Allocation *a : candidates) (work_done(a) ? done : waiting).push_back(a);
  if (!waiting.empty()) {
    Guard g(d->reclaim_mu);
    d->collected.insert(d->collected.end(), waiting.begin(), waiting.end());
  }
  for (Allocation *a : done) {
    bool cache = a->region && !a->release && !a->never_cached && !d->is_lost() && !d->is_io() && !a->outside_claims.load() &&
                 a->charged_to->allocated.load() <= a->charged_to->budget.load();
    if (cache) {
      Guard g(d->reclaim_mu);
      cache = d->cache_bytes + a->charged <= d->cache_limit.load() && (!d->is_host || host_keeps(d, a));
    }
    move_memory(a, cache);
    release_part(a);
  }
  if (d->is_lost()) maybe_leave_slot(d);
}

namespace {

// Returns d's cached blocks that pick chooses, while more is wanted.
void drop_cached(rig_device_t *d, const std::function<bool(const CachedBlock &)> &pick,
                 const std::function<bool()> &more) {
  for (;;) {
    CachedBlock *c = nullptr;
    {
      Guard g(d->reclaim_mu);
      if (!more()) return;
      // A lost device's memory returns only once it has stopped.
      if (d->is_lost() && !d->stopped()) return;
      for (auto it = d->cache.begin(); it != d->cache.end(); ++it)
        if (pick(*it->second)) {
          c = it->second;
          d->cache_bytes -= c->charged;
          d->cache.erase(it);
          break;
        }
    }
    if (!c) return;
    give_back_block(d, c);
  }
}

}  // namespace

void free_cache(rig_device_t *d) {
  // The host's staging memory returns with the host's cache.
  if (d->is_host) release_idle_staging();
  move_collected(d);
  drop_cached(d, [](const CachedBlock &) { return true; }, [] { return true; });
  if (d->is_lost()) maybe_leave_slot(d);
}

void trim_cache(rig_device_t *d, int64_t target) {
  move_collected(d);
  drop_cached(d, [&](const CachedBlock &c) { return c.charged_to == d; }, [&] { return d->allocated.load() > target; });
}

void limit_cache(rig_device_t *d, int64_t n) {
  d->cache_limit.store(n);
  move_collected(d);
  // Under the device's lock, as drop_cached reads it.
  drop_cached(d, [](const CachedBlock &) { return true; }, [&] { return d->cache_bytes > n; });
}

void free_cache_charged_to(rig_device_t *budget_device) {
  for_each_open_device([&](rig_device_t *d) {
    move_collected(d);
    drop_cached(d, [&](const CachedBlock &c) { return counts_with(c.charged_to, budget_device); }, [] { return true; });
  });
}

void reclaim_stopped(rig_device_t *d) {
  if (!d->stopped()) return;
  release_retired(d);
  return_mappings(d);
  free_cache(d);
}

}  // namespace rig
