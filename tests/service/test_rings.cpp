/* Tests of the shared-memory rings of rigd's protocol (drivers/proxy/ring.hpp).
 *
 * No rule ID: the rings are the design's link for the per-host service
 * (the spec's Link, DESIGN.md "The per-host service": hot path and trust).
 * Asserts: one producer and one consumer pass every entry, in order and
 * intact, across two threads and across two processes over a memfd, with
 * the consumer sleeping on the futex when the ring is empty; the producer
 * wakes the consumer with a system call only when its flag says it sleeps;
 * a head or tail outside the ring's window is a breach, and stays one; the
 * payload arena copies nothing that leaves it. */
#include "ring.hpp"
#include "ring_segment.hpp"

#include <criterion/criterion.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

using namespace rig::proxy;

namespace {

constexpr uint32_t capacity = 8;
// Enough entries to wrap the small rings many times over, few enough to
// keep the suite quick.
constexpr uint64_t entry_count = 20000;

// A ring of capacity rig_proxy_entry slots in this process's memory.
struct LocalRing {
  rig_proxy_ring_header header{};
  std::array<rig_proxy_entry, capacity> slots{};

  RingProducer<rig_proxy_entry> producer() { return {&header, slots.data(), capacity}; }
  RingConsumer<rig_proxy_entry> consumer() { return {&header, slots.data(), capacity}; }
};

rig_proxy_entry numbered(uint64_t i) {
  rig_proxy_entry e{};
  e.opcode = RIG_PROXY_OP_NOP;
  e.tag = i;
  e.args[0] = i * 3;
  e.args[3] = ~i;
  return e;
}

bool is_numbered(const rig_proxy_entry &e, uint64_t i) {
  return e.tag == i && e.args[0] == i * 3 && e.args[3] == ~i;
}

template <class Entry>
void push_all_or_fail(RingProducer<Entry> &producer, const Entry &entry) {
  RingStatus status;
  while ((status = producer.push(entry)) == RingStatus::full) std::this_thread::yield();
  cr_assert(status == RingStatus::ok, "push: status %d", static_cast<int>(status));
}

// Pops the next entry, sleeping on the ring while it is empty.
template <class Entry>
RingStatus pop_waiting(RingConsumer<Entry> &consumer, Entry &out) {
  RingStatus status;
  while ((status = consumer.pop(out)) == RingStatus::empty) consumer.sleep(1000);
  return status;
}

uint32_t load(uint32_t &word) { return std::atomic_ref<uint32_t>(word).load(); }

}  // namespace

Test(rings, spsc_two_threads_every_entry_in_order, .timeout = 30) {
  LocalRing ring;
  std::thread producer_thread([&] {
    auto producer = ring.producer();
    for (uint64_t i = 0; i < entry_count; ++i) push_all_or_fail(producer, numbered(i));
  });
  auto consumer = ring.consumer();
  for (uint64_t i = 0; i < entry_count; ++i) {
    rig_proxy_entry e;
    cr_assert(pop_waiting(consumer, e) == RingStatus::ok, "entry %lu", static_cast<unsigned long>(i));
    cr_assert(is_numbered(e, i), "entry %lu arrived as tag %lu", static_cast<unsigned long>(i),
              static_cast<unsigned long>(e.tag));
  }
  producer_thread.join();
  rig_proxy_entry extra;
  cr_assert(consumer.pop(extra) == RingStatus::empty, "no entry beyond those pushed");
}

