// rig_submit: one submit of a run (rig.txt, Submitting): the checks of a
// valid submit, the parts with their refs patched into the parameters and
// their order inside the submission, then the work on the device's
// timeline, or on the host's cores before submit returns.
#include "submission.hpp"

#include "allocation.hpp"
#include "copy.hpp"
#include "probes.hpp"
#include "registry.hpp"
#include "work.hpp"


#include <cstring>
#include <string>

using namespace rig;

namespace {

constexpr uint64_t kMaxThreads = uint64_t{1} << 62;

// A use of memory by one part of this submit.
struct PartUse {
  rig_buffer_t *buffer;
  bool writes;
  bool unordered;
};

// The calling thread's scratch, kept between submits so that a submit
// allocates nothing once it has grown.
struct Scratch {
  std::vector<rig_buffer_t *> slot_buffers;
  std::vector<PartUse> uses;
  std::vector<size_t> uses_of_part;  // the first use of each part; one more at the end
  std::vector<rig_buffer_t *> claimed;
  std::vector<Use> ordered;
  std::vector<rig_edge_part_t> edge_parts;
  std::vector<uint32_t> after;
  std::vector<std::pair<size_t, size_t>> after_of_part;  // first, count in after
  std::vector<rig_edge_word_write_t> words;
  std::vector<size_t> words_of_part;                     // first in words
  std::vector<unsigned char> params;
  std::vector<size_t> params_of_part;
  std::vector<rig_edge_ref_t> refs;       // a device's whose refs go by location
  std::vector<size_t> refs_of_part;       // first in refs
  std::vector<Dependency> deps;
};

// The thread's scratch; a submit made by code a host launch runs (a
// submit inside a submit) gets scratch of its own.
class ScratchLease {
 public:
  ScratchLease() {
    if (depth_++ == 0) {
      s_ = kept_ ? kept_ : (kept_ = new_kept());
    } else {
      own_ = std::make_unique<Scratch>();
      s_ = own_.get();
    }
  }
  ~ScratchLease() { depth_--; }
  ScratchLease(const ScratchLease &) = delete;
  ScratchLease &operator=(const ScratchLease &) = delete;
  Scratch &get() { return *s_; }

 private:
  // The thread's kept scratch, freed when the thread exits.
  static Scratch *new_kept() {
    thread_local std::unique_ptr<Scratch> owner;
    owner = std::make_unique<Scratch>();
    return owner.get();
  }
  static RIG_HOT_TLS int depth_;
  static RIG_HOT_TLS Scratch *kept_;
  Scratch *s_;
  std::unique_ptr<Scratch> own_;
};
RIG_HOT_TLS int ScratchLease::depth_ = 0;
RIG_HOT_TLS Scratch *ScratchLease::kept_ = nullptr;

// Holds the run for this submit, and frees it however the submit ends.  A
// run that holds no bytes is used without taking it (SUB-36).
class RunHold {
 public:
  explicit RunHold(rig_run_t *r) : r_(r->submission->blocks.empty() ? nullptr : r) {
    if (!r_) return;
    if (!hold_run(r)) throw_invalid("another thread has taken the run");
    if (r->submitting.exchange(true, std::memory_order_acq_rel)) {
      r_ = nullptr;  // the other submit frees it
      throw_invalid("another submit of the run is under way");
    }
  }
  ~RunHold() {
    if (!r_) return;
    r_->submitting.store(false, std::memory_order_release);
    free_run(r_);
  }
  RunHold(const RunHold &) = delete;
  RunHold &operator=(const RunHold &) = delete;

