// The sim driver's two queues, driven through the driver interface itself
// (rig_internal/driver.hpp, include/rig/edge.h), as rig drives it: parts on the
// compute and copy queues, each queue in order, each part after the parts
// its after list names, and the word raised once both queues are done;
// launches on the compute queue, whose functions here are the test's own
// (an entry's handle is the function's address).
// The sim is linked here without the core: these stand-ins give it what it
// takes from rig.
#include "rig_internal/driver.hpp"
#include "../../drivers/sim/sim_inject.h"

#include <criterion/criterion.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
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

namespace {

// A launch part of f over groups x threads with the n bytes of params.
rig_edge_part_t launch(void (*f)(const void *, int64_t, int64_t), const void *params, uint64_t n,
                       std::array<uint64_t, 3> groups, std::array<uint64_t, 3> threads,
                       const std::vector<uint32_t> &after) {
  rig_edge_part_t p{};
  p.kind = RIG_PART_LAUNCH;
  p.queue = kCompute;
  p.after = after.data();
  p.after_count = static_cast<uint32_t>(after.size());
  p.u.launch.entry = reinterpret_cast<const void *>(f);
  p.u.launch.params = params;
  p.u.launch.param_bytes = n;
  for (int axis = 0; axis < 3; axis++) {
    p.u.launch.groups[axis] = groups[axis];
    p.u.launch.threads[axis] = threads[axis];
  }
  return p;
}

// The calls of a launch of record_calls, whose parameters point at it.
struct Calls {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> ranges;
};

void record_calls(const void *params, int64_t first, int64_t end) {
  Calls *calls = *static_cast<Calls *const *>(params);
  std::lock_guard<std::mutex> g(calls->mu);
  calls->ranges.emplace_back(first, end);
}

// The spec's add (rig.txt, Objects), compiled into the test.
struct Add {
  const float *x, *y;
  float *z;
  int64_t n;
};

void add(const void *params, int64_t first, int64_t end) {
  auto *p = static_cast<const Add *>(params);
  for (int64_t i = first; i < end && i < p->n; i++) p->z[i] = p->x[i] + p->y[i];
}

const rig_sim_inject_t &inject(rig::DriverDevice &d) {
  for (const auto &[key, value] : d.facts().capabilities)
    if (key == RIG_SIM_INJECT_KEY) return *static_cast<const rig_sim_inject_t *>(value);
  cr_assert_fail("the sim states no injection capability");
  std::abort();
}

}  // namespace

// HOST-09..11 as the sim keeps them: the threads of a 3-axis grid are
// groups * threads-per-group, and the calls run whole groups that
// partition them.
Test(sim_queues, a_launch_calls_whole_groups_that_partition_its_threads) {
  auto d = open_sim();
  Calls calls;
  Calls *params = &calls;
  std::vector<uint32_t> none;
  // 3 * 2 * 5 = 30 groups of 4 * 1 * 2 = 8 threads.
  run(*d, 1, {launch(record_calls, &params, sizeof params, {3, 2, 5}, {4, 1, 2}, none)});
  std::sort(calls.ranges.begin(), calls.ranges.end());
  int64_t next = 0;
  for (auto [first, end] : calls.ranges) {
    cr_assert_eq(first, next, "a call starts at %lld where %lld was due", (long long)first, (long long)next);
    cr_assert_gt(end, first);
    cr_assert_eq(first % 8, 0, "a call starts inside a group");
    cr_assert_eq(end % 8, 0, "a call ends inside a group");
    next = end;
  }
  cr_assert_eq(next, 240, "the calls ran %lld of 240 threads", (long long)next);
  d->stop(std::nullopt, 1);
}

// The parameters live only until submit returns (rig_edge_launch_t): the
// launch runs with the bytes they held at submit.
Test(sim_queues, a_launch_runs_with_its_parameters_as_submit_saw_them) {
  auto d = open_sim();
  const int64_t n = 1000;
  std::vector<float> x(n), y(n), z(n, 0);
  for (int64_t i = 0; i < n; i++) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(2 * i);
  }
  Add params{x.data(), y.data(), z.data(), n};
  std::vector<uint32_t> none;
  rig_edge_part_t parts[] = {launch(add, &params, sizeof params, {8, 1, 1}, {128, 1, 1}, none)};
  rig_edge_work_t w{1, parts, 1, nullptr, 0};
  cr_assert_eq(d->room(w), RIG_ROOM);
  d->submit(w);
  params = Add{nullptr, nullptr, nullptr, 0};  // as the caller may, once submit returned
  d->commit(1);
  while (d->facts().word->load() < 1) d->sleep(d->facts().word->load(), 100);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(z[i], static_cast<float>(3 * i), "z[%lld] = %f", (long long)i, z[i]);
  d->stop(std::nullopt, 1);
}

