/* rigd's instances of its served devices (served.hpp), in this process:
 * an instance that nothing holds any more goes back to its served device,
 * with its work done and its memory returned, on rigd's release worker
 * (releases.hpp), so that letting go waits for nothing; the next client that
 * opens the device with the same configuration takes it again; a lost
 * instance, and one past the idle ones a served device keeps, is closed.
 * Without this a rigd would open an instance for every client that ever
 * came (the requests fuzzer found it: a record per client's instance).
 *
 * No rule ID: rigd's instances are its own design (DESIGN.md "The per-host
 * service"), beside the spec's devices. */
#include "served.hpp"

#include <criterion/criterion.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

using rigd::Instance;
using rigd::ServedDevices;

namespace {

constexpr size_t sim = 0;  // SIM:0, the first device served below
constexpr int64_t bytes = 4096;

// An instance of SIM:0 with config, which must open.
std::shared_ptr<Instance> take(const ServedDevices &served, const char *config = "") {
  std::shared_ptr<Instance> instance = served.open_instance(sim, config);
  cr_assert(instance != nullptr, "SIM:0 opens an instance: %s", rig_last_error());
  return instance;
}

// Fills a new buffer of d with byte, waits, and returns the buffer.
rig_buffer_t *filled(rig_device_t *d, uint8_t byte) {
  rig_buffer_t *b = nullptr;
  cr_assert_eq(rig_buffer_create(d, bytes, RIG_MEMORY_DEVICE, &b), RIG_OK, "%s", rig_last_error());
  rig_point_t p{};
  cr_assert_eq(rig_buffer_submit_fill(b, byte, nullptr, 0, &p), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_point_wait(p), RIG_OK, "%s", rig_last_error());
  return b;
}

// Waits for the instances that went back to finish their release.
void settle(const ServedDevices &served) {
  cr_assert(served.finish_releases(std::chrono::steady_clock::now() + std::chrono::seconds(30)),
            "the releases finish");
}

}  // namespace

Test(instances, a_released_instance_serves_the_next_client_holding_nothing) {
  ServedDevices served({"SIM:0"});
  constexpr const char *slow = "latency_us=20000";
  auto first = take(served, slow);
  rig_device_t *d = first->device();
  // Work still running as its client goes: each value takes 20 ms.
  rig_buffer_t *b = filled(d, 1);
  rig_point_t last{};
  cr_assert_eq(rig_buffer_submit_fill(b, 2, nullptr, 0, &last), RIG_OK);
  rig_buffer_unref(b);
  first.reset();
  settle(served);
  cr_assert_null(rig_lost(d), "the instance is kept, not closed");
  uint64_t reported = 0;
  cr_assert_eq(rig_signaled(d, &reported), RIG_OK);
  cr_assert_geq(reported, rig_point_value(last), "its work was done before it went back");
  cr_assert_eq(rig_allocated(d), 0, "its memory went back to the driver: %lld bytes held",
               static_cast<long long>(rig_allocated(d)));
  cr_assert_eq(served.allocated(sim), 0, "the served device's count includes idle instances");

  auto second = take(served, slow);
  cr_assert_eq(second->device(), d, "the next client takes the idle instance");
  rig_buffer_unref(filled(second->device(), 3));
}

Test(instances, an_instance_is_taken_again_only_with_its_configuration) {
  ServedDevices served({"SIM:0"});
  rig_device_t *plain = take(served)->device();
  settle(served);
  auto configured = take(served, "latency_us=1");
  cr_assert_neq(configured->device(), plain, "other configuration: another instance");
  cr_assert_str_neq(rig_device_name(configured->device()), rig_device_name(plain));
  settle(served);
  cr_assert_eq(take(served)->device(), plain, "the same configuration takes the idle one");
}

Test(instances, a_lost_instance_is_closed_and_never_taken_again) {
  ServedDevices served({"SIM:0"});
  auto faulting = take(served, "fault_at=1");
  rig_device_t *d = faulting->device();
  rig_buffer_t *b = nullptr;
  cr_assert_eq(rig_buffer_create(d, bytes, RIG_MEMORY_DEVICE, &b), RIG_OK);
  rig_point_t p{};
  cr_assert_eq(rig_buffer_submit_fill(b, 1, nullptr, 0, &p), RIG_OK);
  cr_assert_eq(rig_point_wait(p), RIG_ELOST, "value 1 faults");
  rig_buffer_unref(b);
  faulting.reset();
  settle(served);
  auto next = take(served, "fault_at=1");
  cr_assert_neq(next->device(), d, "a lost instance is not taken again");
}

Test(instances, instances_past_the_idle_ones_kept_are_closed) {
  ServedDevices served({"SIM:0"});
  std::vector<std::shared_ptr<Instance>> many;
  for (int i = 0; i < 65; i++) many.push_back(take(served));
  std::vector<rig_device_t *> devices;
  for (const auto &instance : many) devices.push_back(instance->device());
  // The 65th goes back once the 64 others are idle: releases run on
  // several workers, in no order among those handed over together.
  std::shared_ptr<Instance> last = many.back();
  many.pop_back();
  many.clear();
  settle(served);
  last.reset();
  settle(served);
  for (size_t i = 0; i < 64; i++) cr_assert_null(rig_lost(devices[i]), "instance %zu is idle", i);
  cr_assert_str_eq(rig_lost(devices[64]), "closed");
}

/* The last hold of an instance whose client left slow work on it (each
 * value 1 s) returns at once, on whatever thread lets go (a client's
 * poller freeing an import of the memory, rigd's shutdown): the release
 * worker waits for the work, and the instance goes back once it is done. */
Test(instances, letting_go_of_an_instance_waits_for_none_of_its_work) {
  ServedDevices served({"SIM:0"});
  auto slow = take(served, "latency_us=1000000");
  rig_device_t *d = slow->device();
  rig_buffer_t *b = nullptr;
  cr_assert_eq(rig_buffer_create(d, bytes, RIG_MEMORY_DEVICE, &b), RIG_OK, "%s", rig_last_error());
  rig_point_t last{};
  for (uint8_t byte = 0; byte < 3; ++byte) cr_assert_eq(rig_buffer_submit_fill(b, byte, nullptr, 0, &last), RIG_OK);
  rig_buffer_unref(b);
  auto start = std::chrono::steady_clock::now();
  slow.reset();
  auto took = std::chrono::steady_clock::now() - start;
  cr_assert_lt(took, std::chrono::milliseconds(500), "letting go took %lld ms, its work 3 s",
               static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  std::vector<std::string> busy = served.busy();
  cr_assert(busy.size() == 1 && busy.front() == rig_device_name(d), "the release waits for the work");
  settle(served);
  uint64_t reported = 0;
  cr_assert_eq(rig_signaled(d, &reported), RIG_OK);
  cr_assert_geq(reported, rig_point_value(last), "the instance went back once its work was done");
  cr_assert(served.busy().empty());
}
