// A stress of the shared-memory rings (drivers/proxy/ring.hpp) as plain C++
// with an exit status, so that it runs under ThreadSanitizer too (Criterion
// cannot start there): a producer and a consumer thread pass 300,000
// entries through a small ring, the consumer sleeping on the futex whenever
// it finds the ring empty, and a second pair passes the answers back.
// Exits 0 if every entry and answer arrived in order and intact.
#include "ring.hpp"

#include <array>
#include <cstdio>
#include <thread>

using namespace rig::proxy;

namespace {

constexpr uint32_t capacity = 4;
constexpr uint64_t entries = 300000;

template <class Entry>
struct Ring {
  rig_proxy_ring_header header{};
  std::array<Entry, capacity> slots{};
  RingProducer<Entry> producer() { return {&header, slots.data(), capacity}; }
  RingConsumer<Entry> consumer() { return {&header, slots.data(), capacity}; }
};

template <class Entry>
bool push(RingProducer<Entry> &p, const Entry &e) {
  RingStatus s;
  while ((s = p.push(e)) == RingStatus::full) std::this_thread::yield();
  return s == RingStatus::ok;
}

template <class Entry>
bool pop(RingConsumer<Entry> &c, Entry &e) {
  RingStatus s;
  while ((s = c.pop(e)) == RingStatus::empty) c.sleep(1000);
  return s == RingStatus::ok;
}

}  // namespace

int main() {
  Ring<rig_proxy_entry> requests;
  Ring<rig_proxy_completion> answers;
  bool served = true;
  std::thread server([&] {
    auto in = requests.consumer();
    auto out = answers.producer();
    for (uint64_t i = 0; i < entries && served; ++i) {
      rig_proxy_entry e;
      rig_proxy_completion c{};
      served = pop(in, e) && e.tag == i && e.args[0] == ~i;
      c.tag = e.tag;
      c.value = e.args[0];
      served = served && push(out, c);
    }
  });
  auto out = requests.producer();
  auto in = answers.consumer();
  uint64_t answered = 0;
  bool ok = true;
  for (uint64_t i = 0; i < entries && ok; ++i) {
    rig_proxy_entry e{};
    e.tag = i;
    e.args[0] = ~i;
    ok = push(out, e);
    // Takes the answers there are, keeping the answer ring from filling.
    rig_proxy_completion c;
    while (ok && in.pop(c) == RingStatus::ok) {
      ok = c.tag == answered && c.value == ~answered;
      ++answered;
    }
  }
  for (rig_proxy_completion c; ok && answered < entries; ++answered)
    ok = pop(in, c) && c.tag == answered && c.value == ~answered;
  server.join();
  if (!ok || !served) {
    std::fprintf(stderr, "stress_rings: an entry or an answer was lost or changed (after %lu answers)\n",
                 static_cast<unsigned long>(answered));
    return 1;
  }
  return 0;
}