// A launch on the compute queue after a copy on the copy engine that its
// after list names reads what the copy wrote.
Test(sim_queues, a_launch_follows_the_parts_its_after_list_names) {
  auto d = open_sim();
  const int64_t n = int64_t{4} << 20;
  std::vector<float> a(n, 1.5f), b(n, 0), zero(n, 0), z(n, 0);
  Add params{b.data(), zero.data(), z.data(), n};
  std::vector<uint32_t> none, after_copy{0};
  run(*d, 1, {copy(kCopy, b.data(), a.data(), n * sizeof(float), none),
              launch(add, &params, sizeof params, {64, 1, 1}, {static_cast<uint64_t>(n) / 64, 1, 1}, after_copy)});
  cr_assert_eq(z[0], 1.5f);
  cr_assert_eq(z[n - 1], 1.5f, "the launch ran before the copy it follows");
  d->stop(std::nullopt, 1);
}

// SUB-22 as the sim answers it: a launch with shared memory, an axis of
// zero, or more than 2^62 threads fits no submission (room: RIG_NEVER).
Test(sim_queues, room_refuses_launches_that_never_run) {
  auto d = open_sim();
  Calls calls;
  Calls *params = &calls;
  std::vector<uint32_t> none;
  auto room_of = [&](rig_edge_part_t part) {
    rig_edge_work_t w{1, &part, 1, nullptr, 0};
    return d->room(w);
  };
  rig_edge_part_t ok = launch(record_calls, &params, sizeof params, {2, 2, 2}, {2, 2, 2}, none);
  cr_assert_eq(room_of(ok), RIG_ROOM);
  rig_edge_part_t shared = ok;
  shared.u.launch.shared_bytes = 64;
  cr_assert_eq(room_of(shared), RIG_NEVER, "shared memory");
  for (int axis = 0; axis < 3; axis++) {
    rig_edge_part_t zero = ok;
    zero.u.launch.groups[axis] = 0;
    cr_assert_eq(room_of(zero), RIG_NEVER, "zero groups on axis %d", axis);
    zero = ok;
    zero.u.launch.threads[axis] = 0;
    cr_assert_eq(room_of(zero), RIG_NEVER, "zero threads on axis %d", axis);
  }
  rig_edge_part_t at_most = launch(record_calls, &params, sizeof params, {1u << 31, 1u << 30, 1}, {2, 1, 1}, none);
  cr_assert_eq(room_of(at_most), RIG_ROOM, "2^62 threads may run");
  rig_edge_part_t too_many = at_most;
  too_many.u.launch.threads[0] = 4;
  cr_assert_eq(room_of(too_many), RIG_NEVER, "2^63 threads");
  too_many = at_most;
  too_many.u.launch.groups[2] = uint64_t{1} << 40;  // a product past 2^64
  cr_assert_eq(room_of(too_many), RIG_NEVER, "2^102 threads");
  cr_assert(calls.ranges.empty(), "room ran a launch");
  d->stop(std::nullopt, 0);
}

// A launch counts for fault_at as any part: the value that faults never
// runs its launch.
Test(sim_queues, a_fault_injected_at_a_launch_runs_none_of_it) {
  auto d = open_sim();
  Calls calls;
  Calls *params = &calls;
  std::vector<uint32_t> none;
  const rig_sim_inject_t &in = inject(*d);
  in.fault_at(in.device, 1, "injected at the launch");
  rig_edge_part_t part = launch(record_calls, &params, sizeof params, {4, 1, 1}, {1, 1, 1}, none);
  rig_edge_work_t w{1, &part, 1, nullptr, 0};
  d->submit(w);
  d->commit(1);
  bool faulted = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!faulted && std::chrono::steady_clock::now() < deadline) {
    try {
      d->sleep(d->facts().word->load(), 100);
    } catch (const rig::Fault &) {
      faulted = true;
    }
  }
  cr_assert(faulted, "the device never reported the fault");
  cr_assert_lt(d->facts().word->load(), 1u);
  cr_assert(calls.ranges.empty(), "the faulted value ran its launch");
  d->stop(std::string("injected at the launch"), 0);
}

// The sim loads code as the host does: bytes that are no ELF object are
// refused with a reason.
Test(sim_queues, the_sim_refuses_an_image_that_is_no_object) {
  auto d = open_sim();
  const char junk[] = "not an ELF object";
  auto answer = d->image(junk, sizeof junk);
  cr_assert(std::holds_alternative<std::string>(answer), "junk loaded");
  cr_assert_not(std::get<std::string>(answer).empty(), "a refusal without a reason");
  d->stop(std::nullopt, 0);
}
