// Copying (rig-buffer.txt): copies by the host, by a device directly, and
// through staging memory; fills; blits from and to the caller's bytes.
#include "buffer.hpp"
#include "copy.hpp"
#include "file_staging.hpp"
#include "probes.hpp"
#include "registry.hpp"
#include "rig_internal/new_pages.hpp"
#include "rig_internal/staging.hpp"
#include "work.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

using namespace rig;

namespace rig {

std::optional<rig_edge_location_t> direct_location(rig_buffer_t *side, rig_device_t *x) {
  if (side->device == x) return location_of(side);
  Allocation *a = side->alloc;
  if (a->owner == x) return advance(a->loc, side->offset);
  // A device whose work runs on the host reaches every byte the host
  // addresses, and so do the copies of one that names host memory by its
  // address.
  if (x->facts.runs_on_host || x->facts.copies_host_by_address)
    if (void *h = host_address(side)) return rig_edge_location_t{h, 0, 0};
  if (a->host_paged) return std::nullopt;  // through a borrow that the copy names, or staging
  Mapping *m = copy_mapping(a, x);
  if (!m) return std::nullopt;
  return advance(m->loc, side->offset);
}

}  // namespace rig

namespace {

bool box_fits(const rig_box_t &b, int64_t src_len, int64_t dst_len) {
  if (b.src_offset < 0 || b.dst_offset < 0 || b.width < 0 || b.rows < 0 || b.src_pitch < 0 || b.dst_pitch < 0)
    return false;
  if (b.src_pitch < b.width || b.dst_pitch < b.width) return false;
  if (b.width == 0 || b.rows == 0) return true;
  // offset + (rows - 1) * pitch + width <= len, without overflow.
  auto ends_within = [&](int64_t offset, int64_t pitch, int64_t len) {
    int64_t room = len - offset;  // offset >= 0, len >= 0: no overflow
    if (room < b.width) return false;
    if (b.rows == 1) return true;
    return (b.rows - 1) <= (room - b.width) / pitch;  // pitch >= width > 0
  };
  return ends_within(b.src_offset, b.src_pitch, src_len) && ends_within(b.dst_offset, b.dst_pitch, dst_len);
}

int64_t box_bytes(const rig_box_t &b) { return b.width * b.rows; }  // fits: no overflow

// Splits a box into pieces of at most limit bytes: runs of whole rows where
// a row fits, else pieces of one row.
void split(const rig_box_t &b, int64_t limit, std::vector<rig_box_t> &out) {
  if (b.width <= limit) {
    int64_t rows_per = limit / b.width;
    for (int64_t r = 0; r < b.rows; r += rows_per) {
      int64_t rows = std::min(rows_per, b.rows - r);
      out.push_back({b.src_offset + r * b.src_pitch, b.dst_offset + r * b.dst_pitch, b.width, rows, b.src_pitch,
                     b.dst_pitch});
    }
    return;
  }
  for (int64_t r = 0; r < b.rows; r++)
    for (int64_t x = 0; x < b.width; x += limit) {
      int64_t w = std::min(limit, b.width - x);
      out.push_back({b.src_offset + r * b.src_pitch + x, b.dst_offset + r * b.dst_pitch + x, w, 1, w, w});
    }
}

// Where staging for x's copies sits: x's NUMA node, or anywhere.
int numa_node_of(const rig_device_t *x) { return x->facts.numa_node.value_or(-1); }

bool copies(const rig_device_t *x) {
  return !x->is_host && !x->facts.runs_on_host && x->facts.copy_engine >= 0;
}

// The device whose copy engine moves a side's bytes to or from staging.
rig_device_t *engine_of(rig_buffer_t *side) {
  if (copies(side->device)) return side->device;
  if (copies(side->alloc->owner)) return side->alloc->owner;
  return nullptr;
}

// Where x's copies name the staging allocation a: by its host address
// where x's copies name host memory so (a proxy of another machine's),
// else through x's mapping of it; nullopt where x maps it not.
std::optional<rig_edge_location_t> staging_location(Allocation *a, rig_device_t *x) {
  if (x->facts.copies_host_by_address) return rig_edge_location_t{a->host, 0, 0};
  Mapping *m = copy_mapping(a, x);
  if (!m) return std::nullopt;
  return m->loc;
}

rig_edge_part_t copy_part(rig_device_t *x, rig_edge_location_t src, rig_edge_location_t dst, const rig_box_t &b) {
  rig_edge_part_t p{};
  p.kind = RIG_PART_COPY;
  p.queue = static_cast<uint32_t>(x->facts.copy_engine);
  p.u.copy = {advance(src, b.src_offset), advance(dst, b.dst_offset), static_cast<uint64_t>(b.width),
              static_cast<uint64_t>(b.rows),  static_cast<uint64_t>(b.src_pitch),
              static_cast<uint64_t>(b.dst_pitch)};
  return p;
}

void host_copy_rows(const char *src, char *dst, const rig_box_t &b) {
  if (b.rows == 1) populate_new_pages(dst + b.dst_offset, b.width);
  for (int64_t r = 0; r < b.rows; r++)
    std::memmove(dst + b.dst_offset + r * b.dst_pitch, src + b.src_offset + r * b.src_pitch,
                 static_cast<size_t>(b.width));
}

rig_point_t host_point(uint64_t v) { return rig_point_make(host(), v); }

// The staging allocations a copy holds, given back when it ends.
struct HeldStaging : std::vector<StagingLease> {
  HeldStaging() = default;
  HeldStaging(const HeldStaging &) = delete;
  HeldStaging &operator=(const HeldStaging &) = delete;
  ~HeldStaging() {
    for (const StagingLease &l : *this) release_staging(l);
  }
};

struct Copy {
  rig_buffer_t *src, *dst;
  std::vector<rig_box_t> boxes;
  const rig_point_t *waits;
  size_t nwaits;

