// A hand-over's payload and its copies (handover.hpp).
#include "handover.hpp"

#include <cstdint>
#include <cstring>
#include <span>

namespace rigd {

namespace {

// A view of bytes bytes of the handle's buffer from offset, or NULL.
rig_buffer_t *view_of(const ClientObjects &objects, uint64_t handle, uint64_t offset, uint64_t bytes) {
  rig_buffer_t *whole = objects.get(handle);
  if (!whole) return nullptr;
  uint64_t size = static_cast<uint64_t>(rig_buffer_bytes(whole));
  rig_buffer_t *view = nullptr;
  if (offset <= size && bytes <= size - offset)
    rig_buffer_view(whole, static_cast<int64_t>(offset), static_cast<int64_t>(bytes), &view);
  rig_buffer_unref(whole);
  return view;
}

}  // namespace

std::optional<Handover> read_handover(const rig::proxy::PayloadArena &payload, uint64_t offset, uint64_t bytes) {
  rig_proxy_handover header;
  if (bytes < sizeof header || !payload.holds(offset, bytes)) return std::nullopt;
  std::vector<std::byte> copy(bytes);
  payload.copy_out(offset, copy);
  std::memcpy(&header, copy.data(), sizeof header);
  uint64_t waits_bytes = uint64_t{header.wait_count} * sizeof(rig_proxy_wait);
  uint64_t copies_bytes = uint64_t{header.copy_count} * sizeof(rig_proxy_copy);
  if (sizeof header + waits_bytes + copies_bytes != bytes) return std::nullopt;
  Handover h;
  h.waits.resize(header.wait_count);
  h.copies.resize(header.copy_count);
  // An empty vector's data() may be NULL, which memcpy may not take.
  if (waits_bytes) std::memcpy(h.waits.data(), copy.data() + sizeof header, waits_bytes);
  if (copies_bytes) std::memcpy(h.copies.data(), copy.data() + sizeof header + waits_bytes, copies_bytes);
  return h;
}

HeldCopies::~HeldCopies() {
  for (const Sides &s : sides_) {
    rig_buffer_unref(s.src);
    rig_buffer_unref(s.dst);
  }
}

bool hold_copies(const ClientObjects &objects, const std::vector<rig_proxy_copy> &copies, HeldCopies &held) {
  for (const rig_proxy_copy &c : copies) {
    if (c.bytes == 0) return false;
    rig_buffer_t *src = view_of(objects, c.src, c.src_offset, c.bytes);
    rig_buffer_t *dst = view_of(objects, c.dst, c.dst_offset, c.bytes);
    if (!src || !dst) {
      rig_buffer_unref(src);
      rig_buffer_unref(dst);
      return false;
    }
    held.add(src, dst);
  }
  return true;
}

rig_status_t submit_copies(const HeldCopies &held, const std::vector<rig_point_t> &waits,
                           std::vector<rig_point_t> &points) {
  for (const HeldCopies::Sides &s : held.sides()) {
    rig_box_t row = rig_row(0, 0, rig_buffer_bytes(s.src));
    rig_point_t done;
    rig_status_t status = rig_buffer_submit_copy(s.src, s.dst, &row, 1, waits.data(), waits.size(), &done);
    if (status != RIG_OK) return status;
    points.push_back(done);
  }
  return RIG_OK;
}

}  // namespace rigd
