// rig_submission_*, rig_run_*: making a submission (the checks of Valid
// submissions, the queues its parts go on, the layout of a run's blocks),
// taking runs and storing into them, and a submission's release once its
// last work is done.
#include "submission.hpp"

#include "allocation.hpp"
#include "copy.hpp"
#include "registry.hpp"

#include <cstddef>
#include <cstring>
#include <set>
#include <string>

using namespace rig;

namespace rig {

const void *this_thread_token() {
  static RIG_HOT_TLS char token;
  return &token;
}

bool hold_run(rig_run_t *r) {
  const void *me = this_thread_token();
  const void *owner = r->owner.load(std::memory_order_acquire);
  if (owner == me) return true;
  return owner == nullptr && r->owner.compare_exchange_strong(owner, me, std::memory_order_acq_rel);
}

namespace {

void clear_run(rig_run_t *r) {
  const rig_submission_t *s = r->submission;
  // memset of an empty vector's data() would pass NULL: undefined.
  if (!r->grids.empty()) std::memset(r->grids.data(), 0, r->grids.size() * sizeof(LaunchGrid));
  for (size_t k = 0; k < s->blocks.size(); k++) r->fills[k] = s->blocks[k].fill;
  if (!r->params.empty()) std::memset(r->params.data(), 0, r->params.size());
}

}  // namespace

void free_run(rig_run_t *r) {
  clear_run(r);
  rig_submission_t *s = r->submission;
  Guard g(s->runs_mu);
  r->owner.store(nullptr, std::memory_order_release);
  if (!r->listed) {
    r->listed = true;
    s->free_runs.push_back(r);
  }
}

}  // namespace rig