 private:
  rig_run_t *r_;
};

// Ends the read claims this submit took, however it ends.
struct ClaimsHeld {
  std::vector<rig_buffer_t *> &claimed;
  ~ClaimsHeld() {
    for (rig_buffer_t *b : claimed) release_read(b);
    claimed.clear();
  }
};

rig_buffer_t *buffer_of(const rig_operand_t &op, const Scratch &sc) {
  return op.fixed ? op.fixed : sc.slot_buffers[op.slot];
}

std::string slot_name(const rig_operand_t &op) {
  return op.fixed ? std::string("a fixed buffer") : "slot " + std::to_string(op.slot) + "'s buffer";
}

// Checks b for a use by the work on d (Valid submissions): live, on d (a
// copy's side: reached by d's copy engine), admitting Write where the use
// writes; records the use and takes a read claim on b until submit ends.
void use(rig_device_t *d, const rig_operand_t &op, bool writes, bool unordered, bool copy_side, Scratch &sc) {
  rig_buffer_t *b = buffer_of(op, sc);
  std::string what = slot_name(op);
  require_buffer(b, what.c_str());
  if (b->device != d && !(copy_side && direct_location(b, d))) throw_invalid(what + " is not on " + d->name);
  if (writes && access_of(b) == RIG_ACCESS_READ) throw_invalid("the work writes " + what + ", which admits only Read");
  claim_read(b);
  sc.claimed.push_back(b);
  sc.uses.push_back({b, writes, unordered});
}

// Checks a launch's grid on d.
void check_grid(rig_device_t *d, const LaunchGrid &g, const rig_function_t *f) {
  uint64_t groups = 1, threads = 1;
  bool over = false;
  for (int a = 0; a < 3; a++) {
    if (g.groups[a] == 0 || g.threads[a] == 0) throw_invalid("a launch has an axis of zero groups or threads");
    over |= __builtin_mul_overflow(groups, g.groups[a], &groups);
    over |= __builtin_mul_overflow(threads, g.threads[a], &threads);
  }
  uint64_t total = 0;
  over |= __builtin_mul_overflow(groups, threads, &total);
  if (over || total > kMaxThreads) throw_invalid("a launch has more than 2^62 threads");
  if (static_cast<int64_t>(threads) > f->entry.max_threads)
    throw_invalid("a group of " + std::to_string(threads) + " threads is more than " + f->name + " admits");
  if (d->is_host && g.shared != 0) throw_invalid("a host launch has no shared memory");
}

// Phase one: every check of a valid submit, the uses of each part, and the
// read claims that keep holds from taking the memory meanwhile.
void check_submit(const rig_submission_t *s, const rig_run_t *r, Scratch &sc) {
  rig_device_t *d = s->device;
  sc.uses.clear();
  sc.uses_of_part.clear();
  for (const PartSpec &p : s->parts) {
    sc.uses_of_part.push_back(sc.uses.size());
    switch (p.kind) {
      case RIG_LAUNCH:
        if (!image_live(p.function->image, d)) throw_invalid("the image of " + p.function->name + " is not live");
        check_grid(d, r->grids[static_cast<size_t>(p.block)], p.function);
        for (const RefSpec &ref : p.refs) {
          if (ref.kind == RIG_REF_ENTRY) continue;
          use(d, ref.memory, ref.writes, ref.kind == RIG_REF_UNORDERED, false, sc);
          rig_buffer_t *b = sc.uses.back().buffer;
          if (b->length > 0 && !location_of(b).address && !d->facts.launch_refs_by_location)
            throw_invalid("a ref names " + slot_name(ref.memory) + ", memory only a handle reaches");
        }
        break;
      case RIG_COPY: {
        use(d, p.src, false, false, true, sc);
        use(d, p.dst, true, false, true, sc);
        rig_buffer_t *src = buffer_of(p.src, sc), *dst = buffer_of(p.dst, sc);
        if (src->length != dst->length)
          throw_invalid("a copy's two buffers differ in length: " + std::to_string(src->length) + " bytes into " +
                        std::to_string(dst->length));
        if (rig_buffer_share_byte(src, dst)) throw_invalid("a copy's two buffers share a byte");
        break;
      }
      case RIG_FILL: use(d, p.dst, true, false, false, sc); break;
      case RIG_WORDS:
        for (const WordSpec &w : p.words) {
          use(d, w.memory, true, false, false, sc);
          if (w.offset > sc.uses.back().buffer->length - 8) throw_invalid("a word lies outside its buffer");
        }
        break;
    }
  }
  sc.uses_of_part.push_back(sc.uses.size());
}

// What the driver of a device whose refs go by location patches itself:
// the ref of u (or of the function entry), its 8 bytes left zero.
rig_edge_ref_t ref_by_location(const RefSpec &ref, const PartUse *u) {
  rig_edge_ref_t e{};
  e.at = static_cast<uint64_t>(ref.at);
  e.kind = static_cast<uint32_t>(ref.kind);
  if (ref.kind == RIG_REF_ENTRY) {
    e.entry = ref.entry->entry.handle;
    return e;
  }
  e.memory = location_of(u->buffer);
  e.bytes = static_cast<uint64_t>(u->buffer->length);
  e.access = u->writes ? RIG_ACCESS_READ_WRITE : RIG_ACCESS_READ;
  return e;
}

// The parameters of each launch with its refs patched in, in sc.params;
// for a device whose refs go by location, its refs in sc.refs instead.
void patch_params(const rig_submission_t *s, const rig_run_t *r, Scratch &sc) {
  bool by_location = s->device->facts.launch_refs_by_location;
  sc.params.resize(s->params_bytes);
  sc.params_of_part.assign(s->parts.size(), 0);
  sc.refs.clear();
  sc.refs_of_part.assign(s->parts.size(), 0);
  for (size_t i = 0; i < s->parts.size(); i++) {
    const PartSpec &p = s->parts[i];
    if (p.kind != RIG_LAUNCH) continue;
    size_t offset = s->blocks[static_cast<size_t>(p.block)].params_offset;
    sc.params_of_part[i] = offset;
    unsigned char *bytes = sc.params.data() + offset;
    if (p.params > 0) std::memcpy(bytes, r->params.data() + offset, static_cast<size_t>(p.params));
    size_t u = sc.uses_of_part[i];
    sc.refs_of_part[i] = sc.refs.size();
    for (const RefSpec &ref : p.refs) {
      if (by_location) {
        sc.refs.push_back(ref_by_location(ref, ref.kind == RIG_REF_ENTRY ? nullptr : &sc.uses[u++]));
        continue;
      }
      uint64_t address = ref.kind == RIG_REF_ENTRY
                             ? ref.entry->entry.address
                             : reinterpret_cast<uint64_t>(location_of(sc.uses[u++].buffer).address);
      std::memcpy(bytes + ref.at, &address, sizeof address);
    }
  }
}

bool may_share(const Scratch &sc, size_t i, size_t j) {
  for (size_t a = sc.uses_of_part[i]; a < sc.uses_of_part[i + 1]; a++)
    for (size_t b = sc.uses_of_part[j]; b < sc.uses_of_part[j + 1]; b++) {
      const PartUse &x = sc.uses[a], &y = sc.uses[b];
      if (x.unordered || y.unordered || !(x.writes || y.writes)) continue;
      if (rig_buffer_overlaps(x.buffer, y.buffer)) return true;
    }
  return false;
}

// The host runs the launches in order on its cores, after the points its
// memory and waits order, then takes its next value for the work done.
uint64_t run_on_host(const rig_submission_t *s, const rig_run_t *r, const rig_point_t *waits, size_t nwaits,
                     Scratch &sc) {
  sc.deps.clear();
  point_dependencies(waits, nwaits, sc.deps);
  for (const PartUse &u : sc.uses)
    if (!u.unordered) dependencies(u.buffer->alloc, u.writes, nullptr, sc.deps);
  wait_all(sc.deps);
  for (size_t i = 0; i < s->parts.size(); i++) {
    const PartSpec &p = s->parts[i];
    const LaunchGrid &g = r->grids[static_cast<size_t>(p.block)];
    auto f = reinterpret_cast<HostFunction>(const_cast<void *>(p.function->entry.handle));
    s->device->drv->launch_now(f, sc.params.data() + sc.params_of_part[i], g.groups[0] * g.groups[1] * g.groups[2],
                               g.threads[0] * g.threads[1] * g.threads[2]);
  }
  return host_value();
}

rig_edge_part_t edge_part(const rig_submission_t *s, const rig_run_t *r, size_t i, Scratch &sc) {
  const PartSpec &p = s->parts[i];
  rig_edge_part_t e{};
  e.queue = p.queue;
  size_t u = sc.uses_of_part[i];
  switch (p.kind) {
    case RIG_LAUNCH: {
      const LaunchGrid &g = r->grids[static_cast<size_t>(p.block)];
      e.kind = RIG_PART_LAUNCH;
      e.u.launch = {p.function->entry.handle,
                    sc.params.data() + sc.params_of_part[i],
                    static_cast<uint64_t>(p.params),
                    {g.groups[0], g.groups[1], g.groups[2]},
                    {g.threads[0], g.threads[1], g.threads[2]},
                    g.shared,
                    nullptr,
                    0};
      // Pointed at once every part's refs are in place.
      if (s->device->facts.launch_refs_by_location) e.u.launch.ref_count = static_cast<uint32_t>(p.refs.size());
      break;
    }
    case RIG_COPY: {
      rig_buffer_t *src = sc.uses[u].buffer, *dst = sc.uses[u + 1].buffer;
      e.kind = RIG_PART_COPY;
      auto n = static_cast<uint64_t>(src->length);
      e.u.copy = {*direct_location(src, s->device), *direct_location(dst, s->device), n, 1, n, n};
      break;
    }
    case RIG_FILL: {
      rig_buffer_t *b = sc.uses[u].buffer;
      e.kind = RIG_PART_FILL;
      e.u.fill = {location_of(b), static_cast<uint64_t>(b->length), r->fills[static_cast<size_t>(p.block)]};
      break;
    }
    case RIG_WORDS: {
      e.kind = RIG_PART_WORDS;
      sc.words_of_part[i] = sc.words.size();
      for (size_t w = 0; w < p.words.size(); w++)
        sc.words.push_back({advance(location_of(sc.uses[u + w].buffer), p.words[w].offset), p.words[w].value});
      // Pointed at once every part's words are in place (the vector may grow).
      e.u.words = {nullptr, static_cast<uint32_t>(p.words.size())};
      break;
    }
  }
  return e;
}

// The device runs the parts on its queues: each after the earlier parts on
// other queues that may share memory with it where one writes, a words
// part after every earlier part (Order, rule 2).
uint64_t run_on_device(const rig_submission_t *s, const rig_run_t *r, const rig_point_t *waits, size_t nwaits,
                       Scratch &sc) {
  size_t n = s->parts.size();
  sc.edge_parts.clear();
  sc.words.clear();
  sc.words_of_part.assign(n, 0);
  sc.after.clear();
  sc.after_of_part.clear();
  for (size_t j = 0; j < n; j++) {
    sc.edge_parts.push_back(edge_part(s, r, j, sc));
    size_t first = sc.after.size();
    for (size_t i = 0; i < j; i++)
      if (s->parts[j].kind == RIG_WORDS || (s->parts[i].queue != s->parts[j].queue && may_share(sc, i, j)))
        sc.after.push_back(static_cast<uint32_t>(i));
    sc.after_of_part.push_back({first, sc.after.size() - first});
  }
  // The vectors are whole now: point the parts into them.
  for (size_t j = 0; j < n; j++) {
    rig_edge_part_t &e = sc.edge_parts[j];
    auto [first, count] = sc.after_of_part[j];
    e.after = count ? sc.after.data() + first : nullptr;
    e.after_count = static_cast<uint32_t>(count);
    if (e.kind == RIG_PART_WORDS) e.u.words.writes = sc.words.data() + sc.words_of_part[j];
    if (e.kind == RIG_PART_LAUNCH && e.u.launch.ref_count) e.u.launch.refs = sc.refs.data() + sc.refs_of_part[j];
  }
  sc.ordered.clear();
  for (const PartUse &u : sc.uses)
    if (!u.unordered) sc.ordered.push_back({u.buffer->alloc, u.writes});
  return submit_work(s->device, sc.edge_parts.data(), n, sc.ordered.data(), sc.ordered.size(), waits, nwaits);
}

// The probes of a submit that ran as value v: rig:launch for each launch,
// then rig:submit.
void probe_submit(const rig_submission_t *s, const rig_run_t *r, uint64_t v) {
  for (const PartSpec &p : s->parts) {
    if (p.kind != RIG_LAUNCH) continue;
    const LaunchGrid &g = r->grids[static_cast<size_t>(p.block)];
    uint64_t threads = g.groups[0] * g.groups[1] * g.groups[2] * g.threads[0] * g.threads[1] * g.threads[2];
    RIG_PROBE(launch, s->device->name.c_str(), p.function->name.c_str(), threads);
  }
  RIG_PROBE(submit, s->device->name.c_str(), v, s->parts.size());
}

}  // namespace

