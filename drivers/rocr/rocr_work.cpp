// The work of a value on an AMD GPU: room's check and submit's encoding of
// the parts into AQL packets and copy commands (rocr_device.hpp says how).
// One walk of the parts (place) serves both: room runs it with a counter,
// submit with a writer.
#include "rocr_device.hpp"

#include <algorithm>
#include <cstring>

namespace rig::rocr {
namespace {

// A barrier's completion: the timeline, which the value's last packet
// decrements; or none.
constexpr int64_t kTimeline = -2, kNone = -1;

bool on_aql(const rig_edge_part_t &p) { return p.kind == RIG_PART_LAUNCH; }

// Whether a part of the copy lane places any command.
bool places_commands(const rig_edge_part_t &p) {
  switch (p.kind) {
    case RIG_PART_COPY:
      return p.u.copy.width > 0 && p.u.copy.rows > 0;
    case RIG_PART_FILL:
      return p.u.fill.bytes > 0;
    case RIG_PART_WORDS:
      return p.u.words.count > 0;
    default:
      return false;
  }
}

Frontier join(Frontier a, Frontier b) { return {std::max(a.aql, b.aql), std::max(a.copies, b.copies)}; }

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// A launch's kernel arguments: its parameters, then zeros up to the
// kernel's segment size, so that arguments the compiler adds (hidden ones)
// read as zeros.
uint64_t kernarg_bytes(const Kernel &k, const rig_edge_launch_t &l) {
  return round_up(std::max<uint64_t>({l.param_bytes, k.kernarg_bytes, 16}), 16);
}
uint64_t kernarg_alignment(const Kernel &k) { return std::clamp<uint64_t>(k.kernarg_align, 16, 4096); }

// Why no value holds the launch l, or nullptr.
const char *launch_misfit(const Engine &e, const rig_edge_launch_t &l) {
  if (!l.entry) return "a launch names no function";
  const Kernel &k = *static_cast<const Kernel *>(l.entry);
  uint64_t threads = 1;
  for (int axis = 0; axis < 3; axis++) {
    if (l.threads[axis] < 1 || l.groups[axis] < 1) return "a launch has an empty axis";
    if (l.threads[axis] > UINT16_MAX) return "a launch's group is wider than an AQL packet states";
    if (l.groups[axis] > UINT32_MAX / l.threads[axis])
      return "a launch's grid has more than 2^32 - 1 threads on an axis";
    threads *= l.threads[axis];
  }
  if (threads > e.max_group_threads) return "a launch's group has more threads than the GPU runs in one";
  if (l.shared_bytes > UINT32_MAX - k.group_bytes)
    return "a launch's group needs more group memory than a packet states";
  if (e.gpu.group_bytes > 0 && l.shared_bytes > e.gpu.group_bytes - std::min(k.group_bytes, e.gpu.group_bytes))
    return "a launch's group needs more group memory than the GPU has";
  return nullptr;
}

// The commands of a copy-lane part, the first waiting for first and
// launch; returns the signal of its last.
template <class Out>
int64_t place_commands(Engine &e, const rig_edge_part_t &p, int64_t first, int64_t launch, Out &out) {
  switch (p.kind) {
    case RIG_PART_COPY: {
      const rig_edge_copy_t &c = p.u.copy;
      auto *dst = static_cast<char *>(c.dst.address);
      auto *src = static_cast<const char *>(c.src.address);
      if (!dst || !src) return out.refuse("a copy names memory without an address"), kNone;
      if (c.rows == 1 || (c.src_pitch == c.width && c.dst_pitch == c.width)) {
        int64_t s = out.signal(1, SignalRole::Copy);
        out.copy(dst, src, c.width * c.rows, first, launch, s);
        return s;
      }
      // Rows of a box share no byte: they run at once, and the signal,
      // which each decrements, reaches zero once all are done.
      int64_t s = out.signal(static_cast<int64_t>(c.rows), SignalRole::Copy);
      for (uint64_t r = 0; r < c.rows; r++)
        out.copy(dst + r * c.dst_pitch, src + r * c.src_pitch, c.width, first, launch, s);
      return s;
    }
    case RIG_PART_FILL: {
      const rig_edge_fill_t &f = p.u.fill;
      auto *dst = static_cast<char *>(f.dst.address);
      if (!dst) return out.refuse("a fill names memory without an address"), kNone;
      uint64_t done = std::min(f.bytes, kPatternBytes);
      int64_t s = out.signal(1, SignalRole::Copy);
      out.copy(dst, e.patterns + f.value * kPatternBytes, done, first, launch, s);
      while (done < f.bytes) {
        uint64_t n = std::min(done, f.bytes - done);
        int64_t next = out.signal(1, SignalRole::Copy);
        out.copy(dst + done, dst, n, s, kNone, next);
        s = next;
        done += n;
      }
      return s;
    }
    case RIG_PART_WORDS: {
      int64_t s = kNone;
      for (uint32_t k = 0; k < p.u.words.count; k++) {
        const rig_edge_word_write_t &word = p.u.words.writes[k];
        if (!word.dst.address) return out.refuse("a words part names memory without an address"), kNone;
        int64_t next = out.signal(1, SignalRole::Copy);
        out.copy(word.dst.address, out.word(word.value), 8, k == 0 ? first : s, k == 0 ? launch : kNone, next);
        s = next;
      }
      return s;
    }
    default:
      return out.refuse("a part of a kind the device does not run"), kNone;
  }
}

// Walks the parts of w in order and places each on its lane, asking out
// for each signal, AQL packet, copy command and word's value.  Within a
// value, the copy lane's commands each wait for the one before (the first
// for the value's gate), and the AQL packets each wait for every packet
// before (their barrier bit); a part also waits for the last command of
// the other lane that a part it follows placed.
template <class Out>
void place(Engine &e, const rig_edge_work_t &w, Out &out) {
  bool any_commands = false;
  for (uint32_t i = 0; i < w.part_count; i++) {
    if (w.parts[i].queue > 1) return out.refuse("a part names a queue the device does not have");
    any_commands = any_commands || (!on_aql(w.parts[i]) && places_commands(w.parts[i]));
  }
  // The gate completes once every earlier value's work has.
  int64_t gate = kNone;
  if (any_commands) {
    gate = out.signal(1, SignalRole::Gate);
    out.barrier(kNone, gate);
  }
  e.frontiers.assign(w.part_count, Frontier{});
  Frontier last_on_queue[2];
  Frontier every_part;           // done once every part so far is
  int64_t aql_waited = kNone;    // the last copy command an AQL packet waited for
  int64_t copies_waited = gate;  // the last AQL packet the copy lane waited for
  int64_t last_command = kNone;
  for (uint32_t i = 0; i < w.part_count; i++) {
    const rig_edge_part_t &p = w.parts[i];
    // A words part follows every earlier part (Order); any part follows
    // the parts before it on its queue and those its after list names.
    Frontier follows = p.kind == RIG_PART_WORDS ? every_part : last_on_queue[p.queue];
    for (uint32_t k = 0; k < p.after_count; k++)
      if (p.after[k] < i) follows = join(follows, e.frontiers[p.after[k]]);
    Frontier done = follows;
    if (on_aql(p)) {
      if (follows.copies > aql_waited) {
        out.barrier(follows.copies, kNone);
        aql_waited = follows.copies;
      }
      done.aql = out.signal(1, SignalRole::Gate);
      out.dispatch(p.u.launch, done.aql);
    } else if (places_commands(p)) {
      int64_t first = last_command >= 0 ? last_command : gate;
      int64_t launch = follows.aql > copies_waited ? follows.aql : kNone;
      copies_waited = std::max(copies_waited, launch);
      last_command = place_commands(e, p, first, launch, out);
      done.copies = last_command;
    }
    e.frontiers[i] = done;
    last_on_queue[p.queue] = done;
    every_part = join(every_part, done);
  }
  out.barrier(last_command > aql_waited ? last_command : kNone, kTimeline);
}

// room's walk: what a value takes of each ring, now and at all.
struct Counter {
  Engine &e;
  ByteRing now, empty;
  uint64_t signals = 0, packets = 0, commands = 0;
  bool fits_now = true, fits_empty = true;
  const char *refused = nullptr;