namespace {

constexpr int64_t kRunBytes = (int64_t{1} << 31) - 1;

// The index of d's queue whose name starts with prefix, or -1.
int queue_named(const rig_device_t *d, const char *prefix) {
  for (size_t q = 0; q < d->facts.queues.size(); q++)
    if (d->facts.queues[q].rfind(prefix, 0) == 0) return static_cast<int>(q);
  return -1;
}

// Where a part of kind goes on d (rig.h, rig_part_t), or throws RIG_EINVAL.
uint32_t place(const rig_device_t *d, rig_part_kind_t kind) {
  int compute = queue_named(d, "COMPUTE");
  int copy = d->facts.copy_engine;
  if (d->is_host && kind != RIG_LAUNCH) throw_invalid("the host runs only launches");
  int q = -1;
  switch (kind) {
    case RIG_LAUNCH: q = compute; break;
    case RIG_COPY:
    case RIG_FILL: q = copy >= 0 ? copy : compute; break;
    case RIG_WORDS: q = compute >= 0 ? compute : copy; break;
  }
  if (q < 0) throw_invalid(d->name + " has no queue for a " + (kind == RIG_LAUNCH ? "launch" : "copy, fill or words part"));
  return static_cast<uint32_t>(q);
}

// What make learns of the slots its parts name.
struct Slots {
  std::vector<int> uses;  // by slot: bit 0 ordered, bit 1 unordered
  void name(uint32_t slot, bool unordered) {
    if (slot >= uses.size()) uses.resize(size_t{slot} + 1, 0);
    uses[slot] |= unordered ? 2 : 1;
  }
};

// Checks an operand of a part on d (Valid submissions): a fixed buffer is
// live, not held exclusive, on d (a copy's: reached by d's copy engine)
// and admits Write where the part writes it.
void check_operand(rig_device_t *d, const rig_operand_t &op, bool writes, bool copy_side, bool unordered, Slots &slots,
                   const std::string &what) {
  if (!op.fixed) {
    slots.name(op.slot, unordered);
    return;
  }
  require_buffer(op.fixed, (what + "'s fixed buffer").c_str());
  require_not_exclusive(op.fixed);
  bool on_device = op.fixed->device == d || (copy_side && direct_location(op.fixed, d));
  if (!on_device) throw_invalid(what + "'s fixed buffer is not on " + d->name);
  if (writes && access_of(op.fixed) == RIG_ACCESS_READ) throw_invalid(what + " writes a fixed buffer that admits only Read");
}

// The integer a C caller stored in an enum field: C admits any int there,
// while C++ may not load a value outside the enum's range.
template <class E>
int raw(const E &field) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

// The launch part's spec, checked.
void check_launch(rig_device_t *d, const rig_part_t &p, PartSpec &spec, Slots &slots, const std::string &what) {
  const auto &l = p.u.launch;
  require_handle(l.function, what + "'s function");
  if (!image_live(l.function->image, d))
    throw_invalid(what + "'s function " + l.function->name + " is of an image not live on " + d->name);
  require(l.params >= 0, "a launch's parameter bytes are negative");
  require(l.refs != nullptr || l.ref_count == 0, "a launch's refs are NULL");
  spec.function = l.function;
  spec.params = l.params;
  for (size_t j = 0; j < l.ref_count; j++) {
    const rig_ref_t &ref = l.refs[j];
    std::string ref_what = what + "'s ref " + std::to_string(j);
    int kind = raw(ref.kind);
    if (kind < RIG_REF_READ || kind > RIG_REF_ENTRY) throw_invalid(ref_what + " has no kind");
    if (ref.at < 0 || l.params < 8 || ref.at > l.params - 8)
      throw_invalid(ref_what + " does not lie inside the launch's parameters");
    RefSpec rs{ref.kind, ref.memory, ref.at, false, nullptr};
    if (ref.kind == RIG_REF_ENTRY) {
      require_handle(ref.entry, ref_what + "'s function");
      if (!image_live(ref.entry->image, d)) throw_invalid(ref_what + " names a function of an image not live on " + d->name);
      if (ref.entry->entry.address == 0) throw_invalid(d->name + " places no address of " + ref.entry->name);
      rs.entry = ref.entry;
    } else {
      if (ref.kind == RIG_REF_UNORDERED)
        require(raw(ref.access) == RIG_ACCESS_READ || raw(ref.access) == RIG_ACCESS_READ_WRITE,
                "an unordered ref's access is not valid");
      rs.writes = ref.kind == RIG_REF_WRITE || ref.kind == RIG_REF_READ_WRITE ||
                  (ref.kind == RIG_REF_UNORDERED && ref.access == RIG_ACCESS_READ_WRITE);
      check_operand(d, ref.memory, rs.writes, false, ref.kind == RIG_REF_UNORDERED, slots, ref_what);
    }
    spec.refs.push_back(rs);
  }
}

PartSpec check_part(rig_device_t *d, const rig_part_t &p, size_t index, Slots &slots) {
  std::string what = "part " + std::to_string(index);
  if (raw(p.kind) < RIG_LAUNCH || raw(p.kind) > RIG_WORDS) throw_invalid(what + " has no kind");
  PartSpec spec;
  spec.kind = p.kind;
  spec.queue = place(d, p.kind);
  switch (p.kind) {
    case RIG_LAUNCH: check_launch(d, p, spec, slots, what); break;
    case RIG_COPY:
      check_operand(d, p.u.copy.src, false, true, false, slots, what + "'s source");
      check_operand(d, p.u.copy.dst, true, true, false, slots, what + "'s destination");
      spec.src = p.u.copy.src;
      spec.dst = p.u.copy.dst;
      break;
    case RIG_FILL:
      check_operand(d, p.u.fill.dst, true, false, false, slots, what);
      spec.dst = p.u.fill.dst;
      break;
    case RIG_WORDS:
      require(p.u.words.writes != nullptr || p.u.words.count == 0, "a words part's writes are NULL");
      for (size_t j = 0; j < p.u.words.count; j++) {
        const rig_word_write_t &w = p.u.words.writes[j];
        require(w.offset >= 0, "a word's offset is negative");
        check_operand(d, w.memory, true, false, false, slots, what);
        spec.words.push_back({w.memory, w.offset, w.value});
      }
      break;
  }
  return spec;
}

// The bytes a run counts for a block with params bytes of parameters.
int64_t block_bytes(int64_t params) { return 16 + (params + 15) / 16 * 16; }

void release_submission(void *object) {
  auto *s = static_cast<rig_submission_t *>(object);
  for (rig_buffer_t *b : s->fixed) rig_buffer_unref(b);
  for (rig_image_t *i : s->images) rig_image_unref(i);
  if (s->keep) s->keep(s->keep_context);
  rig_device_t *d = s->device;
  delete s;
  d->holdings.fetch_sub(1);
  if (d->is_lost()) maybe_leave_slot(d);
}

// Checks k is a block of r's submission, a launch's where launch, and that
// [at, at + n) lies inside its parameters; holds r for the calling thread.
void check_store(rig_run_t *r, int64_t k, bool launch, int64_t at = 0, int64_t n = 0) {
  require_handle(r, "the run");
  const rig_submission_t *s = r->submission;
  if (k < 0 || static_cast<size_t>(k) >= s->blocks.size()) throw_invalid("the run has no block " + std::to_string(k));
  const PartSpec &part = s->parts[s->blocks[static_cast<size_t>(k)].part];
  if (launch != (part.kind == RIG_LAUNCH)) throw_invalid(std::string("block ") + std::to_string(k) + " is not a " + (launch ? "launch's" : "fill's"));
  if (at < 0 || n < 0 || at > part.params || n > part.params - at)
    throw_invalid("the bytes stored do not lie inside block " + std::to_string(k) + "'s parameters");
  if (!hold_run(r)) throw_invalid("another thread has taken the run");
}

template <class T>
rig_status_t store(rig_run_t *r, int64_t k, int64_t at, T v) {
  RIG_API_CALL({
    check_store(r, k, true, at, sizeof v);
    std::memcpy(r->params.data() + r->submission->blocks[static_cast<size_t>(k)].params_offset + at, &v, sizeof v);
    return RIG_OK;
  });
}

rig_status_t store_axes(rig_run_t *r, int64_t k, int64_t x, int64_t y, int64_t z, bool groups) {
  RIG_API_CALL({
    check_store(r, k, true);
    require(x >= 0 && y >= 0 && z >= 0, "an axis is negative");
    LaunchGrid &g = r->grids[static_cast<size_t>(k)];
    uint64_t *axes = groups ? g.groups : g.threads;
    axes[0] = static_cast<uint64_t>(x);
    axes[1] = static_cast<uint64_t>(y);
    axes[2] = static_cast<uint64_t>(z);
    return RIG_OK;
  });
}

}  // namespace

