// The sim driver's two queues, driven through the driver interface itself
// (lib/driver.hpp, include/rig/edge.h), as rig drives it: parts on the
// compute and copy queues, each queue in order, each part after the parts
// its after list names, and the word raised once both queues are done.
// The sim is linked here without the core: these stand-ins give it what it
// takes from rig.
#include "driver.hpp"

#include <criterion/criterion.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace rig {
Driver *sim_driver = nullptr;
void register_driver(Driver *d) {
  if (std::string(d->prefix()) == "SIM") sim_driver = d;
}
}  // namespace rig

extern "C" {
int rig_holds(void) { return 0; }
void rig_hold(int) {}
void rig_unblock(void) {}
void rig_block(void) {}
}

namespace {

constexpr uint32_t kCompute = 0, kCopy = 1;

std::unique_ptr<rig::DriverDevice> open_sim() {
  cr_assert_not_null(rig::sim_driver, "the sim driver registered itself");
  return rig::sim_driver->open("SIM:0", "", 0);
}

rig_edge_location_t at(void *p) { return rig_edge_location_t{p, 0, 0}; }

rig_edge_part_t copy(uint32_t queue, void *dst, const void *src, uint64_t n, const std::vector<uint32_t> &after) {
  rig_edge_part_t p{};
  p.kind = RIG_PART_COPY;
  p.queue = queue;
  p.after = after.data();
  p.after_count = static_cast<uint32_t>(after.size());
  p.u.copy = {at(const_cast<void *>(src)), at(dst), n, 1, n, n};
  return p;
}

// Submits and commits one value, then waits for the word to show it.
void run(rig::DriverDevice &d, uint64_t value, const std::vector<rig_edge_part_t> &parts) {
  rig_edge_work_t w{value, parts.data(), static_cast<uint32_t>(parts.size()), nullptr, 0};
  cr_assert_eq(d.room(w), RIG_ROOM);
  d.submit(w);
  d.commit(value);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (d.facts().word->load() < value) {
    cr_assert(std::chrono::steady_clock::now() < deadline, "value %llu never completed", (unsigned long long)value);
    d.sleep(d.facts().word->load(), 100);
  }
}

}  // namespace

Test(sim_queues, the_device_has_a_compute_and_a_copy_queue) {
  auto d = open_sim();
  cr_assert_eq(d->facts().queues.size(), 2u);
  cr_assert_eq(d->facts().queues[kCompute], "COMPUTE:0");
  cr_assert_eq(d->facts().queues[kCopy], "COPY:0");
  cr_assert_eq(d->facts().copy_engine, static_cast<int>(kCopy));
  d->stop(std::nullopt, 0);
}

// A part on one queue that names a part of the other in its after list
// runs after it: a compute-queue copy of b, after the copy queue's large
// copy a -> b, sees all of a.  Without the order the compute worker would
// copy b while the copy worker still writes it.
Test(sim_queues, a_part_follows_the_parts_its_after_list_names) {
  auto d = open_sim();
  const uint64_t n = uint64_t{32} << 20;
  std::vector<uint8_t> a(n), b(n, 0), c(n, 0);
  for (uint64_t i = 0; i < n; i++) a[i] = static_cast<uint8_t>(i * 7 + 1);
  std::vector<uint32_t> none, after_first{0};
  run(*d, 1, {copy(kCopy, b.data(), a.data(), n, none), copy(kCompute, c.data(), b.data(), n, after_first)});
  cr_assert_eq(std::memcmp(c.data(), a.data(), n), 0, "the compute part ran before the copy it follows");
  d->stop(std::nullopt, 1);
}

// Parts of one queue run in order: the later copy into one place wins.
Test(sim_queues, the_parts_of_one_queue_run_in_order) {
  auto d = open_sim();
  const uint64_t n = 1 << 20;
  std::vector<uint8_t> first(n, 1), second(n, 2), out(n, 0);
  std::vector<uint32_t> none;
  for (uint32_t q : {kCompute, kCopy}) {
    std::fill(out.begin(), out.end(), 0);
    run(*d, 1 + q, {copy(q, out.data(), first.data(), n, none), copy(q, out.data(), second.data(), n, none)});
    cr_assert_eq(out[0], 2);
    cr_assert_eq(out[n - 1], 2, "queue %u ran its parts out of order", q);
  }
  d->stop(std::nullopt, 2);
}

// The word shows a value only once the parts of both queues are done, and
// a value runs after every lower one (device order).
Test(sim_queues, a_value_completes_once_both_queues_are_done) {
  auto d = open_sim();
  const uint64_t n = uint64_t{16} << 20;
  std::vector<uint8_t> src(n, 5), x(n, 0), y(n, 0), z(n, 0);
  std::vector<uint32_t> none;
  rig_edge_part_t parts1[] = {copy(kCopy, x.data(), src.data(), n, none), copy(kCompute, y.data(), src.data(), n, none)};
  rig_edge_part_t parts2[] = {copy(kCompute, z.data(), x.data(), n, none)};
  rig_edge_work_t w1{1, parts1, 2, nullptr, 0}, w2{2, parts2, 1, nullptr, 0};
  d->submit(w1);
  d->submit(w2);
  d->commit(2);
  while (d->facts().word->load() < 2) d->sleep(d->facts().word->load(), 100);
  cr_assert_eq(x[n - 1], 5);
  cr_assert_eq(y[n - 1], 5);
  cr_assert_eq(z[n - 1], 5, "value 2 ran before value 1's copy queue was done");
  d->stop(std::nullopt, 2);
}
