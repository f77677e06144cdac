#include "work.hpp"

#include "registry.hpp"

#include <memory>

namespace rig {

void point_dependencies(const rig_point_t *waits, size_t nwaits, std::vector<Dependency> &out) {
  require(waits != nullptr || nwaits == 0, "waits is NULL");
  for (size_t i = 0; i < nwaits; i++) {
    uint16_t slot = static_cast<uint16_t>(waits[i].bits >> kValueBits);
    uint64_t value = waits[i].bits & kValueMax;
    rig_device_t *d = device_of_value(slot, value);
    if (!d) continue;  // a value no device was given waits for nothing
    if (value > d->submitted.load()) throw_invalid("a point of waits was never submitted on " + d->name);
    if (d->is_lost()) {
      if (value > d->reached_at_loss()) throw_lost(d);
      continue;
    }
    out.push_back({d, value});
  }
}

uint64_t host_value() {
  rig_device_t *h = host();
  Guard g(h->submit_mu);
  uint64_t v = h->submitted.load() + 1;
  rig_edge_work_t w{v, nullptr, 0, nullptr, 0};
  h->drv->submit(w);
  h->submitted.store(v, std::memory_order_release);
  return v;
}

namespace {

constexpr int kGrowTries = 4;

// submit_work's scratch of the calling thread, kept between calls so that
// a warm submit allocates nothing: no call inside submit_work submits
// again on this thread.  Reached through a word of the initial-exec model
// (locks.hpp), with no call into the dynamic linker; made at the thread's
// first submit and freed when it exits.
struct SubmitScratch {
  std::vector<Dependency> deps;
  std::vector<rig_edge_wait_t> queue_waits;
};
RIG_HOT_TLS SubmitScratch *submit_scratch = nullptr;

SubmitScratch &thread_scratch() {
  if (submit_scratch) return *submit_scratch;
  thread_local std::unique_ptr<SubmitScratch> owner;
  owner = std::make_unique<SubmitScratch>();
  return *(submit_scratch = owner.get());
}

// True iff d's queue waits for dep on the device, reading dep's word: a
// plain word where d's queues wait on other devices' words, a word of a
// driver's own where d's driver says its queues wait on it.
bool waits_on_queue(const rig_device_t *d, const Dependency &dep) {
  const rig_device_t *on = dep.device;
  if (on->is_host) return false;
  if (!on->facts.own_word) return d->facts.queue_waits;
  return on->driver == d->driver && on->facts.word && d->drv->queue_waits_on(*on->drv);
}

// Asks room until the work fits, growing the queues where the driver asks.
// Called with d's submit lock held; releases it while it waits for room or
// grows the queues, so the work's value is taken anew after each wait.
void wait_for_room(rig_device_t *d, std::unique_lock<Mutex> &lock, rig_edge_work_t &w) {
  int grows = 0;
  for (;;) {
    require_live(d);
    w.value = d->submitted.load() + 1;
    if (w.value > kValueMax) {
      d->lose("the timeline passed its last value, 2^47 - 1", false);
      throw_lost(d);
    }
    rig_edge_room_t room = d->drv->room(w);
    if (room == RIG_ROOM) return;
    if (room == RIG_NEVER) throw_invalid(d->name + " takes no such work: its driver runs it in no submission");
    if (room == RIG_GROW) {
      if (grows++ == kGrowTries) throw_no_memory(d, 0);
      lock.unlock();
      std::optional<int64_t> short_bytes = driver_call(d, true, [&] { return d->drv->grow(); });
      if (short_bytes) {
        free_cache_charged_to(d);
        free_cache_charged_to(host());
        if (grows == kGrowTries) throw_no_memory(d, *short_bytes);
      }
      lock.lock();
      continue;
    }
    // No room until the device reaches one more value: wait, holding no lock.
    uint64_t next = d->read_word() + 1;
    lock.unlock();
    d->wait(std::min(next, d->submitted.load()));
    lock.lock();
  }
}

}  // namespace

uint64_t submit_work(rig_device_t *d, const rig_edge_part_t *parts, size_t nparts, const Use *uses, size_t nuses,
                     const rig_point_t *waits, size_t nwaits) {
  require_live(d);
  SubmitScratch &scratch = thread_scratch();
  std::vector<Dependency> &deps = scratch.deps;
  std::vector<rig_edge_wait_t> &queue_waits = scratch.queue_waits;
  deps.clear();
  queue_waits.clear();
  point_dependencies(waits, nwaits, deps);
  for (size_t i = 0; i < nuses; i++) dependencies(uses[i].alloc, uses[i].write, d, deps);

  for (const Dependency &dep : deps) {
    if (dep.device == d) continue;  // device order
    if (waits_on_queue(d, dep)) {
      // The queue waits on the other device's word; its work is committed
      // first so the wait can end.
      dep.device->commit_to(dep.value);
      queue_waits.push_back({reinterpret_cast<const volatile uint64_t *>(dep.device->facts.word), dep.value});
    } else {
      dep.device->wait(dep.value);
    }
  }

  uint64_t v;
  {
    std::unique_lock<Mutex> lock(d->submit_mu);
    rig_edge_work_t w{0, parts, static_cast<uint32_t>(nparts), queue_waits.data(),
                      static_cast<uint32_t>(queue_waits.size())};
    // One mask over room and submit: each mask costs two system calls,
    // more than the rest of a warm submission to a proxy.  None where the
    // driver's queue calls are signal-safe.
    DriverCallMask mask(masks_queue_calls(d));
    wait_for_room(d, lock, w);
    v = w.value;
    d->submitted.store(v, std::memory_order_release);
    try {
      if (d->facts.may_block) d->enter_call();
      struct Leave {
        rig_device_t *d;
        ~Leave() {
          if (d->facts.may_block) d->leave_call();
        }
      } leave{d};
      d->drv->submit(w);
      // A driver that commits every value (k = 1) committed this one: a
      // wait for it calls no commit.
      if (d->facts.commit_every == 1) d->committed.store(v, std::memory_order_release);
    } catch (const std::exception &e) {
      d->lose(e.what(), true);
    }
  }
  if (!queue_waits.empty()) {
    Guard g(d->queue_waits_mu);
    for (const Dependency &dep : deps)
      if (dep.device != d && waits_on_queue(d, dep)) {
        d->queue_waits.push_back({dep.device, dep.value, v});
        dep.device->named.fetch_add(1);
      }
  }
  for (size_t i = 0; i < nuses; i++) add_stamp(uses[i].alloc, d, v, uses[i].write);
  if (d->is_lost()) throw_lost(d);
  return v;
}

}  // namespace rig