extern "C" {

rig_status_t rig_submission_make(rig_device_t *d, const rig_part_t *parts, size_t n,
                                 const rig_submission_options_t *opts, rig_submission_t **out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require_device(d);
    require(parts != nullptr || n == 0, "parts is NULL");
    if (opts)
      require(opts->size >= offsetof(rig_submission_options_t, keep_context) + sizeof(opts->keep_context),
              "opts->size is smaller than the options rig knows");
    if (d->is_io()) throw_invalid(d->name + " is an io device: it runs no submitted work");
    require_live(d);

    auto s = std::make_unique<rig_submission_t>();
    s->device = d;
    Slots slots;
    int64_t run_bytes = 0;
    for (size_t i = 0; i < n; i++) {
      PartSpec spec = check_part(d, parts[i], i, slots);
      if (spec.kind == RIG_LAUNCH || spec.kind == RIG_FILL) {
        // Counted without overflow: each block counts at most 2^31 + 32.
        int64_t bytes = block_bytes(std::min<int64_t>(spec.params, kRunBytes));
        if (spec.params > kRunBytes || run_bytes > kRunBytes - bytes)
          throw_invalid("the launches and fills do not fit a run of 2^31 - 1 bytes");
        run_bytes += bytes;
        spec.block = static_cast<int64_t>(s->blocks.size());
        s->blocks.push_back({i, s->params_bytes, spec.kind == RIG_FILL ? parts[i].u.fill.value : uint8_t{0}});
        s->params_bytes += static_cast<size_t>(spec.params);
      }
      s->parts.push_back(std::move(spec));
    }
    for (size_t slot = 0; slot < slots.uses.size(); slot++) {
      if (slots.uses[slot] == 0) throw_invalid("slot " + std::to_string(slot) + " is below the highest slot and no part names it");
      if (slots.uses[slot] == 3) throw_invalid("slot " + std::to_string(slot) + " is named by an unordered ref and by an ordered use");
    }
    s->slots = static_cast<uint32_t>(slots.uses.size());

    // Hold what the submission uses until its last work is done.
    std::set<rig_image_t *> images;
    for (const PartSpec &p : s->parts) {
      if (p.function) images.insert(p.function->image);
      for (const RefSpec &ref : p.refs)
        if (ref.entry) images.insert(ref.entry->image);
    }
    for (rig_image_t *i : images) s->images.push_back(rig_image_ref(i));
    // A prepared submission holds its fixed memory (Claim.hold), so that
    // no free or unborrow takes it from under the submission (BUF-73).
    auto hold_fixed = [&](const rig_operand_t &op) {
      if (!op.fixed) return;
      take_hold(op.fixed);
      s->fixed.push_back(rig_buffer_ref(op.fixed));
    };
    try {
      for (const PartSpec &p : s->parts) {
        for (const RefSpec &ref : p.refs)
          if (ref.kind != RIG_REF_ENTRY) hold_fixed(ref.memory);
        if (p.kind == RIG_COPY) hold_fixed(p.src);
        if (p.kind == RIG_COPY || p.kind == RIG_FILL) hold_fixed(p.dst);
        for (const WordSpec &w : p.words) hold_fixed(w.memory);
      }
    } catch (...) {
      for (rig_buffer_t *b : s->fixed) {
        end_hold(b);
        rig_buffer_unref(b);
      }
      for (rig_image_t *i : s->images) rig_image_unref(i);
      throw;
    }
    if (opts) {
      s->keep = opts->keep;
      s->keep_context = opts->keep_context;
    }
    d->holdings.fetch_add(1);
    *out = s.release();
    return RIG_OK;
  });
}

