// A proxy's work (rig-remote-proxy.txt, Work): room, and submit's one
// HANDOVER per value, its copies as COPY, PUT and GET parts, its fills,
// launches and (on the machine's host) words as the agent's parts.
#include "remote_device.hpp"
#include "remote_objects.hpp"

#include "wire_bounds.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

namespace rig::remote {

namespace wire = net::wire;

namespace {

// rig-remote-proxy.txt: RIG_LATER while more than this is in flight.
constexpr uint64_t most_bytes_in_flight = uint64_t{64} << 20;

bool in_host(const rig_edge_location_t &l) { return l.address != nullptr; }

wire::Place place_of(const rig_edge_location_t &l) { return {l.handle, l.offset}; }

// Whether a side's rows lie end to end.
bool end_to_end(const rig_edge_copy_t &c, uint64_t pitch) { return c.rows <= 1 || pitch == c.width; }

// The wire parts a copy takes: one where both sides' rows lie end to end,
// else one per row, but a PUT whose source rows alone are apart, which
// submit packs.
uint64_t copy_parts(const rig_edge_copy_t &c) {
  bool put_packed = in_host(c.src) && end_to_end(c, c.dst_pitch);
  return (end_to_end(c, c.src_pitch) && end_to_end(c, c.dst_pitch)) || put_packed ? 1 : c.rows;
}

bool fits_u32(uint64_t v) { return v <= UINT32_MAX; }

bool launch_fits(const rig_edge_launch_t &l) {
  if (l.param_bytes > net::wire::kParametersMax || l.ref_count > net::wire::kRefsMax) return false;
  if (!fits_u32(l.shared_bytes)) return false;
  for (int axis = 0; axis < 3; axis++)
    if (!fits_u32(l.groups[axis]) || !fits_u32(l.threads[axis])) return false;
  for (uint32_t j = 0; j < l.ref_count; j++) {
    const rig_edge_ref_t &r = l.refs[j];
    // The agent writes the addresses of places alone.
    if (r.kind == RIG_REF_ENTRY || in_host(r.memory) || !fits_u32(r.at)) return false;
  }
  return true;
}

}  // namespace

rig_edge_room_t RemoteDevice::room(const rig_edge_work_t &w) {
  uint64_t parts = 0;
  bool into_host = false;
  for (uint32_t i = 0; i < w.part_count; i++) {
    const rig_edge_part_t &p = w.parts[i];
    if (p.kind == RIG_PART_COPY) {
      const rig_edge_copy_t &c = p.u.copy;
      if (in_host(c.src) && in_host(c.dst)) return RIG_NEVER;
      // submit reads a PUT's bytes before the agent runs an earlier GET
      // (PROXY-42).
      if (in_host(c.src) && into_host) return RIG_NEVER;
      into_host = into_host || in_host(c.dst);
      parts += copy_parts(c);
    } else if (p.kind == RIG_PART_FILL) {
      if (in_host(p.u.fill.dst)) return RIG_NEVER;
      parts++;
    } else if (p.kind == RIG_PART_LAUNCH) {
      if (!launch_fits(p.u.launch)) return RIG_NEVER;
      parts++;
    } else if (p.kind == RIG_PART_WORDS) {
      // The machine's host alone runs them (PROXY-32, PROXY-41), on its
      // own memory: each write names an object and a word in it.
      const rig_edge_words_t &words = p.u.words;
      if (!is_host() || words.count == 0 || words.count > net::wire::kWordsMax) return RIG_NEVER;
      for (uint32_t j = 0; j < words.count; j++)
        if (in_host(words.writes[j].dst) || words.writes[j].dst.offset % 8 != 0) return RIG_NEVER;
      parts++;
    } else {
      return RIG_NEVER;
    }
  }
  if (parts > net::wire::kPartsMax || w.wait_count > net::wire::kWaitsMax) return RIG_NEVER;
  in_flight_.retire(signaled());
  return in_flight_.bytes() > most_bytes_in_flight ? RIG_LATER : RIG_ROOM;
}

namespace {

// A hand-over as submit builds it: the message, the GETs' landings by
// part, the bytes of PUTs it packed, and the other proxies' words a PUT
// waits for.
struct Built {
  wire::Handover h;
  std::map<uint32_t, Landing> gets;
  std::vector<std::vector<uint8_t>> packed;
  std::vector<std::pair<std::shared_ptr<Timeline>, uint64_t>> waits;
  bool puts = false;
  uint64_t moved = 0;  // what counts in flight
};

// Parts are made in place (emplace_back with in_place_type): GCC 12 at -O1
// warns of an uninitialized Launch when a part's variant is moved.
void add_copy(Built &b, const rig_edge_copy_t &c) {
  b.moved += c.width * c.rows;
  uint64_t rows = copy_parts(c);
  uint64_t width = rows == 1 ? c.width * c.rows : c.width;
  for (uint64_t row = 0; row < rows; row++) {
    rig_edge_location_t src = c.src, dst = c.dst;
    src.offset += row * c.src_pitch;
    dst.offset += row * c.dst_pitch;
    if (in_host(c.src)) {
      b.puts = true;
      const auto *from = static_cast<const uint8_t *>(c.src.address) + row * c.src_pitch;
      std::span<const uint8_t> bytes(from, width);
      if (!end_to_end(c, c.src_pitch) && rows == 1) {
        // Rows apart into rows end to end: packed, so that each crosses
        // the link once in one PUT (PROXY-51).
        std::vector<uint8_t> &pack = b.packed.emplace_back(c.width * c.rows);
        for (uint64_t r = 0; r < c.rows; r++)
          std::memcpy(pack.data() + r * c.width, from + r * c.src_pitch, c.width);
        bytes = pack;
      }
      b.h.parts.emplace_back(std::in_place_type<wire::Put>, wire::Put{place_of(dst), {bytes}});
    } else if (in_host(c.dst)) {
      auto *to = static_cast<std::byte *>(c.dst.address) + row * c.dst_pitch;
      b.gets[static_cast<uint32_t>(b.h.parts.size())] = Landing{to, width};
      b.h.parts.emplace_back(std::in_place_type<wire::Get>, wire::Get{place_of(src), width});
    } else {
      b.h.parts.emplace_back(std::in_place_type<wire::Copy>, wire::Copy{place_of(src), place_of(dst), width});
    }
  }
}

wire::Launch launch_of(const rig_edge_launch_t &l) {
  const auto *f = static_cast<const RemoteFunction *>(l.entry);
  wire::Launch launch;
  launch.image = f->image;
  launch.function = f->id;
  for (int axis = 0; axis < 3; axis++) {
    launch.grid[axis] = static_cast<uint32_t>(l.groups[axis]);
    launch.group[axis] = static_cast<uint32_t>(l.threads[axis]);
  }
  launch.shared_bytes = static_cast<uint32_t>(l.shared_bytes);
  launch.parameters = {{static_cast<const uint8_t *>(l.params), l.param_bytes}};
  for (uint32_t j = 0; j < l.ref_count; j++)
    launch.refs.push_back({place_of(l.refs[j].memory), static_cast<uint32_t>(l.refs[j].at)});
  return launch;
}

}  // namespace

void RemoteDevice::submit(const rig_edge_work_t &w) {
  link_->require_working();
  try {
    Built b;
    b.h.device = account_;
    b.h.value = w.value - timeline_->start;
    // A wait on a proxy of this link goes to the agent (PROXY-33), as the
    // agent numbers that proxy's values; rig waits for any other itself.
    for (uint32_t i = 0; i < w.wait_count; i++) {
      std::shared_ptr<Timeline> t = link_->timeline_of(w.waits[i].word);
      if (!t || w.waits[i].value <= t->start) continue;
      b.h.waits.push_back({t->account, w.waits[i].value - t->start});
      b.waits.emplace_back(std::move(t), w.waits[i].value);
    }
    for (uint32_t i = 0; i < w.part_count; i++) {
      const rig_edge_part_t &p = w.parts[i];
      if (p.kind == RIG_PART_COPY) {
        add_copy(b, p.u.copy);
      } else if (p.kind == RIG_PART_FILL) {
        b.h.parts.emplace_back(std::in_place_type<wire::Fill>,
                               wire::Fill{place_of(p.u.fill.dst), p.u.fill.bytes, p.u.fill.value});
      } else if (p.kind == RIG_PART_WORDS) {
        wire::Words words;
        for (uint32_t j = 0; j < p.u.words.count; j++)
          words.writes.push_back({place_of(p.u.words.writes[j].dst), p.u.words.writes[j].value});
        // Words count in flight as the bytes they write (PROXY-43).
        b.moved += 8 * uint64_t{p.u.words.count};
        b.h.parts.push_back(std::move(words));
      } else {
        b.h.parts.push_back(launch_of(p.u.launch));
      }
    }
    if (b.puts) {
      // The bytes a PUT sends are final once the work they follow is done
      // here (PROXY-48, PROXY-49).
      for (const auto &[t, value] : b.waits) link_->wait_for(*t, value);
      link_->wait_for(*timeline_, last_get_);
    }
    bool gets = !b.gets.empty();
    link_->hand_over(*timeline_, b.h, std::move(b.gets));
    in_flight_.add(w.value, b.moved);
    if (gets) last_get_ = w.value;
  } catch (const std::bad_alloc &) {
    throw Fault("out of memory for a hand-over");
  }
}

}  // namespace rig::remote
