// Host arenas: memfds a client shares with rigd, wrapped as rig buffers so
// that a served device copies to and from them directly.
#pragma once

#include <rig/rig.h>

#include <cstdint>

namespace rigd {

// *out is a host buffer over the bytes bytes of the memfd fd, mapped shared;
// rig unmaps them once no buffer over them remains.  RIG_EINVAL, with
// nothing mapped, if fd is not sealed against shrinking (a client could
// otherwise cut the memory from under a copy) or is smaller than bytes.
// The caller keeps fd.
rig_status_t map_arena(int fd, uint64_t bytes, rig_buffer_t **out);

}  // namespace rigd
