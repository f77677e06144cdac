// Shared segments: memfds that rigd maps and passes to a client.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rigd {

// Whether a client may write a segment.
enum class ClientAccess { read_only, read_write };

// A memfd of a fixed size, zeroed, mapped read-write in rigd and sealed
// against shrinking and growing, so that no client can make rigd fault on
// memory that vanished.  A read_only segment is also sealed against new
// writable mappings (F_SEAL_FUTURE_WRITE): a client maps it only to read,
// while rigd's own mapping stays writable.
class Segment {
 public:
  // Throws std::system_error if the memfd cannot be made or mapped.
  Segment(const char *name, uint64_t bytes, ClientAccess access);
  ~Segment();
  Segment(const Segment &) = delete;
  Segment &operator=(const Segment &) = delete;

  int fd() const noexcept { return fd_; }
  std::byte *base() const noexcept { return base_; }
  uint64_t bytes() const noexcept { return bytes_; }

 private:
  int fd_ = -1;
  std::byte *base_ = nullptr;
  uint64_t bytes_;
};

}  // namespace rigd