  explicit Counter(Engine &engine) : e(engine), now(engine.host_ring), empty(engine.host_ring.empty()) {}
  int64_t signal(int64_t, SignalRole) { return static_cast<int64_t>(e.signal_ring.head() + signals++); }
  void barrier(int64_t, int64_t) { packets++; }
  void dispatch(const rig_edge_launch_t &l, int64_t) {
    packets++;
    if (const char *why = launch_misfit(e, l)) return refuse(why);
    const Kernel &k = *static_cast<const Kernel *>(l.entry);
    host(kernarg_bytes(k, l), kernarg_alignment(k));
  }
  void copy(void *, const void *, uint64_t, int64_t, int64_t, int64_t) { commands++; }
  const void *word(uint64_t) {
    host(8, 8);
    return e.host_memory;
  }
  void refuse(const char *why) {
    if (!refused) refused = why;
  }
  void host(uint64_t n, uint64_t align) {
    fits_now = fits_now && now.take(n, align);
    fits_empty = fits_empty && empty.take(n, align);
  }
};

// submit's walk: writes the value's AQL packets into the queue from its
// write index on and records its copy commands.
struct Writer {
  Engine &e;
  uint64_t first_packet, packets = 0;

  hsa_signal_t at(int64_t position) const {
    if (position == kTimeline) return e.timeline;
    if (position < 0) return hsa_signal_t{0};
    return e.signals[static_cast<uint64_t>(position) % e.signals.size()];
  }
  void *next_slot() {
    uint64_t index = first_packet + packets++;
    return static_cast<char *>(e.queue->base_address) + (index & (e.queue->size - 1)) * 64;
  }
  // Publishes a packet whose body is written: its first 32 bits last.
  static void publish(void *slot, uint16_t type, uint16_t setup) {
    uint32_t header = (type << HSA_PACKET_HEADER_TYPE) | (1u << HSA_PACKET_HEADER_BARRIER) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    __atomic_store_n(static_cast<uint32_t *>(slot), header | (uint32_t{setup} << 16), __ATOMIC_RELEASE);
  }

