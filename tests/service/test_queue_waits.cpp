/* The queues of proxies, as rigd keeps them.
 *
 * Order between proxies of one connection: a hand-over carries the waits of
 * its value on other proxies' values, and the served device's queue waits,
 * not the client (PROXY-33: a wait on a proxy of the same link goes to the
 * agent in the hand-over and is not waited for in this process; PROXY-39:
 * the agent runs the hand-over's parts after what it waits for).  No false
 * order: a value on one served device completes while another device's
 * earlier value runs on.  Room: a proxy with nothing in flight takes any
 * submission, and one with more than 64 MiB in flight answers RIG_LATER, so
 * rig waits for its next value before it submits (PROXY-43, PROXY-44).
 * Words: a proxy of the machine's host (CPU@rigd) runs them after what they
 * wait for, and any other proxy refuses them (PROXY-39, PROXY-41).
 *
 * rigd's sim devices run slowly (RIG_SIM's latency_us), so that the tests
 * see work still running. */
#include "rigd_process.hpp"

#include <rig/rig.h>
#include <rig/service.h>

#include <criterion/criterion.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// A rigd serving devices whose sim work takes latency_us at least, and this
// process connected to it.
RigdProcess slow_rigd(const char *devices, const char *latency_us) {
  // rigd inherits the knob; the test process opens no sim device.
  setenv("RIG_SIM", (std::string("latency_us=") + latency_us).c_str(), 1);
  RigdProcess rigd = start_rigd({"--devices", devices});
  unsetenv("RIG_SIM");
  rig_service_options_t options{sizeof options, rigd.socket.c_str()};
  cr_assert(rig_service_connect(&options, NULL) == RIG_OK, "%s", rig_last_error());
  return rigd;
}

rig_device_t *open_proxy(const char *name) {
  rig_device_t *d = nullptr;
  cr_assert(rig_open(name, nullptr, &d) == RIG_OK, "%s: %s", name, rig_last_error());
  return d;
}

rig_buffer_t *create(rig_device_t *d, int64_t n) {
  rig_buffer_t *b = nullptr;
  cr_assert(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &b) == RIG_OK, "%s", rig_last_error());
  return b;
}

bool reached(rig_point_t p) {
  bool done = false;
  cr_assert(rig_point_reached(p, &done) == RIG_OK, "%s", rig_last_error());
  return done;
}

rig_point_t fill(rig_buffer_t *b, uint8_t value) {
  rig_point_t p;
  cr_assert(rig_buffer_submit_fill(b, value, nullptr, 0, &p) == RIG_OK, "%s", rig_last_error());
  return p;
}

rig_point_t copy(rig_buffer_t *src, rig_buffer_t *dst) {
  rig_box_t row = rig_row(0, 0, rig_buffer_bytes(src));
  rig_point_t p;
  cr_assert(rig_buffer_submit_copy(src, dst, &row, 1, nullptr, 0, &p) == RIG_OK, "%s", rig_last_error());
  return p;
}

// Submits a words part of the n writes on d, their memory the n buffers
// (slot j for write j), after waits; answers rig_submit's status.
rig_status_t submit_words(rig_device_t *d, rig_word_write_t *writes, size_t n, rig_buffer_t *const *buffers,
                          const rig_point_t *waits, size_t nwaits, rig_point_t *out) {
  rig_part_t words{};
  words.kind = RIG_WORDS;
  words.u.words.writes = writes;
  words.u.words.count = n;
  rig_submission_t *submission = nullptr;
  cr_assert(rig_submission_make(d, &words, 1, nullptr, &submission) == RIG_OK, "%s", rig_last_error());
  rig_run_t *run = nullptr;
  cr_assert(rig_submission_take(submission, &run) == RIG_OK, "%s", rig_last_error());
  rig_status_t status = rig_submit(run, buffers, n, waits, nwaits, out);
  rig_submission_unref(submission);
  return status;
}

}  // namespace

Test(queue_waits, a_hand_over_waits_on_another_proxy_in_rigd, .timeout = 60) {
  RigdProcess rigd = slow_rigd("SIM:0,SIM:1", "400000");
  rig_device_t *first = open_proxy("SIM:0@rigd"), *second = open_proxy("SIM:1@rigd");
  cr_assert(rig_reaches(second, first), "rigd's SIM:1 maps SIM:0's memory");

  constexpr int64_t n = 4096;
  rig_buffer_t *source = create(first, n), *target = create(second, n);
  rig_point_t filled = fill(source, 0x5a);
  rig_point_t copied = copy(source, target);
  cr_expect(!reached(filled), "PROXY-33: the copy's submit waited in the client for the fill");
  cr_assert(rig_device_equal(rig_point_device(copied), second), "SIM:1@rigd runs the copy");

  cr_assert(rig_point_wait(copied) == RIG_OK, "%s", rig_last_error());
  std::vector<uint8_t> bytes(n);
  cr_assert(rig_buffer_blit_to_bytes(target, 0, bytes.data(), n, 0, n) == RIG_OK, "%s", rig_last_error());
  for (int64_t i = 0; i < n; i++) cr_assert_eq(bytes[i], 0x5a, "PROXY-39: byte %lld is not the fill's", (long long)i);
  cr_assert(reached(filled));
  rig_buffer_unref(source);
  rig_buffer_unref(target);
}

