// The counters of a shared-memory ring (ring.hpp).
//
// The producer stores its tail with release order after writing the entry,
// and the consumer loads it with acquire order before copying the entry out;
// the consumer stores its head with release order after its copy, and the
// producer loads it with acquire order before reusing the slot.
//
// The needs-wakeup flag is a Dekker pair: the consumer stores the flag then
// loads the tail, the producer stores the tail then loads the flag, all four
// sequentially consistent (not fences, which ThreadSanitizer does not
// model), so at least one of them sees the other's store: either the
// consumer finds the entry and does not sleep, or the producer finds the
// flag and wakes it.  No entry is left behind a sleeping consumer.  On
// x86-64 the stores cost what a fence would and the loads nothing more.
#include "ring.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

namespace rig::proxy {

namespace {

using Word = std::atomic_ref<uint32_t>;
static_assert(Word::is_always_lock_free, "ring words must be lock-free to be shared by processes");

uint32_t load_acquire(uint32_t &word) noexcept { return Word(word).load(std::memory_order_acquire); }

void store_release(uint32_t &word, uint32_t value) noexcept {
  Word(word).store(value, std::memory_order_release);
}

}  // namespace

void futex_wait(uint32_t *word, uint32_t expected, int timeout_ms) noexcept {
  timespec timeout{timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1000000L};
  // Any answer will do (woken, EAGAIN for a word that moved, EINTR,
  // ETIMEDOUT): the caller reads the word again.
  syscall(SYS_futex, word, FUTEX_WAIT, expected, timeout_ms < 0 ? nullptr : &timeout, nullptr, 0);
}

void sleep_on_word(const uint64_t *value, uint64_t seen, uint32_t *sleepers, int timeout_ms) noexcept {
  std::atomic_ref<uint32_t> count(*sleepers);
  count.fetch_add(1, std::memory_order_seq_cst);
  auto *word = const_cast<uint64_t *>(value);
  if (std::atomic_ref<uint64_t>(*word).load(std::memory_order_seq_cst) == seen)
    // The kernel compares the low half (the host is little-endian).
    futex_wait(reinterpret_cast<uint32_t *>(word), static_cast<uint32_t>(seen), timeout_ms);
  count.fetch_sub(1, std::memory_order_seq_cst);
}

void wake_word(uint64_t *word, const uint32_t *sleepers) noexcept {
  if (std::atomic_ref<uint32_t>(*const_cast<uint32_t *>(sleepers)).load(std::memory_order_seq_cst) != 0)
    futex_wake(reinterpret_cast<uint32_t *>(word), INT32_MAX);
}

void raise_word(uint64_t *word, uint64_t value, const uint32_t *sleepers) noexcept {
  std::atomic_ref<uint64_t>(*word).store(value, std::memory_order_seq_cst);
  wake_word(word, sleepers);
}

void futex_wake(uint32_t *word, int count) noexcept {
  syscall(SYS_futex, word, FUTEX_WAKE, count, nullptr, nullptr, 0);
}

bool valid_ring_capacity(uint64_t n) noexcept {
  return n != 0 && n <= (uint64_t{1} << 31) && (n & (n - 1)) == 0;
}

ProducerCounters::ProducerCounters(rig_proxy_ring_header *header, uint32_t capacity) noexcept
    : header_(header),
      capacity_(capacity),
      tail_(load_acquire(header->tail)),
      head_seen_(load_acquire(header->head)),
      breached_(tail_ - head_seen_ > capacity) {}

RingStatus ProducerCounters::reserve(uint32_t &slot, bool fresh) noexcept {
  if (breached_) return RingStatus::breach;
  if (!fresh && tail_ - head_seen_ < capacity_) {
    slot = tail_ & (capacity_ - 1);
    return RingStatus::ok;
  }
  uint32_t head = load_acquire(header_->head);
  // The head may only have moved forward from where it was seen, and no
  // further than the tail this end wrote.
  if (tail_ - head > capacity_ || tail_ - head > tail_ - head_seen_) {
    breached_ = true;
    return RingStatus::breach;
  }
  head_seen_ = head;
  if (tail_ - head == capacity_) return RingStatus::full;
  slot = tail_ & (capacity_ - 1);
  return RingStatus::ok;
}

void ProducerCounters::publish() noexcept {
  ++tail_;
  Word(header_->tail).store(tail_, std::memory_order_seq_cst);
  Word sleeping(header_->sleeping);
  if (sleeping.load(std::memory_order_seq_cst) != 0 &&
      sleeping.exchange(0, std::memory_order_relaxed) != 0) {
    futex_wake(&header_->sleeping, 1);
    ++wakes_;
  }
}

ConsumerCounters::ConsumerCounters(rig_proxy_ring_header *header, uint32_t capacity) noexcept
    : header_(header),
      capacity_(capacity),
      head_(load_acquire(header->head)),
      tail_seen_(load_acquire(header->tail)),
      breached_(tail_seen_ - head_ > capacity) {}

RingStatus ConsumerCounters::available() noexcept {
  if (breached_) return RingStatus::breach;
  // Sequentially consistent for sleep's Dekker pair; acquire would do for pop.
  uint32_t tail = Word(header_->tail).load(std::memory_order_seq_cst);
  // The tail may hold at most a ring of entries past the head, and may not
  // move back from where it was seen.
  if (tail - head_ > capacity_ || tail - head_ < tail_seen_ - head_) {
    breached_ = true;
    return RingStatus::breach;
  }
  tail_seen_ = tail;
  return tail == head_ ? RingStatus::empty : RingStatus::ok;
}

RingStatus ConsumerCounters::peek(uint32_t &slot) noexcept {
  RingStatus status = available();
  if (status == RingStatus::ok) slot = head_ & (capacity_ - 1);
  return status;
}

void ConsumerCounters::release() noexcept {
  ++head_;
  store_release(header_->head, head_);
}

RingStatus ConsumerCounters::sleep(int timeout_ms) noexcept {
  Word sleeping(header_->sleeping);
  sleeping.store(1, std::memory_order_seq_cst);
  RingStatus status = available();
  if (status == RingStatus::empty) {
    futex_wait(&header_->sleeping, 1, timeout_ms);
    status = available();
  }
  sleeping.store(0, std::memory_order_relaxed);
  return status;
}

bool PayloadArena::copy_out(uint64_t offset, std::span<std::byte> out) const noexcept {
  if (!holds(offset, out.size())) return false;
  if (!out.empty()) std::memcpy(out.data(), base_ + offset, out.size());
  return true;
}

bool PayloadArena::copy_in(uint64_t offset, std::span<const std::byte> in) noexcept {
  if (!holds(offset, in.size())) return false;
  if (!in.empty()) std::memcpy(base_ + offset, in.data(), in.size());
  return true;
}

}  // namespace rig::proxy
