// Memory new from the system, written by the host: a copy or fill that
// writes a large range whose pages do not exist yet faults them in with
// one call first, rather than one fault per 4 KiB page as it writes.
// On a 2-core virtual machine, 1 GiB into new anonymous memory: a page
// at a time 2.0-2.1 GB/s, populated first 2.7-2.9 GB/s; into memory
// already present, populating again would cost 9-32 % of the copy, which
// the check of the range's first page avoids.  (A read from a file into
// new memory has its own populator, on a thread beside the reads:
// io/page_populator.hpp.)
#pragma once

#include <cstdint>

namespace rig {

// Faults in the whole pages of [dst, dst + n) for writing
// (MADV_POPULATE_WRITE) where n is at least 1 MiB and the range's first
// whole page is not resident.  A hint: it fails silently (an older
// kernel, a mapping that takes no population, no memory), leaving the
// faults to the writes.
void populate_new_pages(void *dst, int64_t n);

}  // namespace rig
