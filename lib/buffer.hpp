// Buffers: a range of bytes of one allocation, on one device.
#pragma once

#include "allocation.hpp"

struct rig_buffer {
  std::atomic<int64_t> refs{1};
  rig::Allocation *alloc = nullptr;
  rig_device_t *device = nullptr;  // the device the buffer is on
  int64_t offset = 0;              // of its first byte in the allocation
  int64_t length = 0;
  bool borrowed = false;           // over memory that its device does not hold
  // The borrow this buffer is or views, which holds the borrowing device's
  // mapping; nullptr for a buffer on the memory's own device.
  rig_buffer *borrow = nullptr;
  rig::Mapping *mapping = nullptr;  // held by a borrow itself, not its views
};

namespace rig {

// Throws RIG_EINVAL unless b is a live buffer.
void require_buffer(const rig_buffer_t *b, const char *what);
// Where b's first byte lies for the work of its device.
rig_edge_location_t location_of(const rig_buffer_t *b);
// b's host address, or nullptr.
void *host_address(const rig_buffer_t *b);

}  // namespace rig