rig_submission_t *rig_submission_ref(rig_submission_t *s) {
  if (!live_handle(s)) return nullptr;
  s->refs.fetch_add(1, std::memory_order_relaxed);
  return s;
}

void rig_submission_unref(rig_submission_t *s) {
  if (!live_handle(s) || s->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The program let go of it: its holds end now (RECL-22).
  for (rig_buffer_t *b : s->fixed) end_hold(b);
  // Its memory, images and keep return once its last work is done; on a
  // lost device, once the device has stopped (STOP-03).
  retire(s->device, s->last_value.load(std::memory_order_acquire), release_submission, s);
}

size_t rig_submission_slots(const rig_submission_t *s) { return live_handle(s) ? s->slots : 0; }

int64_t rig_submission_block(const rig_submission_t *s, size_t part) {
  if (!live_handle(s) || part >= s->parts.size()) return -1;
  return s->parts[part].block;
}

rig_status_t rig_submission_take(rig_submission_t *s, rig_run_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require_handle(s, "the submission");
    const void *me = this_thread_token();
    {
      Guard g(s->runs_mu);
      // A run that holds no bytes is never taken (SUB-36): every take of
      // such a submission gives its one run.
      if (s->blocks.empty() && !s->runs.empty()) {
        *out = s->runs.front().get();
        return RIG_OK;
      }
      while (!s->free_runs.empty()) {
        rig_run_t *r = s->free_runs.back();
        s->free_runs.pop_back();
        r->listed = false;
        const void *none = nullptr;
        // A free run may have been held meanwhile by a store or a submit
        // of another thread: it returns to the list when that one frees it.
        if (r->owner.compare_exchange_strong(none, me, std::memory_order_acq_rel)) {
          *out = r;
          return RIG_OK;
        }
      }
    }
    auto r = std::make_unique<rig_run_t>();
    r->submission = s;
    r->grids.resize(s->blocks.size());
    r->fills.resize(s->blocks.size());
    r->params.resize(s->params_bytes);
    clear_run(r.get());
    if (!s->blocks.empty()) r->owner.store(me, std::memory_order_release);
    Guard g(s->runs_mu);
    s->runs.push_back(std::move(r));
    *out = s->runs.back().get();
    return RIG_OK;
  });
}

rig_submission_t *rig_run_submission(const rig_run_t *r) { return live_handle(r) ? r->submission : nullptr; }

rig_status_t rig_run_groups(rig_run_t *r, int64_t k, int64_t x, int64_t y, int64_t z) {
  return store_axes(r, k, x, y, z, true);
}
rig_status_t rig_run_threads(rig_run_t *r, int64_t k, int64_t x, int64_t y, int64_t z) {
  return store_axes(r, k, x, y, z, false);
}
rig_status_t rig_run_shared(rig_run_t *r, int64_t k, int64_t bytes) {
  RIG_API_CALL({
    check_store(r, k, true);
    require(bytes >= 0, "the shared bytes are negative");
    r->grids[static_cast<size_t>(k)].shared = static_cast<uint64_t>(bytes);
    return RIG_OK;
  });
}
rig_status_t rig_run_int8(rig_run_t *r, int64_t k, int64_t at, int8_t v) { return store(r, k, at, v); }
rig_status_t rig_run_int16(rig_run_t *r, int64_t k, int64_t at, int16_t v) { return store(r, k, at, v); }
rig_status_t rig_run_int32(rig_run_t *r, int64_t k, int64_t at, int32_t v) { return store(r, k, at, v); }
rig_status_t rig_run_int64(rig_run_t *r, int64_t k, int64_t at, int64_t v) { return store(r, k, at, v); }
rig_status_t rig_run_float32(rig_run_t *r, int64_t k, int64_t at, float v) { return store(r, k, at, v); }
rig_status_t rig_run_float64(rig_run_t *r, int64_t k, int64_t at, double v) { return store(r, k, at, v); }
rig_status_t rig_run_bytes(rig_run_t *r, int64_t k, int64_t at, const void *src, int64_t n) {
  RIG_API_CALL({
    require(src != nullptr || n == 0, "src is NULL");
    check_store(r, k, true, at, n);
    if (n > 0)
      std::memcpy(r->params.data() + r->submission->blocks[static_cast<size_t>(k)].params_offset + at, src,
                  static_cast<size_t>(n));
    return RIG_OK;
  });
}
rig_status_t rig_run_fill(rig_run_t *r, int64_t k, uint8_t value) {
  RIG_API_CALL({
    check_store(r, k, false);
    r->fills[static_cast<size_t>(k)] = value;
    return RIG_OK;
  });
}

}  // extern "C"