// The child plays the client: it submits numbered entries and checks each
// completion; the parent plays rigd: it answers each entry with its tag and
// args[0] doubled.  Both sleep on the futex when their ring is empty.
Test(rings, spsc_two_processes_over_a_memfd, .timeout = 30) {
  auto layout = lay_out_ring_segment({capacity, capacity, 4096});
  cr_assert(layout.has_value());
  int fd = memfd_create("rig-ring-test", MFD_CLOEXEC);
  cr_assert(fd >= 0);
  cr_assert(ftruncate(fd, static_cast<off_t>(layout->segment.bytes)) == 0);
  void *base = mmap(nullptr, layout->segment.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  cr_assert(base != MAP_FAILED);
  std::memcpy(base, &*layout, sizeof *layout);
  RingSegment segment(static_cast<std::byte *>(base), *layout);

  pid_t child = fork();
  cr_assert(child >= 0);
  if (child == 0) {
    // Maps the segment anew, as a client maps the fd rigd passes it.
    void *mine = mmap(nullptr, layout->segment.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    rig_proxy_ring_segment header;
    std::memcpy(&header, mine, sizeof header);
    if (mine == MAP_FAILED || !valid_ring_segment(header, layout->segment.bytes)) _exit(2);
    RingSegment client(static_cast<std::byte *>(mine), header);
    auto submissions = client.submission_producer();
    auto completions = client.completion_consumer();
    uint64_t answered = 0;
    for (uint64_t i = 0; i < entry_count; ++i) {
      RingStatus status;
      while ((status = submissions.push(numbered(i))) == RingStatus::full) {
        rig_proxy_completion c;
        if (pop_waiting(completions, c) != RingStatus::ok || c.tag != answered || c.value != answered * 6) _exit(3);
        ++answered;
      }
      if (status != RingStatus::ok) _exit(4);
    }
    for (; answered < entry_count; ++answered) {
      rig_proxy_completion c;
      if (pop_waiting(completions, c) != RingStatus::ok || c.tag != answered || c.value != answered * 6) _exit(3);
    }
    _exit(0);
  }

  auto submissions = segment.submission_consumer();
  auto completions = segment.completion_producer();
  for (uint64_t i = 0; i < entry_count; ++i) {
    rig_proxy_entry e;
    cr_assert(pop_waiting(submissions, e) == RingStatus::ok);
    cr_assert(is_numbered(e, i), "entry %lu arrived as tag %lu", static_cast<unsigned long>(i),
              static_cast<unsigned long>(e.tag));
    rig_proxy_completion c{};
    c.tag = e.tag;
    c.value = e.args[0] * 2;
    push_all_or_fail(completions, c);
  }
  int status = 0;
  cr_assert(waitpid(child, &status, 0) == child);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the client side failed: status %#x", status);
  munmap(base, layout->segment.bytes);
  close(fd);
}

// A consumer that slept with an entry waiting would hang: the timeout fails it.
Test(rings, producer_wakes_only_a_sleeping_consumer, .timeout = 10) {
  LocalRing ring;
  auto producer = ring.producer();
  auto consumer = ring.consumer();
  rig_proxy_entry e;

  cr_assert(producer.push(numbered(0)) == RingStatus::ok);
  cr_assert(producer.wakes() == 0, "no consumer sleeps: the push makes no system call");
  cr_assert(consumer.sleep(-1) == RingStatus::ok, "an entry waits: sleep returns at once");
  cr_assert(load(ring.header.sleeping) == 0, "a consumer that did not sleep leaves no flag");
  cr_assert(consumer.pop(e) == RingStatus::ok && is_numbered(e, 0));

  std::atomic<int> slept{-1};
  std::thread sleeper([&] { slept = static_cast<int>(consumer.sleep(-1)); });
  while (load(ring.header.sleeping) == 0) std::this_thread::yield();
  cr_assert(producer.push(numbered(1)) == RingStatus::ok);
  sleeper.join();
  cr_assert(slept == static_cast<int>(RingStatus::ok), "the sleeper woke to an entry");
  cr_assert(producer.wakes() == 1, "one wake for one sleep, made %lu", static_cast<unsigned long>(producer.wakes()));
  cr_assert(load(ring.header.sleeping) == 0);

  cr_assert(producer.push(numbered(2)) == RingStatus::ok);
  cr_assert(producer.wakes() == 1, "the consumer is awake again: no system call");
  cr_assert(consumer.pop(e) == RingStatus::ok && is_numbered(e, 1));
  cr_assert(consumer.pop(e) == RingStatus::ok && is_numbered(e, 2));
}

Test(rings, sleep_ends_after_its_timeout_with_no_entry) {
  LocalRing ring;
  auto consumer = ring.consumer();
  cr_assert(consumer.sleep(1) == RingStatus::empty);
  cr_assert(load(ring.header.sleeping) == 0);
}

Test(rings, full_ring_refuses_then_takes_after_a_pop) {
  LocalRing ring;
  auto producer = ring.producer();
  auto consumer = ring.consumer();
  for (uint64_t i = 0; i < capacity; ++i) cr_assert(producer.push(numbered(i)) == RingStatus::ok);
  cr_assert(producer.push(numbered(capacity)) == RingStatus::full);
  rig_proxy_entry e;
  cr_assert(consumer.pop(e) == RingStatus::ok && is_numbered(e, 0));
  cr_assert(producer.push(numbered(capacity)) == RingStatus::ok);
}

Test(rings, tail_beyond_capacity_is_a_breach_that_stays, .timeout = 10) {
  LocalRing ring;
  auto consumer = ring.consumer();
  ring.header.tail = capacity + 1;
  rig_proxy_entry e;
  cr_assert(consumer.pop(e) == RingStatus::breach);
  ring.header.tail = 1;
  cr_assert(consumer.pop(e) == RingStatus::breach, "a breach stays one once the tail looks sane");
  cr_assert(consumer.sleep(-1) == RingStatus::breach, "a breached consumer does not sleep");
}

Test(rings, tail_moving_back_is_a_breach) {
  LocalRing ring;
  auto producer = ring.producer();
  auto consumer = ring.consumer();
  for (uint64_t i = 0; i < 3; ++i) cr_assert(producer.push(numbered(i)) == RingStatus::ok);
  rig_proxy_entry e;
  cr_assert(consumer.pop(e) == RingStatus::ok);
  ring.header.tail = 2;  // takes back an entry the consumer has seen published
  cr_assert(consumer.pop(e) == RingStatus::breach);
}

Test(rings, head_beyond_the_tail_is_a_breach) {
  LocalRing ring;
  auto producer = ring.producer();
  cr_assert(producer.push(numbered(0)) == RingStatus::ok);
  ring.header.head = 2;  // consumed an entry never written
  cr_assert(producer.push(numbered(1)) == RingStatus::breach);
  ring.header.head = 1;
  cr_assert(producer.push(numbered(1)) == RingStatus::breach, "a breach stays one");
}

Test(rings, head_moving_back_is_a_breach) {
  LocalRing ring;
  auto producer = ring.producer();
  auto consumer = ring.consumer();
  rig_proxy_entry e;
  for (uint64_t i = 0; i < 2; ++i) cr_assert(producer.push(numbered(i)) == RingStatus::ok);
  cr_assert(consumer.pop(e) == RingStatus::ok && consumer.pop(e) == RingStatus::ok);
  cr_assert(producer.push(numbered(2)) == RingStatus::ok);
  ring.header.head = 1;
  cr_assert(producer.push(numbered(3)) == RingStatus::breach);
}

Test(rings, counters_wrap_at_32_bits) {
  // Ends that take up a ring standing 2 entries before the counters wrap:
  // entries pass across the wrap, in order.
  LocalRing ring;
  ring.header.head = ring.header.tail = UINT32_MAX - 1;
  auto producer = ring.producer();
  auto consumer = ring.consumer();
  rig_proxy_entry e;
  for (uint64_t i = 0; i < 2 * capacity; ++i) {
    cr_assert(producer.push(numbered(i)) == RingStatus::ok);
    cr_assert(consumer.pop(e) == RingStatus::ok && is_numbered(e, i));
  }
  cr_assert(ring.header.tail == 2 * capacity - 2);
}

Test(rings, an_end_taking_up_an_impossible_ring_is_breached) {
  LocalRing ring;
  ring.header.head = 0;
  ring.header.tail = capacity + 1;
  auto producer = ring.producer();
  auto consumer = ring.consumer();
  rig_proxy_entry e;
  cr_assert(producer.push(numbered(0)) == RingStatus::breach);
  cr_assert(consumer.pop(e) == RingStatus::breach);
}

Test(rings, payload_arena_copies_nothing_that_leaves_it) {
  std::array<std::byte, 64> memory{};
  PayloadArena arena(memory.data(), memory.size());
  std::array<std::byte, 8> bytes{};
  bytes.fill(std::byte{0x5a});
  cr_assert(arena.copy_in(56, bytes));
  cr_assert(memory[63] == std::byte{0x5a});
  cr_assert(!arena.copy_in(57, bytes), "one byte past the end");
  cr_assert(!arena.copy_out(UINT64_MAX - 2, bytes), "an offset whose sum wraps");
  cr_assert(!arena.copy_out(65, std::span<std::byte>()), "an empty copy past the end");
  std::array<std::byte, 8> out{};
  cr_assert(arena.copy_out(56, out) && out == bytes);
}