  rig_point_t by_host() {
    std::vector<Dependency> deps;
    point_dependencies(waits, nwaits, deps);
    dependencies(src->alloc, false, nullptr, deps);
    dependencies(dst->alloc, true, nullptr, deps);
    wait_all(deps);
    auto *s = static_cast<const char *>(host_address(src));
    auto *d = static_cast<char *>(host_address(dst));
    for (const rig_box_t &b : boxes) host_copy_rows(s, d, b);
    return host_point(host_value());
  }

  rig_point_t direct(rig_device_t *x, rig_edge_location_t s, rig_edge_location_t d) {
    std::vector<rig_edge_part_t> parts;
    // Parts on one queue run in order, so a byte two boxes write holds
    // the later box's.
    for (const rig_box_t &b : boxes) parts.push_back(copy_part(x, s, d, b));
    const Use uses[] = {{src->alloc, false}, {dst->alloc, true}};
    uint64_t v = submit_work(x, parts.data(), parts.size(), uses, 2, waits, nwaits);
    return rig_point_make(x, v);
  }

  // The copy's boxes as pieces of at most a staging allocation each.
  std::vector<rig_box_t> pieces() const {
    std::vector<rig_box_t> out;
    for (const rig_box_t &box : boxes) split(box, kStagingBytes, out);
    return out;
  }

  // x copies piece's bytes, which the host laid out packed in lease's
  // allocation, into d: the work's value.
  uint64_t copy_from_staging(rig_device_t *x, rig_edge_location_t d, const StagingLease &lease, const rig_box_t &piece) {
    auto staged = staging_location(lease.alloc, x);
    if (!staged) throw_invalid(x->name + " cannot map staging memory");
    rig_box_t moved{lease.offset, piece.dst_offset, piece.width, piece.rows, piece.width, piece.dst_pitch};
    return submit_work(x, {copy_part(x, *staged, d, moved)}, {{lease.alloc, false}, {dst->alloc, true}}, waits, nwaits);
  }

  // The host fills lease's bytes with piece (fill(piece, bytes) lays the
  // piece's rows out packed), and x copies them into d: the work's value.
  uint64_t fill_and_copy(rig_device_t *x, rig_edge_location_t d, const StagingLease &lease, const rig_box_t &piece,
                         const std::function<void(const rig_box_t &, char *)> &fill) {
    fill(piece, static_cast<char *>(lease.alloc->host) + lease.offset);
    return copy_from_staging(x, d, lease, piece);
  }

