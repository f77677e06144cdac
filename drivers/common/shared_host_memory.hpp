// Host memory that another process can map: while a process is connected
// to rigd, the host's blocks of kSharedBlockMin bytes or more (staging's
// among them) are pages of a memfd, sealed against shrinking, so that the
// proxy driver can pass them to rigd as host arenas and a served device
// moves their bytes itself.  Each holds a file descriptor: only blocks so
// large that a process holds few of them are shared, and smaller host
// buffers reach a proxy through staging anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace rig {

// The size of staging's chunks (checked against rig_internal/staging.hpp):
// host blocks of at least this many bytes are shared once the process
// shares host memory.
constexpr size_t kSharedBlockMin = size_t{32} << 20;

// From now on, host_block_alloc's blocks of kSharedBlockMin bytes or more
// are shared blocks.
void share_host_memory();

// Maps bytes of fresh zeroed shared pages, or nullptr (errno set) where the
// system has no memfd or no memory for them; nullptr too before
// share_host_memory, so that the caller maps private pages instead.
void *shared_block_map(size_t bytes);
// Ends a mapping shared_block_map made.  false if address is none of its.
bool shared_block_unmap(void *address);

// The shared block that holds [address, address + bytes): its memfd (owned
// by the block: valid while the block is mapped), its start and size.
struct SharedBlock {
  int fd;
  void *base;
  size_t bytes;
};
std::optional<SharedBlock> find_shared_block(const void *address, size_t bytes);

}  // namespace rig
