// What an io device's calls check and compare of the buffers they take,
// beside rig.h's properties, as the core's own calls do.
#pragma once

#include <rig/rig.h>

namespace rig {

// Throws RIG_EINVAL unless b is a live buffer: not released, not dead.
void require_buffer(const rig_buffer_t *b, const char *what);
// The allocation b's memory lies in, as an identity only: buffers over one
// allocation answer the same.  b is live.
const void *allocation_of(const rig_buffer_t *b);

}  // namespace rig