  // The host fills staging with each piece, and x copies it into d.  The
  // copy holds one staging allocation, or two in turn for more than one
  // piece, so the host fills one while x empties the other; it reuses one
  // once the work that last read it is done (COPY-19, COPY-25).
  rig_point_t host_filled(rig_device_t *x, rig_edge_location_t d,
                          const std::function<void(const rig_box_t &, char *)> &fill) {
    std::vector<rig_box_t> all = pieces();
    HeldStaging held;
    uint64_t v = 0;
    for (size_t k = 0; k < all.size(); k++) {
      const rig_box_t &piece = all[k];
      StagingLease lease;
      if (held.size() < std::min<size_t>(all.size(), 2)) {
        held.push_back(take_host_written(box_bytes(piece), numa_node_of(x)));
        lease = held.back();
      } else {
        lease = refill_from_start(held[k % 2], box_bytes(piece));
      }
      v = fill_and_copy(x, d, lease, piece, fill);
    }
    return rig_point_make(x, v);
  }

  // x copies each piece from s into staging, and the host takes it out
  // (take(piece, bytes)) once that transfer is done, while x fills the
  // other allocation with the next piece.
  void device_filled(rig_device_t *x, rig_edge_location_t s,
                     const std::function<void(const rig_box_t &, const char *)> &take) {
    std::vector<rig_box_t> all = pieces();
    HeldStaging held;
    struct Filled {
      rig_box_t piece;
      StagingLease lease;
      uint64_t value;
    };
    std::optional<Filled> previous;
    auto take_previous = [&] {
      x->wait(previous->value);
      take(previous->piece, static_cast<const char *>(previous->lease.alloc->host) + previous->lease.offset);
    };
    for (size_t k = 0; k < all.size(); k++) {
      const rig_box_t &piece = all[k];
      if (held.size() < std::min<size_t>(all.size(), 2)) held.push_back(take_device_written(numa_node_of(x)));
      // The host has taken the piece this allocation held two turns ago.
      StagingLease lease = held[k % held.size()];
      auto staged = staging_location(lease.alloc, x);
      if (!staged) throw_invalid(x->name + " cannot map staging memory");
      rig_box_t moved{piece.src_offset, lease.offset, piece.width, piece.rows, piece.src_pitch, piece.width};
      uint64_t v =
          submit_work(x, {copy_part(x, s, *staged, moved)}, {{src->alloc, false}, {lease.alloc, true}}, waits, nwaits);
      if (previous) take_previous();
      previous = Filled{piece, lease, v};
    }
    if (previous) take_previous();
  }

  // A file's bytes into x's memory through staging: as host_filled, but
  // the io device's reads run on several threads, a part at a time, and x
  // copies each part as soon as it is read (file_staging.hpp), so that the
  // disk's queue stays full while x copies.  A single row only: its parts
  // write disjoint bytes, in whatever order their work runs.
  rig_point_t file_filled(rig_device_t *x, rig_edge_location_t d,
                          const std::function<void(const rig_box_t &, char *)> &fill) {
    if (boxes.size() != 1 || boxes[0].rows != 1 || boxes[0].width <= kFilePartBytes) return host_filled(x, d, fill);
    const rig_box_t box = boxes[0];
    auto part = [&](int64_t offset, int64_t bytes) {
      return rig_box_t{box.src_offset + offset, box.dst_offset + offset, bytes, 1, box.src_pitch, box.dst_pitch};
    };
    const uint64_t v = read_through_staging(
        box.width, numa_node_of(x),
        [&](int64_t offset, int64_t bytes, char *into) { fill(part(offset, bytes), into); },
        [&](const StagingLease &lease, int64_t offset, int64_t bytes) {
          return copy_from_staging(x, d, lease, part(offset, bytes));
        });
    return rig_point_make(x, v);
  }

