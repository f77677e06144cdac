// The client's placement of payloads in its payload arena (protocol.h):
// one after another, wrapping at the arena's end, each kept until rigd
// has released the entry that carries it, so that hand-overs, which rigd
// does not answer, may queue up in the ring with their payloads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace rig::proxy {

class PayloadSpace {
 public:
  // arena_bytes: the arena's size; entries: the submission ring's capacity,
  // the most entries that hold payloads at once.
  PayloadSpace(uint64_t arena_bytes, uint32_t entries);

  // The offset for the bytes-byte payload of entry number `entry` of the
  // submission ring, or nullopt while the payloads of entries rigd has not
  // released leave no room for it; released: the entries rigd released
  // (RingProducer::look).  bytes is at most the arena's size.
  std::optional<uint64_t> place(uint32_t entry, uint64_t bytes, uint32_t released);

 private:
  struct Held {
    uint32_t entry;
    uint64_t end;  // where the payload ends, counted as next_ counts
  };

  uint64_t arena_bytes_;
  uint64_t next_ = 0;   // bytes placed since the start, skipped tails included
  uint64_t freed_ = 0;  // bytes before the first payload still held
  std::vector<Held> held_;  // a ring of the payloads still held, oldest first
  size_t first_ = 0, count_ = 0;
};

}  // namespace rig::proxy
