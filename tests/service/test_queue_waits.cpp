/* Order between proxies of one connection, as rigd keeps it: a hand-over
 * carries the waits of its value on other proxies' values, and the served
 * device's queue waits, not the client (PROXY-33: a wait on a proxy of the same
 * link goes to the agent in the hand-over and is not waited for in this
 * process; PROXY-39: the agent runs the hand-over's parts after what it
 * waits for).
 *
 * rigd serves SIM:0 and SIM:1 whose work takes 400 ms (RIG_SIM's
 * latency_us): the client fills a buffer of SIM:0@rigd and copies it to
 * SIM:1@rigd; the copy's submit returns while the fill is still running,
 * and the copy's bytes are the fill's.  And no false order: a value on one
 * served device completes while another device's earlier value runs on. */
#include "rigd_process.hpp"

#include <rig/rig.h>
#include <rig/service.h>

#include <criterion/criterion.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

Test(queue_waits, a_hand_over_waits_on_another_proxy_in_rigd, .timeout = 60) {
  // rigd inherits the knob; the test process opens no sim device.
  setenv("RIG_SIM", "latency_us=400000", 1);
  RigdProcess rigd = start_rigd({"--devices", "SIM:0,SIM:1"});
  unsetenv("RIG_SIM");
  rig_service_options_t options{sizeof options, rigd.socket.c_str()};
  cr_assert(rig_service_connect(&options) == RIG_OK, "%s", rig_last_error());
  rig_device_t *first = nullptr, *second = nullptr;
  cr_assert(rig_open("SIM:0@rigd", nullptr, &first) == RIG_OK, "%s", rig_last_error());
  cr_assert(rig_open("SIM:1@rigd", nullptr, &second) == RIG_OK, "%s", rig_last_error());
  cr_assert(rig_reaches(second, first), "rigd's SIM:1 maps SIM:0's memory");

  constexpr int64_t n = 4096;
  rig_buffer_t *source = nullptr, *target = nullptr;
  cr_assert(rig_buffer_create(first, n, RIG_MEMORY_DEVICE, &source) == RIG_OK);
  cr_assert(rig_buffer_create(second, n, RIG_MEMORY_DEVICE, &target) == RIG_OK);
  rig_point_t filled, copied;
  cr_assert(rig_buffer_submit_fill(source, 0x5a, nullptr, 0, &filled) == RIG_OK, "%s", rig_last_error());
  rig_box_t row = rig_row(0, 0, n);
  cr_assert(rig_buffer_submit_copy(source, target, &row, 1, nullptr, 0, &copied) == RIG_OK, "%s", rig_last_error());
  bool fill_done = true;
  cr_assert(rig_point_reached(filled, &fill_done) == RIG_OK);
  cr_expect(!fill_done, "PROXY-33: the copy's submit waited in the client for the fill");
  cr_assert(rig_device_equal(rig_point_device(copied), second), "SIM:1@rigd runs the copy");

  cr_assert(rig_point_wait(copied) == RIG_OK, "%s", rig_last_error());
  std::vector<uint8_t> bytes(n);
  cr_assert(rig_buffer_blit_to_bytes(target, 0, bytes.data(), n, 0, n) == RIG_OK, "%s", rig_last_error());
  for (int64_t i = 0; i < n; i++) cr_assert_eq(bytes[i], 0x5a, "PROXY-39: byte %lld is not the fill's", (long long)i);
  cr_assert(rig_point_reached(filled, &fill_done) == RIG_OK && fill_done);
  rig_buffer_unref(source);
  rig_buffer_unref(target);
}

Test(queue_waits, a_slow_device_holds_back_no_other_devices_values, .timeout = 60) {
  /* DESIGN.md "The per-host service": rigd raises each proxy's word as its
   * own values are done.  A value on rigd's MEM:0 completes while an earlier
   * value of the same client on its slow SIM:0 runs on (PROXY-80: the word
   * holds the last value done). */
  setenv("RIG_SIM", "latency_us=2000000", 1);
  RigdProcess rigd = start_rigd({"--devices", "SIM:0,MEM:0"});
  unsetenv("RIG_SIM");
  rig_service_options_t options{sizeof options, rigd.socket.c_str()};
  cr_assert(rig_service_connect(&options) == RIG_OK, "%s", rig_last_error());
  rig_device_t *slow = nullptr, *fast = nullptr;
  cr_assert(rig_open("SIM:0@rigd", nullptr, &slow) == RIG_OK, "%s", rig_last_error());
  cr_assert(rig_open("MEM:0@rigd", nullptr, &fast) == RIG_OK, "%s", rig_last_error());
  rig_buffer_t *on_slow = nullptr, *on_fast = nullptr;
  cr_assert(rig_buffer_create(slow, 4096, RIG_MEMORY_DEVICE, &on_slow) == RIG_OK);
  cr_assert(rig_buffer_create(fast, 4096, RIG_MEMORY_DEVICE, &on_fast) == RIG_OK);
  rig_point_t slow_fill, fast_fill;
  cr_assert(rig_buffer_submit_fill(on_slow, 1, nullptr, 0, &slow_fill) == RIG_OK, "%s", rig_last_error());
  cr_assert(rig_buffer_submit_fill(on_fast, 2, nullptr, 0, &fast_fill) == RIG_OK, "%s", rig_last_error());
  cr_assert(rig_point_wait(fast_fill) == RIG_OK, "%s", rig_last_error());
  bool slow_done = true;
  cr_assert(rig_point_reached(slow_fill, &slow_done) == RIG_OK);
  cr_expect(!slow_done, "MEM:0@rigd's value waited for SIM:0@rigd's");
  cr_assert(rig_point_wait(slow_fill) == RIG_OK, "%s", rig_last_error());
  rig_buffer_unref(on_slow);
  rig_buffer_unref(on_fast);
}