  // Host memory into x's memory.
  rig_point_t stage_in(rig_device_t *x, rig_edge_location_t d) {
    std::vector<Dependency> deps;
    dependencies(src->alloc, false, nullptr, deps);
    wait_all(deps);
    auto *s = static_cast<const char *>(host_address(src));
    return host_filled(x, d, [&](const rig_box_t &piece, char *stage) {
      host_copy_rows(s, stage, {piece.src_offset, 0, piece.width, piece.rows, piece.src_pitch, piece.width});
    });
  }

  // x's memory into host memory.
  rig_point_t stage_out(rig_device_t *x, rig_edge_location_t s) {
    auto *d = static_cast<char *>(host_address(dst));
    bool waited = false;
    device_filled(x, s, [&](const rig_box_t &piece, const char *stage) {
      if (!waited) {
        std::vector<Dependency> deps;
        dependencies(dst->alloc, true, nullptr, deps);
        wait_all(deps);
        waited = true;
      }
      host_copy_rows(stage, d, {0, piece.dst_offset, piece.width, piece.rows, piece.width, piece.dst_pitch});
    });
    return host_point(host_value());
  }

  // Between devices that reach each other only through host memory: x
  // copies into staging, y out of it after x's transfer.
  rig_point_t stage_between(rig_device_t *x, rig_edge_location_t s, rig_device_t *y, rig_edge_location_t d) {
    uint64_t v = 0;
    for (const rig_box_t &box : boxes) {
      std::vector<rig_box_t> pieces;
      split(box, kStagingBytes, pieces);
      for (const rig_box_t &piece : pieces) {
        StagingLease lease = take_device_written(numa_node_of(x));
        struct Release {
          StagingLease l;
          ~Release() { release_staging(l); }
        } release{lease};
        auto sx = staging_location(lease.alloc, x);
        auto sy = staging_location(lease.alloc, y);
        if (!sx || !sy) throw_invalid("no device can copy between " + x->name + " and " + y->name);
        rig_box_t in{piece.src_offset, lease.offset, piece.width, piece.rows, piece.src_pitch, piece.width};
        submit_work(x, {copy_part(x, s, *sx, in)}, {{src->alloc, false}, {lease.alloc, true}}, waits, nwaits);
        rig_box_t out{lease.offset, piece.dst_offset, piece.width, piece.rows, piece.width, piece.dst_pitch};
        v = submit_work(y, {copy_part(y, *sy, d, out)}, {{lease.alloc, false}, {dst->alloc, true}}, nullptr, 0);
      }
    }
    return rig_point_make(y, v);
  }

  // Reads (write false) or writes the io memory of side io_side, rows of
  // each piece, from or into host memory at host laid out as the piece's
  // other side.
  static void io_rows(rig_buffer_t *io_side, bool write, const rig_box_t &piece, char *host, bool io_is_src) {
    int64_t io_offset = io_is_src ? piece.src_offset : piece.dst_offset;
    int64_t io_pitch = io_is_src ? piece.src_pitch : piece.dst_pitch;
    int64_t host_offset = io_is_src ? piece.dst_offset : piece.src_offset;
    int64_t host_pitch = io_is_src ? piece.dst_pitch : piece.src_pitch;
    rig_device_t *io = io_side->alloc->owner;
    if (io_pitch == piece.width && host_pitch == piece.width) {
      io_move(io, io_side->alloc, write, io_side->offset + io_offset, host + host_offset, piece.width * piece.rows);
      return;
    }
    for (int64_t r = 0; r < piece.rows; r++)
      io_move(io, io_side->alloc, write, io_side->offset + io_offset + r * io_pitch, host + host_offset + r * host_pitch,
              piece.width);
  }

