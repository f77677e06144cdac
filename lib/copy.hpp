// What copies share with submissions' copy parts.
#pragma once

#include "buffer.hpp"

#include <optional>

namespace rig {

// Where side's bytes lie for x's copy engine when x reaches them directly:
// memory on x (its own or a borrow on it), memory the host addresses where
// x's work runs on the host, or memory the host does not page that x maps
// (a peer's, another driver's host-addressed memory); nullopt otherwise.  May make a mapping that lasts until the memory
// returns.
std::optional<rig_edge_location_t> direct_location(rig_buffer_t *side, rig_device_t *x);

}  // namespace rig