extern "C" {

rig_status_t rig_submit(rig_run_t *r, rig_buffer_t *const *buffers, size_t nbuffers, const rig_point_t *waits,
                        size_t nwaits, rig_point_t *out) {
  RIG_API_CALL({
    require_handle(r, "the run");
    RunHold hold(r);
    refuse_inside_lock();
    rig_submission_t *s = r->submission;
    rig_device_t *d = s->device;
    if (nbuffers != s->slots)
      throw_invalid("the submit passes " + std::to_string(nbuffers) + " buffers for " + std::to_string(s->slots) +
                    " slots");
    require(buffers != nullptr || nbuffers == 0, "buffers is NULL");
    require(waits != nullptr || nwaits == 0, "waits is NULL");
    ScratchLease lease;
    Scratch &sc = lease.get();
    sc.slot_buffers.assign(buffers, buffers + nbuffers);  // each element read once
    ClaimsHeld claims{sc.claimed};
    check_submit(s, r, sc);
    patch_params(s, r, sc);
    uint64_t v = d->is_host ? run_on_host(s, r, waits, nwaits, sc) : run_on_device(s, r, waits, nwaits, sc);
    for (const PartUse &u : sc.uses) {
      if (u.unordered)
        add_unordered(u.buffer->alloc, d, v);
      else if (d->is_host)
        add_stamp(u.buffer->alloc, d, v, u.writes);
    }
    uint64_t last = s->last_value.load(std::memory_order_relaxed);
    while (last < v && !s->last_value.compare_exchange_weak(last, v, std::memory_order_acq_rel)) {
    }
    probe_submit(s, r, v);
    if (out) *out = rig_point_make(d, v);
    return RIG_OK;
  });
}

}  // extern "C"