  // A copy from or into an io device's memory: its library's reads and
  // writes, into or out of host memory directly, or through staging where
  // the other side is a device's memory the host does not address.
  rig_point_t through_io() {
    bool src_io = src->alloc->owner->is_io(), dst_io = dst->alloc->owner->is_io();
    std::vector<Dependency> deps;
    point_dependencies(waits, nwaits, deps);
    dependencies(src->alloc, false, nullptr, deps);
    dependencies(dst->alloc, true, nullptr, deps);
    rig_buffer_t *other = src_io ? dst : src;
    if (!(src_io && dst_io) && host_address(other)) {
      wait_all(deps);
      auto *h = static_cast<char *>(host_address(other));
      for (const rig_box_t &b : boxes) io_rows(src_io ? src : dst, !src_io, b, h, src_io);
      return host_point(host_value());
    }
    if (src_io && dst_io) {
      wait_all(deps);
      for (const rig_box_t &box : boxes) {
        std::vector<rig_box_t> pieces;
        split(box, kStagingBytes, pieces);
        for (const rig_box_t &piece : pieces) {
          StagingLease lease = take_host_written(box_bytes(piece), -1);
          struct Release {
            StagingLease l;
            ~Release() { release_staging(l); }
          } release{lease};
          char *stage = static_cast<char *>(lease.alloc->host) + lease.offset;
          io_rows(src, false, {piece.src_offset, 0, piece.width, piece.rows, piece.src_pitch, piece.width}, stage, true);
          io_rows(dst, true, {0, piece.dst_offset, piece.width, piece.rows, piece.width, piece.dst_pitch}, stage, false);
        }
      }
      return host_point(host_value());
    }
    rig_device_t *x = engine_of(other);
    auto loc = x ? direct_location(other, x) : std::nullopt;
    if (!loc) throw_invalid("no device can copy between " + src->device->name + " and " + dst->device->name);
    if (src_io) {
      // The io device reads into staging; x copies out of it.
      wait_all(deps);
      return file_filled(x, *loc, [&](const rig_box_t &piece, char *stage) {
        io_rows(src, false, {piece.src_offset, 0, piece.width, piece.rows, piece.src_pitch, piece.width}, stage, true);
      });
    }
    // x copies into staging; the io device writes from it.
    bool waited = false;
    device_filled(x, *loc, [&](const rig_box_t &piece, const char *stage) {
      if (!waited) {
        std::vector<Dependency> dst_deps;
        dependencies(dst->alloc, true, nullptr, dst_deps);
        wait_all(dst_deps);
        waited = true;
      }
      io_rows(dst, true, {0, piece.dst_offset, piece.width, piece.rows, piece.width, piece.dst_pitch},
              const_cast<char *>(stage), false);
    });
    return host_point(host_value());
  }

