// One ring of protocol.h in shared memory: its producer's end and its
// consumer's end, for one producer and one consumer, which may live in two
// processes that map the same memory.
//
// Each end keeps its own counter and the ring's shape in its own memory and
// reads from shared memory only the other end's counter, which it checks
// before it trusts it: a counter that leaves the window the ring allows
// (more entries than its capacity, or moving back) is a breach of the
// protocol, reported as RingStatus::breach by every later call.
//
// The consumer copies each entry out of its slot before it releases the
// slot, and hands out only the copy: whatever a peer writes meanwhile, what
// the caller validates is what it then uses.  PayloadArena does the same for
// bytes that do not fit an entry.
#pragma once

#include "protocol.h"
#include "rig_internal/spin.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace rig::proxy {

enum class RingStatus {
  ok,
  empty,  // the consumer found no entry, or a wait ended with none
  full,   // the producer found every slot taken
  breach  // the peer broke the ring's protocol: this end is done with it
};

// Blocks while the 32-bit word at word holds expected, for at most
// timeout_ms milliseconds (negative: no bound).  Returns early on a wake, a
// signal or a spurious return; the caller reads the word again.  The word may
// lie in memory that other processes map (no FUTEX_PRIVATE_FLAG).
void futex_wait(uint32_t *word, uint32_t expected, int timeout_ms) noexcept;

// Wakes at most count threads that futex_wait on word, in any process.
void futex_wake(uint32_t *word, int count) noexcept;

// A client's sleep on a proxy's timeline word (protocol.h): while its 64
// bits at value hold seen, for at most timeout_ms, counted in *sleepers so
// that rigd wakes it.  Returns early on a wake or a signal.
void sleep_on_word(const uint64_t *value, uint64_t seen, uint32_t *sleepers, int timeout_ms) noexcept;

// rigd's side: stores value into the word at word (sequentially
// consistent), then wakes its sleepers if *sleepers counts any.
void raise_word(uint64_t *word, uint64_t value, const uint32_t *sleepers) noexcept;
// Wakes the word's sleepers if *sleepers counts any, after a store of rigd's
// that they must see (sequentially consistent).
void wake_word(uint64_t *word, const uint32_t *sleepers) noexcept;

// The counters of the producer's end.  Not thread-safe: one producer.
// It takes up the ring where its header's counters stand (a breach if they
// are impossible).
class ProducerCounters {
 public:
  ProducerCounters(rig_proxy_ring_header *header, uint32_t capacity) noexcept;

  // The slot for the next entry; full if the consumer has consumed too
  // little, breach if the head it published is impossible.  With fresh
  // false it reads the consumer's head only where the head it last read
  // leaves no slot free, sparing the line the consumer writes.
  RingStatus reserve(uint32_t &slot, bool fresh = true) noexcept;

  // Publishes the entry written into the reserved slot (release order),
  // and wakes the consumer if its flag says it sleeps.
  void publish() noexcept;

  // How many times publish woke the consumer with a system call.
  uint64_t wakes() const noexcept { return wakes_; }

  // The entries this end published, and those the consumer had released
  // at the last reserve: entry n (counting from 0) is released once
  // released() - n - 1 < 2^31 in 32-bit arithmetic.
  uint32_t published() const noexcept { return tail_; }
  uint32_t released() const noexcept { return head_seen_; }

 private:
  rig_proxy_ring_header *header_;
  uint32_t capacity_;
  uint32_t tail_;       // the entries this end wrote
  uint32_t head_seen_;  // the consumer's head as last read
  uint64_t wakes_ = 0;
  bool breached_;
};

// The counters of the consumer's end.  Not thread-safe: one consumer.
// It takes up the ring as the producer's end does.
class ConsumerCounters {
 public:
  ConsumerCounters(rig_proxy_ring_header *header, uint32_t capacity) noexcept;

  // The slot of the next entry (acquire order: its bytes are visible), or
  // empty, or breach if the tail the producer published is impossible.
  RingStatus peek(uint32_t &slot) noexcept;

  // Gives the slot peek named back to the producer, once copied out.
  void release() noexcept;