Test(queue_waits, a_slow_device_holds_back_no_other_devices_values, .timeout = 60) {
  /* DESIGN.md "The per-host service": rigd raises each proxy's word as its
   * own values are done.  A value on rigd's MEM:0 completes while an earlier
   * value of the same client on its slow SIM:0 runs on (PROXY-80: the word
   * holds the last value done). */
  RigdProcess rigd = slow_rigd("SIM:0,MEM:0", "2000000");
  rig_buffer_t *on_slow = create(open_proxy("SIM:0@rigd"), 4096);
  rig_buffer_t *on_fast = create(open_proxy("MEM:0@rigd"), 4096);
  rig_point_t slow_fill = fill(on_slow, 1);
  rig_point_t fast_fill = fill(on_fast, 2);
  cr_assert(rig_point_wait(fast_fill) == RIG_OK, "%s", rig_last_error());
  cr_expect(!reached(slow_fill), "MEM:0@rigd's value waited for SIM:0@rigd's");
  cr_assert(rig_point_wait(slow_fill) == RIG_OK, "%s", rig_last_error());
  rig_buffer_unref(on_slow);
  rig_buffer_unref(on_fast);
}

Test(queue_waits, more_than_64_mib_in_flight_waits_for_the_next_value, .timeout = 60) {
  RigdProcess rigd = slow_rigd("SIM:0", "500000");
  rig_device_t *d = open_proxy("SIM:0@rigd");
  constexpr int64_t big = int64_t{72} << 20;
  rig_buffer_t *a = create(d, big), *b = create(d, big), *small = create(d, 4096);
  rig_point_t first = copy(a, b);
  cr_expect(!reached(first), "PROXY-44: a proxy with nothing in flight takes a copy above 64 MiB at once");
  rig_point_t second = fill(small, 3);
  cr_expect(reached(first), "PROXY-43: with 72 MiB in flight, the next submit waited for the proxy's next value");
  cr_assert(rig_point_wait(second) == RIG_OK, "%s", rig_last_error());
  rig_buffer_unref(a);
  rig_buffer_unref(b);
  rig_buffer_unref(small);
}

Test(queue_waits, the_machines_host_runs_words_after_what_they_wait_for, .timeout = 60) {
  /* PROXY-41's other side: the machine's host (CPU@rigd) runs words parts.
   * PROXY-39: they run after the values they wait for, here a slow sim's
   * fill; and in rig's order, each write after the one before. */
  RigdProcess rigd = slow_rigd("SIM:0", "100000");
  rig_device_t *sim = open_proxy("SIM:0@rigd"), *cpu = open_proxy("CPU@rigd");
  rig_buffer_t *s = create(sim, 4096);
  rig_point_t slow = fill(s, 5);
  rig_buffer_t *on_cpu = create(cpu, 64);
  rig_word_write_t writes[] = {{{0, nullptr}, 0, 0xfeed}, {{1, nullptr}, 8, 1}, {{2, nullptr}, 8, 2}};
  rig_buffer_t *slots[] = {on_cpu, on_cpu, on_cpu};
  rig_point_t written;
  cr_assert(submit_words(cpu, writes, 3, slots, &slow, 1, &written) == RIG_OK, "%s", rig_last_error());
  bool words_done = reached(written), fill_done = reached(slow);
  cr_expect(!words_done || fill_done, "PROXY-39: the words ran before the fill they wait for");
  cr_expect(!fill_done, "the sim's fill (100 ms) was done before the words were handed over");
  cr_assert(rig_point_wait(written) == RIG_OK, "%s", rig_last_error());
  cr_expect(reached(slow), "PROXY-39: the words ran before the fill they wait for");
  uint64_t seen[2] = {0, 0};
  cr_assert(rig_buffer_blit_to_bytes(on_cpu, 0, seen, sizeof seen, 0, sizeof seen) == RIG_OK, "%s", rig_last_error());
  cr_expect(seen[0] == 0xfeed && seen[1] == 2, "the words, in order: %#lx %#lx", static_cast<unsigned long>(seen[0]),
            static_cast<unsigned long>(seen[1]));
  rig_buffer_unref(on_cpu);
  rig_buffer_unref(s);
}

Test(queue_waits, a_proxy_refuses_words, .timeout = 60) {
  /* PROXY-40, PROXY-41: a proxy's room answers RIG_NEVER for a part other
   * than copies (and fills, rigd's addition), and for words on a proxy other
   * than the machine's host: the submit answers RIG_EINVAL and runs
   * nothing.  PROXY-40 is of the proxies of other machines
   * (rig-remote-proxy.txt): rigd's proxies extend it with launches, which
   * need an image of the device's (test_launches.cpp); a words part is
   * refused as the rule says. */
  RigdProcess rigd = slow_rigd("MEM:0", "0");
  rig_device_t *d = open_proxy("MEM:0@rigd");
  rig_buffer_t *b = create(d, 64);
  rig_word_write_t write{{0, nullptr}, 0, 7};
  rig_point_t p;
  cr_expect(submit_words(d, &write, 1, &b, nullptr, 0, &p) == RIG_EINVAL, "PROXY-41: words ran on MEM:0@rigd");
  cr_expect(std::string(rig_last_error()).find("no such work") != std::string::npos, "%s", rig_last_error());
  uint64_t word = 1;
  cr_assert(rig_buffer_blit_to_bytes(b, 0, &word, 8, 0, 8) == RIG_OK, "%s", rig_last_error());
  cr_expect(word != 7, "the refused words part wrote its word");
  rig_buffer_unref(b);
}