  rig_point_t run() {
    if (src->alloc->owner->is_io() || dst->alloc->owner->is_io()) return through_io();
    if (host_address(src) && host_address(dst)) return by_host();
    for (rig_device_t *x : {dst->device, src->device}) {
      if (!copies(x)) continue;
      auto s = direct_location(src, x);
      auto d = s ? direct_location(dst, x) : std::nullopt;
      if (s && d) return direct(x, *s, *d);
    }
    if (host_address(src) && !host_address(dst)) {
      rig_device_t *x = engine_of(dst);
      if (x) {
        if (auto d = direct_location(dst, x)) return stage_in(x, *d);
      }
    } else if (!host_address(src) && host_address(dst)) {
      rig_device_t *x = engine_of(src);
      if (x) {
        if (auto s = direct_location(src, x)) return stage_out(x, *s);
      }
    } else {
      rig_device_t *x = engine_of(src), *y = engine_of(dst);
      if (x && y) {
        auto s = direct_location(src, x);
        auto d = direct_location(dst, y);
        if (s && d) return stage_between(x, *s, y, *d);
      }
    }
    throw_invalid("no device can copy between " + src->device->name + " and " + dst->device->name);
  }
};

void check_sides(rig_buffer_t *src, rig_buffer_t *dst) {
  require_buffer(src, "the source");
  require_buffer(dst, "the destination");
  require(access_of(dst) == RIG_ACCESS_READ_WRITE, "the destination admits only Read");
  require(!rig_buffer_share_byte(src, dst), "the source and destination share a byte of memory");
  require(!(src->alloc == dst->alloc && src->alloc->owner->is_io()),
          "one side is an io device's memory and the other a borrow of it");
}

rig_point_t submit_copy(rig_buffer_t *src, rig_buffer_t *dst, const rig_box_t *boxes, size_t nboxes,
                        const rig_point_t *waits, size_t nwaits) {
  refuse_inside_lock();
  check_sides(src, dst);
  require(boxes != nullptr || nboxes == 0, "boxes is NULL");
  require(waits != nullptr || nwaits == 0, "waits is NULL");
  Copy c{src, dst, {}, waits, nwaits};
  int64_t bytes = 0;
  for (size_t i = 0; i < nboxes; i++) {
    if (!box_fits(boxes[i], src->length, dst->length)) throw_invalid("box " + std::to_string(i) + " does not fit the source and destination");
    if (box_bytes(boxes[i]) > 0) {
      c.boxes.push_back(boxes[i]);
      bytes += box_bytes(boxes[i]);
    }
  }
  for (rig_buffer_t *b : {src, dst}) require_live(b->device);
  ReadClaim src_claim(src), dst_claim(dst);
  if (bytes == 0) {
    std::vector<Dependency> deps;
    point_dependencies(waits, nwaits, deps);
    wait_all(deps);
    return host_point(host()->submitted.load());
  }
  rig_point_t done = c.run();
  RIG_PROBE(copy, src->device->name.c_str(), dst->device->name.c_str(), bytes);
  return done;
}

rig_point_t run_fill(rig_buffer_t *b, uint8_t c, const rig_point_t *waits, size_t nwaits) {
  refuse_inside_lock();
  require_buffer(b, "the buffer");
  require(access_of(b) == RIG_ACCESS_READ_WRITE, "the buffer admits only Read");
  require(waits != nullptr || nwaits == 0, "waits is NULL");
  require_live(b->device);
  ReadClaim claim(b);
  if (b->alloc->owner->is_io() && b->length > 0) {
    // The io device writes from host memory that holds the byte.
    std::vector<Dependency> deps;
    point_dependencies(waits, nwaits, deps);
    dependencies(b->alloc, true, nullptr, deps);
    wait_all(deps);
    constexpr int64_t kBlock = 1 << 20;
    std::vector<char> block(static_cast<size_t>(std::min(kBlock, b->length)), static_cast<char>(c));
    for (int64_t at = 0; at < b->length; at += kBlock)
      io_move(b->alloc->owner, b->alloc, true, b->offset + at, block.data(), std::min(kBlock, b->length - at));
    return host_point(host_value());
  }
  if (b->length == 0 || host_address(b)) {
    std::vector<Dependency> deps;
    point_dependencies(waits, nwaits, deps);
    dependencies(b->alloc, true, nullptr, deps);
    wait_all(deps);
    if (b->length == 0) return host_point(host()->submitted.load());
    populate_new_pages(host_address(b), b->length);
    std::memset(host_address(b), c, static_cast<size_t>(b->length));
    return host_point(host_value());
  }
  // The copy engine of b's device, or of the device whose memory a borrow
  // on a device that runs no copy borrows.
  rig_device_t *x = engine_of(b);
  if (!x) throw_invalid("no device can set the bytes of " + b->device->name + "'s buffer");
  auto loc = direct_location(b, x);
  if (!loc) throw_invalid("no device can set the bytes of " + b->device->name + "'s buffer");
  rig_edge_part_t p{};
  p.kind = RIG_PART_FILL;
  p.queue = static_cast<uint32_t>(x->facts.copy_engine);
  p.u.fill = {*loc, static_cast<uint64_t>(b->length), c};
  return rig_point_make(x, submit_work(x, {p}, {{b->alloc, true}}, waits, nwaits));
}

rig_point_t submit_fill(rig_buffer_t *b, uint8_t c, const rig_point_t *waits, size_t nwaits) {
  rig_point_t done = run_fill(b, c, waits, nwaits);
  RIG_PROBE(fill, b->device->name.c_str(), b->length);
  return done;
}

void wait_point(rig_point_t p) {
  uint64_t value = p.bits & kValueMax;
  if (rig_device_t *d = device_of_value(static_cast<uint16_t>(p.bits >> kValueBits), value)) d->wait(value);
}

// A host buffer over the caller's bytes for the length of one call.
struct CallerBytes {
  rig_buffer_t *b = nullptr;
  CallerBytes(const void *s, int64_t n) {
    if (rig_buffer_of_memory(const_cast<void *>(s), n, nullptr, nullptr, &b) != RIG_OK) throw_invalid(rig_last_error());
  }
  ~CallerBytes() { rig_buffer_unref(b); }
};

bool range_valid(int64_t len, int64_t first, int64_t n) {
  return first >= 0 && n >= 0 && first <= len && n <= len - first;
}

// The range [first, first + n) of a side of length bytes, for messages.
std::string range_text(int64_t first, int64_t n, int64_t length) {
  return std::to_string(n) + " bytes from byte " + std::to_string(first) + " of " + std::to_string(length);
}

// What both blits require of their caller's bytes and of b, with the
// numbers of a range that does not fit.
void require_blit(const void *s, int64_t s_len, int64_t s_first, const rig_buffer_t *b, int64_t b_first, int64_t n) {
  require_buffer(b, "the buffer");
  require(s != nullptr || s_len == 0, "the bytes are NULL");
  if (s_len < 0 || !range_valid(s_len, s_first, n))
    throw_invalid("the range of the bytes is not valid: " + range_text(s_first, n, s_len));
  if (!range_valid(b->length, b_first, n))
    throw_invalid("the range of the buffer is not valid: " + range_text(b_first, n, b->length));
}

}  // namespace