  // Sleeps until the producer publishes an entry or timeout_ms milliseconds
  // pass (negative: no bound): sets the needs-wakeup flag, looks again, and
  // waits on the flag's futex only if the ring is still empty.  ok if an
  // entry is there, empty if none came, breach as peek.
  RingStatus sleep(int timeout_ms) noexcept;

 private:
  RingStatus available() noexcept;

  rig_proxy_ring_header *header_;
  uint32_t capacity_;
  uint32_t head_;       // the entries this end consumed
  uint32_t tail_seen_;  // the producer's tail as last read
  bool breached_;
};

// Whether n is a capacity a ring may have: a power of two, at least 1, at
// most 2^31 so that the counters' window fits their 32 bits.
bool valid_ring_capacity(uint64_t n) noexcept;

// The producer's end of a ring of Entry slots.
template <class Entry>
class RingProducer {
  static_assert(std::is_trivially_copyable_v<Entry>);

 public:
  // capacity is valid_ring_capacity's; this end's own knowledge of the ring.
  RingProducer(rig_proxy_ring_header *header, Entry *slots, uint32_t capacity) noexcept
      : counters_(header, capacity), slots_(slots) {}

  // Writes entry into the next slot and publishes it (fresh: as reserve's).
  RingStatus push(const Entry &entry, bool fresh = true) noexcept {
    uint32_t slot = 0;
    RingStatus status = counters_.reserve(slot, fresh);
    if (status != RingStatus::ok) return status;
    std::memcpy(&slots_[slot], &entry, sizeof entry);
    counters_.publish();
    return RingStatus::ok;
  }

  uint64_t wakes() const noexcept { return counters_.wakes(); }

  // Reads the consumer's head as push does (with fresh false, only where
  // the head last read leaves no slot free): full while no slot is free.
  // *next is the number the next entry pushed gets, *released the entries
  // before it that the consumer released, as far as this end knows.
  RingStatus look(uint32_t &next, uint32_t &released, bool fresh = true) noexcept {
    uint32_t slot = 0;
    RingStatus status = counters_.reserve(slot, fresh);
    next = counters_.published();
    released = counters_.released();
    return status;
  }

 private:
  ProducerCounters counters_;
  Entry *slots_;
};

// The consumer's end of a ring of Entry slots.
template <class Entry>
class RingConsumer {
  static_assert(std::is_trivially_copyable_v<Entry>);

 public:
  RingConsumer(rig_proxy_ring_header *header, Entry *slots, uint32_t capacity) noexcept
      : counters_(header, capacity), slots_(slots) {}

  // Copies the next entry into out and frees its slot.  out is this
  // process's own copy: validate it, never the slot.
  RingStatus pop(Entry &out) noexcept {
    RingStatus status = peek(out);
    if (status == RingStatus::ok) release();
    return status;
  }

  // Copies the next entry into out and keeps its slot, so that the producer
  // reuses nothing of the entry's (its payload too) until release.
  RingStatus peek(Entry &out) noexcept {
    uint32_t slot = 0;
    RingStatus status = counters_.peek(slot);
    if (status == RingStatus::ok) std::memcpy(&out, &slots_[slot], sizeof out);
    return status;
  }

  // Frees the slot of the entry peek copied.
  void release() noexcept { counters_.release(); }

  RingStatus sleep(int timeout_ms) noexcept { return counters_.sleep(timeout_ms); }

 private:
  ConsumerCounters counters_;
  Entry *slots_;
};

// A payload arena in shared memory, with its size as this side knows it.
class PayloadArena {
 public:
  PayloadArena(std::byte *base, uint64_t bytes) noexcept : base_(base), bytes_(bytes) {}

  // Whether [offset, offset + length) lies inside the arena.
  bool holds(uint64_t offset, uint64_t length) const noexcept {
    return offset <= bytes_ && length <= bytes_ - offset;
  }

  // Copies the length bytes at offset into out (out.size() == length) and
  // answers true, or answers false, copying nothing, if they leave the arena.
  bool copy_out(uint64_t offset, std::span<std::byte> out) const noexcept;

  // Copies in to offset, or answers false, copying nothing, if it leaves the
  // arena.
  bool copy_in(uint64_t offset, std::span<const std::byte> in) noexcept;

 private:
  std::byte *base_;
  uint64_t bytes_;
};

}  // namespace rig::proxy
