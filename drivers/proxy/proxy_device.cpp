// A proxy of a device rigd serves (proxy_device.hpp).
#include "proxy_device.hpp"

#include "../common/shared_host_memory.hpp"
#include "ring.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <vector>

namespace rig::proxy {

namespace {

// rig-remote-proxy.txt: RIG_LATER while more than this is in flight.
constexpr uint64_t most_bytes_in_flight = uint64_t{64} << 20;
// A sleeping wait looks at the link this often, so that rigd's death ends
// it promptly.
constexpr int64_t word_sleep_ms = 50;

Facts facts_of(const rig_proxy_device_record &r, const rig_proxy_word *word, const RigdLink &link) {
  Facts f;
  f.arch = r.arch;
  f.alignment = r.alignment;
  if (r.cache_bytes > 0) f.cache_bytes = r.cache_bytes;
  f.budget = r.budget;
  // Its cache is memory rigd holds for the client: bounded as rigd bounds
  // its own.
  f.cache_limit = std::max<int64_t>(r.cache_limit, 0);
  // The client's quota bounds the memory of every proxy of its connection
  // together: a refusal reclaims the caches of them all.
  if (r.flags & RIG_PROXY_DEVICE_QUOTA) f.shared_bound = &link;
  f.queues = {"COMPUTE:0", "COPY:0"};
  f.copy_engine = 1;
  f.may_block = true;
  // room, submit and sleep are stores into the rings and reads of words,
  // and the locks they take (the link's, the shared blocks') are counted
  // (locks.hpp): rig masks no signal around them (ERR-06's exemption).
  f.signal_safe = true;
  // rigd maps the host blocks the process shares with it, staging among
  // them, and no other host memory: the proxy reaches no host memory at
  // large.
  f.maps_staging = true;
  // rigd places the addresses of a launch's memory, which is rigd's.
  f.launch_refs_by_location = true;
  // The word lies in the read-only completion segment, and after stop only
  // signaled() knows the last value.  Other proxies of the connection wait
  // on it in their hand-overs (queue_waits_on).
  f.own_word = true;
  f.word = reinterpret_cast<const std::atomic<uint64_t> *>(&word->value);
  return f;
}

ProxyRegion *region_of(Region r) { return static_cast<ProxyRegion *>(r); }

// Why rigd last refused a request of this thread's (ask_refusable, a
// host arena) with a reason, "" where it gave none: refusal()'s answer.
thread_local std::string refused_here;

// A function of an image rigd loaded: its id, which launches name.
struct ProxyFunction {
  uint64_t id;
};

// An image rigd loaded, by its id, and the functions resolved in it.
struct ProxyImage {
  uint64_t id;
  Mutex mu;
  std::map<std::string, std::unique_ptr<ProxyFunction>, std::less<>> functions;  // under mu
};

ProxyImage *image_of(DriverDevice::Image i) { return static_cast<ProxyImage *>(i); }

// The slots of a launch's parameters after its refs (protocol.h).
uint64_t param_slots(uint64_t bytes) { return (bytes + sizeof(rig_proxy_part) - 1) / sizeof(rig_proxy_part); }

// A side of a part as rigd names it: the handle, and the offset in its
// memory.  A Pinned region's location is its host address, which rig
// advances past the block's start.
std::pair<uint64_t, uint64_t> side_of(const rig_edge_location_t &loc) {
  if (!loc.address) return {loc.handle, loc.offset};
  auto block = find_shared_block(loc.address, 1);
  if (!block) throw Fault("a part names host memory that rigd does not map");
  auto offset = static_cast<uint64_t>(static_cast<const std::byte *>(loc.address) -
                                      static_cast<const std::byte *>(block->base));
  return {loc.handle, offset};
}

}  // namespace

ProxyDevice::ProxyDevice(std::shared_ptr<RigdLink> link, uint32_t served, uint32_t index, uint64_t start)
    : link_(std::move(link)),
      served_(served),
      index_(index),
      word_(link_->word(index)),
      facts_(facts_of(link_->devices()[served], word_, *link_)),
      accepted_(start) {}

rig_proxy_completion ProxyDevice::ask(uint16_t opcode, uint64_t a0, uint64_t a1, uint64_t a2) {
  rig_proxy_entry e{};
  e.opcode = opcode;
  e.device = index_;
  e.args[0] = a0;
  e.args[1] = a1;
  e.args[2] = a2;
  try {
    return link_->request(e);
  } catch (const LinkLost &lost) {
    throw Fault(lost.what());
  }
}

uint64_t ProxyDevice::word_value() const noexcept {
  return std::atomic_ref<const uint64_t>(word_->value).load(std::memory_order_acquire);
}

bool ProxyDevice::word_failed() const noexcept {
  return std::atomic_ref<const uint32_t>(word_->lost).load(std::memory_order_acquire) != 0;
}

Region ProxyDevice::alloc_pinned(int64_t n) {
  size_t bytes = static_cast<size_t>(n);
  void *p = shared_block_map(bytes);
  if (!p) return nullptr;
  uint64_t handle = 0;
  refused_here.clear();
  try {
    handle = link_->share_arena(find_shared_block(p, bytes)->fd, bytes, &refused_here);
  } catch (const LinkLost &lost) {
    shared_block_unmap(p);
    throw Fault(lost.what());
  }
  if (handle == 0) {
    shared_block_unmap(p);
    return nullptr;
  }
  return new ProxyRegion{handle, 0, p};
}

Region ProxyDevice::alloc(Memory m, int64_t n) {
  // Pinned memory is host memory of the process's that rigd maps; Mapped
  // memory falls back to it, since the host addresses no memory of rigd's
  // devices.
  if (m == Memory::Pinned) return alloc_pinned(n);
  if (m == Memory::Mapped) return nullptr;
  rig_proxy_completion a = ask_refusable(RIG_PROXY_OP_ALLOC, static_cast<uint64_t>(m), static_cast<uint64_t>(n));
  // rigd's RIG_ENOMEM (a limit of rigd's, or the device's memory) and its
  // refusal of a kind both mean: no memory of m.
  if (a.status != RIG_OK) return nullptr;
  auto *region = new ProxyRegion{a.value, 0};
  region->share->handles.push_back(a.value);
  return region;
}

void ProxyDevice::free(Region r) {
  ProxyRegion *region = region_of(r);
  uint64_t handle = region->handle;
  // rigd maps the block itself, as long as its work needs it.
  if (region->host) shared_block_unmap(region->host);
  {
    RegionShare &share = *region->share;
    Guard g(share.mu);
    std::erase(share.handles, handle);
    if (share.row.load() >= 0) link_->forget_handle(handle);
  }
  delete region;
  if (link_->lost()) return;
  try {
    // rigd lets go of the handle; the memory returns once its work is done.
    ask(RIG_PROXY_OP_FREE, handle);
  } catch (const Fault &) {
    // The link went meanwhile: rigd released everything of the client's.
  }
}

rig_edge_location_t ProxyDevice::locate(Region r) const {
  return rig_edge_location_t{region_of(r)->host, region_of(r)->handle, region_of(r)->offset};
}

bool ProxyDevice::peer(const DriverDevice &other) const {
  auto *proxy = dynamic_cast<const ProxyDevice *>(&other);
  if (!proxy || proxy->link_ != link_ || proxy->served_ >= 64) return false;
  return (link_->devices()[served_].reaches >> proxy->served_) & 1;
}

bool ProxyDevice::queue_waits_on(const DriverDevice &other) const {
  auto *proxy = dynamic_cast<const ProxyDevice *>(&other);
  return proxy && proxy->link_ == link_;
}

Region ProxyDevice::map_peer(DriverDevice &, Region r) {
  rig_proxy_completion a = ask(RIG_PROXY_OP_MAP_PEER, region_of(r)->handle);
  if (a.status != RIG_OK || a.value == 0) return nullptr;
  auto *mapped = new ProxyRegion{a.value, 0};
  // A mapping counts in its memory's row, now or once the memory is
  // exported, as rigd's does.
  mapped->share = region_of(r)->share;
  RegionShare &share = *mapped->share;
  Guard g(share.mu);
  share.handles.push_back(a.value);
  if (share.row.load() >= 0) link_->share_handle(a.value);
  return mapped;
}

Region ProxyDevice::map_host(void *p, int64_t n) {
  auto block = find_shared_block(p, static_cast<size_t>(n));
  if (!block) return nullptr;
  uint64_t handle;
  try {
    handle = link_->share_arena(block->fd, block->bytes);
  } catch (const LinkLost &lost) {
    throw Fault(lost.what());
  }
  if (handle == 0) return nullptr;
  return new ProxyRegion{handle, static_cast<uint64_t>(static_cast<std::byte *>(p) - static_cast<std::byte *>(block->base))};
}

namespace {

// The parts of the protocol a part takes: a words part's WORDS, then a
// WORD per write; a launch's LAUNCH, its REFs, then its parameters' slots.
uint64_t protocol_parts(const rig_edge_part_t &part) {
  if (part.kind == RIG_PART_LAUNCH) return 1 + uint64_t{part.u.launch.ref_count} + param_slots(part.u.launch.param_bytes);
  return part.kind == RIG_PART_WORDS ? 1 + uint64_t{part.u.words.count} : 1;
}

// Whether rigd runs the launch: parameters and shared bytes within what
// protocol.h's rig_proxy_launch carries.
bool launch_fits(const rig_edge_launch_t &l) {
  return l.param_bytes <= RIG_PROXY_MAX_PARAM_BYTES && l.shared_bytes <= UINT32_MAX;
}

}  // namespace

bool ProxyDevice::is_host() const noexcept {
  return (link_->devices()[served_].flags & RIG_PROXY_DEVICE_HOST) != 0;
}

rig_edge_room_t ProxyDevice::room(const rig_edge_work_t &w) {
  // A proxy runs copies and fills (rigd's addition to the spec's copies),
  // and the machine's host's also runs words (PROXY-41).  rigd's proxies
  // also run launches (PROXY-40 is of the proxies of other machines): a
  // launch needs an image, which only rigd's devices that load code load.
  uint64_t parts = 0;
  for (uint32_t i = 0; i < w.part_count; i++) {
    rig_edge_part_kind_t kind = w.parts[i].kind;
    bool launch = kind == RIG_PART_LAUNCH && launch_fits(w.parts[i].u.launch);
    if (kind != RIG_PART_COPY && kind != RIG_PART_FILL && !launch && !(kind == RIG_PART_WORDS && is_host()))
      return RIG_NEVER;
    parts += protocol_parts(w.parts[i]);
  }
  uint64_t payload = sizeof(rig_proxy_handover) + uint64_t{w.wait_count} * sizeof(rig_proxy_wait) +
                     parts * sizeof(rig_proxy_part);
  if (parts > UINT32_MAX || payload > link_->payload_bytes()) return RIG_NEVER;
  in_flight_.retire(word_value());
  return in_flight_.bytes() > most_bytes_in_flight ? RIG_LATER : RIG_ROOM;
}

std::string ProxyDevice::failure() {
  // rigd wrote why before it marked the word lost (word_failed's acquire).
  const char *why = word_->why;
  size_t length = strnlen(why, sizeof word_->why);
  if (length) return "rigd: " + std::string(why, length);
  return std::string(link_->devices()[served_].name) + " failed the proxy's work in rigd";
}

void ProxyDevice::submit(const rig_edge_work_t &w) {
  // rigd runs none of the proxy's values once one failed.
  if (word_failed()) throw Fault(failure());
  rig_proxy_entry e{};
  e.device = index_;
  e.args[0] = w.value;
  uint64_t bytes = 0;
  bool shared = false;
  std::span<const std::byte> payload;
  if (w.wait_count == 0 && w.part_count == 1 && w.parts[0].kind == RIG_PART_FILL) {
    // A lone fill travels in its entry: rigd reads no payload's lines.
    const rig_edge_fill_t &f = w.parts[0].u.fill;
    auto [dst, dst_offset] = side_of(f.dst);
    e.opcode = RIG_PROXY_OP_FILL;
    e.flags = f.value;
    e.args[1] = dst;
    e.args[2] = dst_offset;
    e.args[3] = f.bytes;
    bytes = f.bytes;
    shared = link_->shares(dst);
  } else {
    e.opcode = RIG_PROXY_OP_HANDOVER;
    payload = put_handover(w, &bytes, &shared);
  }
  try {
    // Work on memory other processes share returns once rigd has taken it,
    // so that a submit another process makes after this one returned
    // follows it in rigd (rig/service.h).
    link_->hand_over(e, payload, shared);
  } catch (const LinkLost &lost) {
    throw Fault(lost.what());
  }
  accepted_.store(w.value, std::memory_order_release);
  in_flight_.add(w.value, bytes);
}

std::span<const std::byte> ProxyDevice::put_handover(const rig_edge_work_t &w, uint64_t *moved, bool *any_shared) {
  // rig calls submit for one proxy one at a time: the payload's memory is
  // reused, and a warm submit allocates nothing.
  std::vector<std::byte> &payload = payload_;
  uint64_t part_count = 0;
  for (uint32_t i = 0; i < w.part_count; i++) part_count += protocol_parts(w.parts[i]);
  payload.resize(sizeof(rig_proxy_handover) + w.wait_count * sizeof(rig_proxy_wait) +
                 part_count * sizeof(rig_proxy_part));
  rig_proxy_handover header{w.wait_count, static_cast<uint32_t>(part_count)};
  std::memcpy(payload.data(), &header, sizeof header);
  // Each wait names the word of a proxy of this connection (queue_waits_on),
  // which rigd knows by the proxy's index.
  std::byte *at = payload.data() + sizeof header;
  for (uint32_t i = 0; i < w.wait_count; i++, at += sizeof(rig_proxy_wait)) {
    rig_proxy_wait wait{link_->word_index(const_cast<const uint64_t *>(w.waits[i].word)), 0, w.waits[i].value};
    std::memcpy(at, &wait, sizeof wait);
  }
  uint64_t bytes = 0;
  bool shared = false;
  auto add = [&](const rig_proxy_part &p) {
    shared = shared || link_->shares(p.dst);
    std::memcpy(at, &p, sizeof p);
    at += sizeof p;
  };
  for (uint32_t i = 0; i < w.part_count; i++) {
    const rig_edge_part_t &part = w.parts[i];
    if (part.kind == RIG_PART_LAUNCH) {
      at = put_launch(part.u.launch, at, &shared);
      bytes += part.u.launch.param_bytes;
      continue;
    }
    rig_proxy_part p{};
    if (part.kind == RIG_PART_WORDS) {
      p.kind = RIG_PROXY_PART_WORDS;
      p.rows = part.u.words.count;
      add(p);
      for (uint32_t j = 0; j < part.u.words.count; j++) {
        const rig_edge_word_write_t &write = part.u.words.writes[j];
        auto [dst, dst_offset] = side_of(write.dst);
        rig_proxy_part word{};
        word.kind = RIG_PROXY_PART_WORD;
        word.word = write.value;
        word.dst = dst;
        word.dst_offset = dst_offset;
        add(word);
        bytes += sizeof write.value;
      }
      continue;
    }
    if (part.kind == RIG_PART_COPY) {
      const rig_edge_copy_t &c = part.u.copy;
      auto [src, src_offset] = side_of(c.src);
      auto [dst, dst_offset] = side_of(c.dst);
      p = {RIG_PROXY_PART_COPY, 0, {src}, src_offset, dst, dst_offset, c.width, c.rows, c.src_pitch, c.dst_pitch};
      bytes += c.width * c.rows;
      shared = shared || link_->shares(src);
    } else {
      const rig_edge_fill_t &f = part.u.fill;
      auto [dst, dst_offset] = side_of(f.dst);
      p = {RIG_PROXY_PART_FILL, f.value, {0}, 0, dst, dst_offset, f.bytes, 1, 0, f.bytes};
      bytes += f.bytes;
    }
    add(p);
  }
  *moved = bytes;
  *any_shared = shared;
  return payload;
}

std::byte *ProxyDevice::put_launch(const rig_edge_launch_t &l, std::byte *at, bool *shared) {
  const auto *f = static_cast<const ProxyFunction *>(l.entry);
  rig_proxy_launch head{RIG_PROXY_PART_LAUNCH,
                        static_cast<uint32_t>(l.param_bytes),
                        f->id,
                        {l.groups[0], l.groups[1], l.groups[2]},
                        {l.threads[0], l.threads[1], l.threads[2]},
                        static_cast<uint32_t>(l.shared_bytes),
                        l.ref_count};
  std::memcpy(at, &head, sizeof head);
  at += sizeof head;
  for (uint32_t j = 0; j < l.ref_count; j++) {
    const rig_edge_ref_t &ref = l.refs[j];
    rig_proxy_ref r{};
    r.kind = RIG_PROXY_PART_REF;
    r.ref_kind = ref.kind;
    r.at = ref.at;
    if (ref.kind == RIG_REF_ENTRY) {
      r.function = static_cast<const ProxyFunction *>(ref.entry)->id;
    } else {
      auto [handle, offset] = side_of(ref.memory);
      r.handle = handle;
      r.offset = offset;
      r.bytes = ref.bytes;
      if (ref.kind == RIG_REF_UNORDERED) r.access = ref.access;
      *shared = *shared || link_->shares(handle);
    }
    std::memcpy(at, &r, sizeof r);
    at += sizeof r;
  }
  // The parameters, end to end in their slots, the last one's tail zero.
  uint64_t room = param_slots(l.param_bytes) * sizeof(rig_proxy_part);
  if (l.param_bytes) std::memcpy(at, l.params, l.param_bytes);
  std::memset(at + l.param_bytes, 0, room - l.param_bytes);
  return at + room;
}

rig_proxy_completion ProxyDevice::ask_with_code(rig_proxy_entry e, std::span<const std::byte> tail,
                                                std::string *text) {
  std::vector<std::byte> payload(sizeof(rig_proxy_code) + tail.size());
  if (!tail.empty()) std::memcpy(payload.data() + sizeof(rig_proxy_code), tail.data(), tail.size());
  e.device = index_;
  rig_proxy_code reply{};
  try {
    rig_proxy_completion a = link_->request(e, payload, std::as_writable_bytes(std::span(&reply, 1)));
    if (a.status != RIG_OK) *text = std::string(reply.why, strnlen(reply.why, sizeof reply.why));
    return a;
  } catch (const LinkLost &lost) {
    throw Fault(lost.what());
  }
}

rig_proxy_completion ProxyDevice::ask_code(uint16_t opcode, uint64_t id, std::span<const std::byte> tail,
                                           std::string *why, uint64_t a1) {
  rig_proxy_entry e{};
  e.opcode = opcode;
  e.args[0] = id;
  e.args[1] = a1;
  std::string text;
  rig_proxy_completion a = ask_with_code(e, tail, &text);
  if (a.status != RIG_OK) *why = "rigd: " + text;
  return a;
}

rig_proxy_completion ProxyDevice::ask_refusable(uint16_t opcode, uint64_t a0, uint64_t a1, uint64_t a2) {
  rig_proxy_entry e{};
  e.opcode = opcode;
  e.args[0] = a0;
  e.args[1] = a1;
  e.args[2] = a2;
  std::string text;
  rig_proxy_completion a = ask_with_code(e, {}, &text);
  refused_here = text.empty() ? std::string() : "rigd: " + text;
  return a;
}

uint64_t ProxyDevice::image_arena(const void *bytes, size_t n) {
  int fd = memfd_create("rig-image", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return 0;
  bool written = ftruncate(fd, static_cast<off_t>(n)) == 0 && pwrite(fd, bytes, n, 0) == static_cast<ssize_t>(n) &&
                 fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0;
  uint64_t handle = 0;
  try {
    if (written) handle = link_->share_arena(fd, n);
  } catch (const LinkLost &lost) {
    close(fd);
    throw Fault(lost.what());
  }
  close(fd);
  return handle;
}

std::variant<DriverDevice::Image, std::string> ProxyDevice::image(const void *bytes, size_t n) {
  if (word_failed()) throw Fault(failure());
  std::string why;
  rig_proxy_completion a{};
  if (sizeof(rig_proxy_code) + n <= link_->payload_bytes()) {
    a = ask_code(RIG_PROXY_OP_IMAGE_LOAD, 0, std::span(static_cast<const std::byte *>(bytes), n), &why);
  } else {
    // Past the payload arena, the bytes travel as a host arena does.
    uint64_t arena = image_arena(bytes, n);
    if (arena == 0) return "rigd takes no memory for an image of " + std::to_string(n) + " bytes";
    a = ask_code(RIG_PROXY_OP_IMAGE_LOAD, arena, {}, &why, n);
    ask(RIG_PROXY_OP_FREE, arena);
  }
  if (a.status == RIG_OK) return static_cast<Image>(new ProxyImage{a.value, {}, {}});
  // A lost instance loses the proxy; any other refusal is the image's.
  if (a.status == RIG_ELOST) throw Fault(why);
  return why;
}

void ProxyDevice::prepare(Image image, const std::string &name) {
  std::string why;
  if (!link_->lost()) ask_code(RIG_PROXY_OP_IMAGE_PREPARE, image_of(image)->id, std::as_bytes(std::span(name)), &why);
}

DriverDevice::EntryAnswer ProxyDevice::entry(Image image, const std::string &name) {
  if (word_failed()) throw Fault(failure());
  ProxyImage *i = image_of(image);
  std::string why;
  rig_proxy_completion a = ask_code(RIG_PROXY_OP_IMAGE_ENTRY, i->id, std::as_bytes(std::span(name)), &why);
  if (a.status == RIG_EINVAL) throw std::invalid_argument(why);
  if (a.status == RIG_ENOMEM) return NoMemory{static_cast<int64_t>(std::min<uint64_t>(a.detail, INT64_MAX))};
  if (a.status != RIG_OK) throw Fault(why);
  if (a.value == 0) return Absent{};
  Guard g(i->mu);
  std::unique_ptr<ProxyFunction> &f = i->functions[name];
  if (!f) f = std::make_unique<ProxyFunction>(ProxyFunction{a.value});
  // An entry ref's address is rigd's to place: any non-zero value says
  // that there is one.
  uint64_t address = (a.flags & RIG_PROXY_ENTRY_ADDRESS) ? a.value : 0;
  return Entry{f.get(), address, static_cast<int64_t>(std::min<uint64_t>(a.detail, INT64_MAX))};
}

void ProxyDevice::unload(Image image) {
  std::unique_ptr<ProxyImage> i(image_of(image));
  if (link_->lost()) return;
  try {
    // rigd unloads it once the work handed over before no longer runs it.
    ask(RIG_PROXY_OP_IMAGE_UNLOAD, i->id);
  } catch (const Fault &) {
    // The link went meanwhile: rigd released everything of the client's.
  }
}

uint64_t ProxyDevice::signaled() {
  uint64_t word = word_value();
  if (!stopped_.load(std::memory_order_acquire)) return word;
  // The last value shows once no byte of the proxy's work may still land
  // in this process's memory: its work is done, rigd's device stopped it,
  // or rigd is gone.
  if (word >= accepted_.load(std::memory_order_acquire) || word_failed() || link_->lost())
    return last_.load(std::memory_order_acquire);
  return word;
}

void ProxyDevice::sleep(uint64_t seen, int64_t still_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(still_ms);
  // rig spins on the word before it calls sleep (rig_device::wait).
  for (;;) {
    if (word_value() != seen) return;
    if (word_failed()) throw Fault(failure());
    std::string why;
    if (link_->lost(&why)) throw Fault(why);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    sleep_on_word(&word_->value, seen, link_->word_sleepers(),
                  static_cast<int>(std::min<int64_t>(left.count() + 1, word_sleep_ms)));
  }
}

void ProxyDevice::stop(const std::optional<std::string> &, uint64_t last) {
  last_.store(last, std::memory_order_release);
  stopped_.store(true, std::memory_order_release);
}

namespace {

constexpr uint64_t row_of_token(uint64_t token) { return token & ((uint64_t{1} << RIG_PROXY_TOKEN_ROW_BITS) - 1); }

}  // namespace

std::string ProxyDevice::refusal() { return refused_here; }

std::optional<uint64_t> ProxyDevice::export_bytes(Region r, uint64_t offset, uint64_t length) {
  ProxyRegion *region = region_of(r);
  rig_proxy_completion a = ask_refusable(RIG_PROXY_OP_EXPORT, region->handle, region->offset + offset, length);
  if (a.status != RIG_OK) return std::nullopt;
  // Every export of the memory has its row, which its mappings share.
  RegionShare &share = *region->share;
  Guard g(share.mu);
  share.row.store(static_cast<int64_t>(row_of_token(a.value)));
  for (uint64_t handle : share.handles) link_->share_handle(handle);
  return a.value;
}

std::optional<std::pair<Region, int64_t>> ProxyDevice::import_bytes(uint64_t token) {
  rig_proxy_completion a = ask_refusable(RIG_PROXY_OP_IMPORT, token);
  if (a.status != RIG_OK || a.detail > INT64_MAX) return std::nullopt;
  auto *region = new ProxyRegion{a.value, 0};
  region->share->row.store(static_cast<int64_t>(row_of_token(token)));
  region->share->handles.push_back(a.value);
  link_->share_handle(a.value);
  return std::pair<Region, int64_t>{region, static_cast<int64_t>(a.detail)};
}

int ProxyDevice::export_fd(uint64_t token) {
  try {
    refused_here.clear();
    return link_->export_fd(token, &refused_here);
  } catch (const LinkLost &lost) {
    throw Fault(lost.what());
  }
}

uint64_t ProxyDevice::token_of_fd(int fd) {
  try {
    return link_->token_of_fd(fd);
  } catch (const LinkLost &lost) {
    throw Fault(lost.what());
  }
}

std::optional<uint64_t> ProxyDevice::others_mark(Region r) {
  int64_t row = region_of(r)->share->row.load();
  const rig_proxy_shared_row *words = row >= 0 ? link_->shared_row(static_cast<uint64_t>(row)) : nullptr;
  if (!words) return std::nullopt;
  return std::atomic_ref<const uint64_t>(words->taken).load(std::memory_order_acquire);
}

bool ProxyDevice::others_done(Region r, uint64_t mark) {
  const rig_proxy_shared_row *words = link_->shared_row(static_cast<uint64_t>(region_of(r)->share->row.load()));
  // Work of a rigd that is gone never ends.
  return std::atomic_ref<const uint64_t>(words->done).load(std::memory_order_acquire) >= mark || link_->lost();
}

std::optional<std::string> ProxyDevice::lost_outside_calls() {
  std::string why;
  if (link_->lost(&why)) return why;
  return std::nullopt;
}

}  // namespace rig::proxy