extern "C" {

rig_box_t rig_row(int64_t src_offset, int64_t dst_offset, int64_t n) {
  return rig_box_t{src_offset, dst_offset, n, 1, n, n};
}

rig_status_t rig_buffer_submit_copy(rig_buffer_t *src, rig_buffer_t *dst, const rig_box_t *boxes, size_t nboxes,
                                    const rig_point_t *waits, size_t nwaits, rig_point_t *out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = submit_copy(src, dst, boxes, nboxes, waits, nwaits);
    return RIG_OK;
  });
}

rig_status_t rig_buffer_copy(rig_buffer_t *src, rig_buffer_t *dst) {
  RIG_API_CALL({
    check_sides(src, dst);
    if (src->length != dst->length)
      throw_invalid("the source (" + std::to_string(src->length) + " bytes) and destination (" +
                    std::to_string(dst->length) + " bytes) differ in length");
    rig_box_t row = rig_row(0, 0, src->length);
    // The claims last until the bytes are there, the wait included.
    ReadClaim src_claim(src), dst_claim(dst);
    wait_point(submit_copy(src, dst, &row, 1, nullptr, 0));
    return RIG_OK;
  });
}

rig_status_t rig_buffer_submit_fill(rig_buffer_t *b, uint8_t c, const rig_point_t *waits, size_t nwaits,
                                    rig_point_t *out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = submit_fill(b, c, waits, nwaits);
    return RIG_OK;
  });
}

rig_status_t rig_buffer_fill(rig_buffer_t *b, uint8_t c) {
  RIG_API_CALL({
    require_buffer(b, "the buffer");
    ReadClaim claim(b);
    wait_point(submit_fill(b, c, nullptr, 0));
    return RIG_OK;
  });
}

rig_status_t rig_buffer_blit_from_bytes(const void *s, int64_t s_len, int64_t s_first, rig_buffer_t *b,
                                        int64_t b_first, int64_t n) {
  RIG_API_CALL({
    require_blit(s, s_len, s_first, b, b_first, n);
    require(access_of(b) == RIG_ACCESS_READ_WRITE, "the buffer admits only Read");
    CallerBytes from(s, s_len);
    rig_box_t row = rig_row(s_first, b_first, n);
    wait_point(submit_copy(from.b, b, &row, 1, nullptr, 0));
    return RIG_OK;
  });
}

rig_status_t rig_buffer_blit_to_bytes(rig_buffer_t *b, int64_t b_first, void *s, int64_t s_len, int64_t s_first,
                                      int64_t n) {
  RIG_API_CALL({
    require_blit(s, s_len, s_first, b, b_first, n);
    CallerBytes to(s, s_len);
    rig_box_t row = rig_row(b_first, s_first, n);
    wait_point(submit_copy(b, to.b, &row, 1, nullptr, 0));
    return RIG_OK;
  });
}

}  // extern "C"
