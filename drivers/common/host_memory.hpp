// Host memory for drivers whose memory the host addresses (host, memory,
// sim): a region is a HostBlock.  Blocks of 64 KiB and four pages or more
// are mapped pages, which fault in at their first write; smaller ones come
// from the C library on the alignment asked.
#pragma once

#include <rig/edge.h>

#include <cstddef>
#include <cstdint>

namespace rig {

struct HostBlock {
  void *address;
  size_t bytes;
  bool mapped;  // mmap'd pages, new from the system and zero, rather than the C library's memory
};

// nullptr when the system has no memory for it.
HostBlock *host_block_alloc(int64_t bytes, size_t small_alignment);
void host_block_free(HostBlock *b);
inline rig_edge_location_t host_block_location(const HostBlock *b) {
  return rig_edge_location_t{b->address, 0, 0};
}

// Runs one part whose locations are host addresses: a copy's rows, a fill's
// bytes, a words part's writes.
void run_part_on_host(const rig_edge_part_t &part);

}  // namespace rig
