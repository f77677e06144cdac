// A hand-over's payload, copied out of the client's arena and checked, and
// its copies run on the served device through rig's C API.
#pragma once

#include "client_objects.hpp"
#include "protocol.h"
#include "ring.hpp"

#include <rig/rig.h>

#include <optional>
#include <vector>

namespace rigd {

struct Handover {
  std::vector<rig_proxy_wait> waits;
  std::vector<rig_proxy_copy> copies;
};

// The hand-over at [offset, offset + bytes) of the payload arena, copied out
// first, or nothing if it leaves the arena or its counts do not match its
// size exactly.
std::optional<Handover> read_handover(const rig::proxy::PayloadArena &payload, uint64_t offset, uint64_t bytes);

// The buffers of a hand-over's copies: a view of each side's bytes, owned.
class HeldCopies {
 public:
  HeldCopies() = default;
  ~HeldCopies();
  HeldCopies(const HeldCopies &) = delete;
  HeldCopies &operator=(const HeldCopies &) = delete;

  void add(rig_buffer_t *src, rig_buffer_t *dst) { sides_.push_back({src, dst}); }
  struct Sides {
    rig_buffer_t *src;
    rig_buffer_t *dst;
  };
  const std::vector<Sides> &sides() const noexcept { return sides_; }

 private:
  std::vector<Sides> sides_;
};

// Views of the bytes of each copy, into held; false if a copy names a
// handle objects does not hold, or bytes outside its buffer.
bool hold_copies(const ClientObjects &objects, const std::vector<rig_proxy_copy> &copies, HeldCopies &held);

// Submits each held copy after waits, its point appended to points; stops
// at the first that fails and answers its status.
rig_status_t submit_copies(const HeldCopies &held, const std::vector<rig_point_t> &waits,
                           std::vector<rig_point_t> &points);

}  // namespace rigd
