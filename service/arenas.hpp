// Host arenas: memfds a client shares with rigd, wrapped as rig buffers so
// that a served device copies to and from them directly.
#pragma once

#include <rig/rig.h>

#include <cstdint>
#include <string>

namespace rigd {

// *out is a host buffer over the bytes bytes of the memfd fd, mapped shared;
// rig unmaps them once no buffer over them remains.  RIG_EINVAL, with
// nothing mapped and the reason in *why, if fd is no memfd on tmpfs (a
// huge-page memfd is refused: hugetlbfs lets a client punch holes in it
// whatever its seals), is not sealed against shrinking (a client could
// otherwise cut the memory from under a copy) or is smaller than bytes.
// fd may be any descriptor a client passed: the first call on it asks
// whether it is a memfd (passed_descriptors.hpp).  The caller keeps fd.
rig_status_t map_arena(int fd, uint64_t bytes, rig_buffer_t **out, std::string *why);

}  // namespace rigd