  int64_t signal(int64_t initial, SignalRole role) {
    uint64_t position = *e.signal_ring.take();  // room found it free
    e.roles[position % e.roles.size()] = role;
    e.api.hsa_signal_store_screlease(at(static_cast<int64_t>(position)), initial);
    return static_cast<int64_t>(position);
  }
  void barrier(int64_t dep, int64_t completion) {
    auto *p = static_cast<hsa_barrier_and_packet_t *>(next_slot());
    p->reserved1 = 0;
    for (hsa_signal_t &s : p->dep_signal) s.handle = 0;
    p->dep_signal[0] = at(dep);
    p->reserved2 = 0;
    p->completion_signal = at(completion);
    publish(p, HSA_PACKET_TYPE_BARRIER_AND, 0);
  }
  void dispatch(const rig_edge_launch_t &l, int64_t completion) {
    const Kernel &k = *static_cast<const Kernel *>(l.entry);
    uint64_t bytes = kernarg_bytes(k, l);
    char *args = e.host_memory + *e.host_ring.take(bytes, kernarg_alignment(k));
    if (l.param_bytes > 0) std::memcpy(args, l.params, l.param_bytes);
    std::memset(args + l.param_bytes, 0, bytes - l.param_bytes);
    auto *p = static_cast<hsa_kernel_dispatch_packet_t *>(next_slot());
    p->workgroup_size_x = static_cast<uint16_t>(l.threads[0]);
    p->workgroup_size_y = static_cast<uint16_t>(l.threads[1]);
    p->workgroup_size_z = static_cast<uint16_t>(l.threads[2]);
    p->reserved0 = 0;
    p->grid_size_x = static_cast<uint32_t>(l.groups[0] * l.threads[0]);
    p->grid_size_y = static_cast<uint32_t>(l.groups[1] * l.threads[1]);
    p->grid_size_z = static_cast<uint32_t>(l.groups[2] * l.threads[2]);
    p->private_segment_size = k.private_bytes;
    p->group_segment_size = static_cast<uint32_t>(k.group_bytes + l.shared_bytes);
    p->kernel_object = k.object;
    p->kernarg_address = args;
    p->reserved2 = 0;
    p->completion_signal = at(completion);
    publish(p, HSA_PACKET_TYPE_KERNEL_DISPATCH, 3 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS);
  }
  void copy(void *dst, const void *src, uint64_t bytes, int64_t dep, int64_t launch, int64_t done) {
    CopyCommand c{dst, src, bytes, {}, 0, at(done)};
    if (dep >= 0) c.deps[c.dep_count++] = at(dep);
    if (launch >= 0) c.deps[c.dep_count++] = at(launch);
    e.commands.push_back(c);
  }
  const void *word(uint64_t value) {
    char *slot = e.host_memory + *e.host_ring.take(8, 8);
    std::memcpy(slot, &value, 8);
    return slot;
  }
  void refuse(const char *why) { throw Fault(std::string("submit of work room refused: ") + why); }
};

// room's answer for w, with e.mu held.
rig_edge_room_t room_locked(Engine &e, const rig_edge_work_t &w) {
  Counter c(e);
  place(e, w, c);
  if (c.refused || !c.fits_empty || c.packets > e.queue->size || c.signals > e.signal_ring.count() ||
      c.commands > kMaxCopyCommands)
    return RIG_NEVER;
  uint64_t queued =
      e.api.hsa_queue_load_write_index_relaxed(e.queue) - e.api.hsa_queue_load_read_index_scacquire(e.queue);
  uint64_t free_signals = e.signal_ring.count() - (e.signal_ring.head() - e.signal_ring.tail());
  bool record = e.flight_ring.head() - e.flight_ring.tail() < e.flight_ring.count();
  if (!c.fits_now || c.packets > e.queue->size - queued || c.signals > free_signals || !record) return RIG_LATER;
  return RIG_ROOM;
}

// Issues the recorded copy commands.  Where ROCr refuses one, the
// commands not issued count as done, so that their signals still reach
// zero for the stop.
void issue_commands(Engine &e) {
  const HsaRuntime &rt = e.rt;
  for (size_t i = 0; i < e.commands.size(); i++) {
    const CopyCommand &c = e.commands[i];
    // A command of two host sides still runs on the GPU: ROCr copies with
    // the source's agent where it is a GPU, else with the destination's.
    bool src_host = e.book->is_host(c.src), dst_host = e.book->is_host(c.dst);
    hsa_agent_t src_agent = src_host ? rt.cpu : e.gpu.agent;
    hsa_agent_t dst_agent = dst_host && !src_host ? rt.cpu : e.gpu.agent;
    hsa_status_t s = e.api.hsa_amd_memory_async_copy(c.dst, dst_agent, c.src, src_agent, c.bytes, c.dep_count,
                                                     c.dep_count ? c.deps : nullptr, c.done);
    if (s != HSA_STATUS_SUCCESS) {
      for (size_t j = i; j < e.commands.size(); j++) e.api.hsa_signal_subtract_screlease(e.commands[j].done, 1);
      throw Fault("hsa_amd_memory_async_copy failed: " + status_text(s));
    }
  }
}

}  // namespace

void retire(Engine &e) {
  uint64_t word = e.word();
  while (e.flight_ring.tail() < e.flight_ring.head()) {
    const InFlight &f = e.in_flight[e.flight_ring.tail() % e.in_flight.size()];
    if (f.value > word) break;
    e.signal_ring.release_to(f.signal_end);
    e.host_ring.release_to(f.host_end);
    e.flight_ring.release_to(e.flight_ring.tail() + 1);
  }
}

rig_edge_room_t room_for(Engine &e, const rig_edge_work_t &w) {
  std::lock_guard<std::mutex> g(e.mu);
  if (e.stopped) return RIG_ROOM;  // submit answers the stop
  retire(e);
  return room_locked(e, w);
}

void submit_to(Engine &e, const rig_edge_work_t &w) {
  std::lock_guard<std::mutex> g(e.mu);
  if (const std::string *why = e.fault()) throw Fault(*why);
  if (e.stopped) throw Fault("the device has stopped");
  retire(e);
  if (room_locked(e, w) != RIG_ROOM) throw Fault("submit of work that has no room");
  uint64_t first = e.api.hsa_queue_load_write_index_relaxed(e.queue);
  e.commands.clear();
  Writer out{e, first};
  place(e, w, out);
  e.in_flight[*e.flight_ring.take() % e.in_flight.size()] = {w.value, e.signal_ring.head(), e.host_ring.head()};
  // The packets first, then the commands, which may wait for them.
  uint64_t end = first + out.packets;
  e.api.hsa_queue_store_write_index_screlease(e.queue, end);
  e.api.hsa_signal_store_screlease(e.queue->doorbell_signal, static_cast<hsa_signal_value_t>(end - 1));
  issue_commands(e);
}

}  // namespace rig::rocr
