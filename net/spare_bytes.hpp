// Large byte blocks kept for reuse rather than mapped anew: a fresh block
// of 64 MiB faults in 16,384 pages, each cleared by the kernel (34 ms on a
// 2-core machine, as long as the link takes to carry the block), where a
// spare one is ready at once.  The agent lands its clients' messages in
// them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace rig::net {

class SpareBytes {
 public:
  // Blocks from kLeast bytes on are kept (smaller ones come from the heap,
  // whose pages stay mapped), at most most_blocks of them and most_bytes
  // in all.
  static constexpr size_t kLeast = size_t{1} << 20;
  SpareBytes(size_t most_blocks, uint64_t most_bytes) : most_blocks_(most_blocks), most_bytes_(most_bytes) {
    spares_.reserve(most_blocks);  // give never allocates
  }

  // A block of size bytes: the smallest spare that has room for them (from
  // kLeast bytes on), its bytes as they were but for those past its former
  // size (0), or a new one of zeros.  Throws std::bad_alloc as a vector's
  // resize does.
  std::vector<uint8_t> take(size_t size);
  // Keeps block (its bytes do not matter) for a later take, where it is
  // large enough and there is room; the smallest spares go first.  Any
  // thread.
  void give(std::vector<uint8_t> block) noexcept;

  // What is kept now (for tests).
  size_t blocks() const;

 private:
  const size_t most_blocks_;
  const uint64_t most_bytes_;
  mutable std::mutex mutex_;
  std::vector<std::vector<uint8_t>> spares_;  // by capacity, smallest first
};

}  // namespace rig::net
