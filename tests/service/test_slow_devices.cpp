/* Tests of rigd against clients whose devices are slow or never finish,
 * by their own choice (the sim's test knobs, which rigd's policy allows
 * here): what waits on such a device waits off every other client's
 * poller and off rigd's shutdown, which a deadline bounds (rigd(8),
 * shutdown_deadline_ms).
 *
 * The statements asserted are the design's trust rule (DESIGN.md "The
 * per-host service": rigd never hangs another client for anything a
 * client does), PROXY-61 (the agent releases an object only once the work
 * submitted before no longer needs it) and rigd(8)'s shutdown. */
#include "client_process.hpp"
#include "known_work.hpp"
#include "rigd_process.hpp"

#include <rig/service.h>

#include <criterion/criterion.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace {

// Each value of the slow client's instance takes this long, and it queues
// slow_values of them: work that outlasts every bound below by far.
constexpr int64_t slow_value_ms = 1500;
constexpr int slow_values = 6;
// The bound on an innocent client's round trip while the slow device
// works: generous for a loaded machine, far below one slow value.
constexpr int64_t round_trip_bound_ms = 400;
// rigd's shutdown deadline in these tests, and what a loaded machine may
// add to it before rigd has exited.
constexpr int64_t deadline_ms = 1500;
constexpr int64_t exit_slack_ms = 2500;

const std::string slow_config = "latency_us=" + std::to_string(slow_value_ms * 1000) + ",hang_ms=3600000";

// A rigd serving SIM:0 that admits the sim's test knobs, its stderr in
// directory/rigd.log.
RigdProcess start_knob_rigd() {
  return start_rigd_with_config({"--devices", "SIM:0"},
                                "test_knobs = allow\nshutdown_deadline_ms = " + std::to_string(deadline_ms) + "\n",
                                [](const std::string &directory) {
                                  int log = open((directory + "/rigd.log").c_str(), O_WRONLY | O_CREAT, 0600);
                                  dup2(log, STDERR_FILENO);
                                  close(log);
                                });
}

std::string log_of(const RigdProcess &rigd) {
  std::ifstream in(rigd.directory + "/rigd.log");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// In a client: opens SIM:0@rigd slowed by slow_config, makes a buffer and
// queues slow_values values of fills on it; answers the buffer.
rig_buffer_t *queue_slow_work(rig_device_t **device) {
  rig_open_options_t slow{sizeof slow, slow_config.c_str()};
  require(rig_open("SIM:0@rigd", &slow, device) == RIG_OK, "open: %s", rig_last_error());
  rig_buffer_t *b = create_buffer(*device, 4096);
  for (int i = 0; i < slow_values; ++i) {
    rig_point_t p;
    require(rig_buffer_submit_fill(b, static_cast<uint8_t>(i), nullptr, 0, &p) == RIG_OK, "fill: %s",
            rig_last_error());
  }
  return b;
}

// Sends SIGTERM to rigd and answers the milliseconds it took to exit, its
// wait status in *status; a rigd that has not exited by twice the bound
// the tests allow is killed (SIGKILL), so that a test of the bug fails
// rather than hang.
int64_t ms_to_stop(RigdProcess &rigd, int *status) {
  int64_t sent = monotonic_ns();
  kill(rigd.pid, SIGTERM);
  auto elapsed_ms = [&] { return (monotonic_ns() - sent) / 1000000; };
  while (waitpid(rigd.pid, status, WNOHANG) == 0) {
    if (elapsed_ms() > 2 * (deadline_ms + exit_slack_ms)) {
      kill(rigd.pid, SIGKILL);
      waitpid(rigd.pid, status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  rigd.pid = -1;
  return elapsed_ms();
}

}  // namespace

/* A client opens SIM:0@rigd with its own latency and hang bound, shares a
 * buffer, queues slow work on it and leaves; the importer frees its
 * import, whose memory rigd releases only once the exporter's work no
 * longer needs it (PROXY-61): every one of the importer's round trips (an
 * allocation's answer) after the free stays under round_trip_bound_ms.
 * Then SIGTERM ends rigd within its deadline though the exporter's work is
 * not done (7.5 s more of it).  A sim's memory is the served device's own,
 * mapped on the exporter's instance, so here the importer's free lets go
 * of no instance; where it does (an instance's own memory: a CUDA context
 * that does not map the served one), the release worker waits instead
 * (test_instances.cpp). */
Test(slow_devices, an_importers_round_trips_stay_short_while_the_exporters_device_is_slow, .timeout = 90) {
  RigdProcess rigd = start_knob_rigd();
  run_linked_pair(
      [&](int importer) {
        connect_service(rigd.socket);
        rig_device_t *d = nullptr;
        rig_buffer_t *b = queue_slow_work(&d);
        uint64_t token = 0;
        require(rig_service_share(b, &token) == RIG_OK, "share: %s", rig_last_error());
        // The importer answers once it imported; the exporter then leaves
        // with its work queued.
        exchange(importer, token, "the importer is gone");
        return 0;
      },
      "the exporter shared its buffer",
      [&](int exporter) {
        connect_service(rigd.socket);
        rig_device_t *d = open_device("SIM:0@rigd");
        rig_buffer_t *imported = import_until_the_exporter_goes(exporter, d);
        rig_buffer_unref(imported);
        int64_t slowest_ms = 0;
        auto start = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2 * slow_value_ms)) {
          int64_t asked = monotonic_ns();
          rig_buffer_t *b = create_buffer(d, 4096);
          slowest_ms = std::max(slowest_ms, (monotonic_ns() - asked) / 1000000);
          rig_buffer_unref(b);
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        require(slowest_ms < round_trip_bound_ms, "the importer's slowest round trip took %lld ms (bound %lld ms)",
                static_cast<long long>(slowest_ms), static_cast<long long>(round_trip_bound_ms));
        return 0;
      },
      "the importer's round trips stayed under the bound");
  int status;
  int64_t took_ms = ms_to_stop(rigd, &status);
  cr_assert(took_ms < deadline_ms + exit_slack_ms, "SIGTERM took %lld ms to end rigd (deadline %lld ms)",
            static_cast<long long>(took_ms), static_cast<long long>(deadline_ms));
  cr_assert(WIFEXITED(status), "rigd exited: status %#x", status);
}

/* rigd(8), shutdown_deadline_ms: a client's device whose work never
 * finishes (a value that takes an hour, a hang bound past it) holds rigd's
 * SIGTERM no longer than the deadline: past it rigd abandons the devices
 * still busy, names each on stderr, and exits. */
Test(slow_devices, sigterm_abandons_a_device_that_never_finishes_at_the_deadline, .timeout = 90) {
  RigdProcess rigd = start_knob_rigd();
  Channel link;
  pid_t client = fork_client(
      [&] {
        connect_service(rigd.socket);
        rig_open_options_t never{sizeof never, "latency_us=3600000000,hang_ms=7200000"};
        rig_device_t *d = nullptr;
        require(rig_open("SIM:0@rigd", &never, &d) == RIG_OK, "open: %s", rig_last_error());
        rig_buffer_t *b = create_buffer(d, 4096);
        rig_point_t p;
        require(rig_buffer_submit_fill(b, 1, nullptr, 0, &p) == RIG_OK, "fill: %s", rig_last_error());
        require(send_value(link.ends[1], 1), "the test is gone");
        // Stays connected until rigd goes.
        uint64_t none;
        receive_value(link.ends[1], none, client_start_ms);
        return 0;
      },
      {link.ends[1]});
  link.close_end(1);
  uint64_t submitted;
  cr_assert(receive_value(link.ends[0], submitted, client_start_ms), "the client submitted");
  int status;
  int64_t took_ms = ms_to_stop(rigd, &status);
  send_value(link.ends[0], 1);
  await_client(client, client_end_s);
  cr_assert(took_ms < deadline_ms + exit_slack_ms, "SIGTERM took %lld ms to end rigd (deadline %lld ms)",
            static_cast<long long>(took_ms), static_cast<long long>(deadline_ms));
  cr_assert(WIFEXITED(status), "rigd exited: status %#x", status);
  std::string log = log_of(rigd);
  cr_assert(log.find("abandoned") != std::string::npos && log.find("SIM:0~") != std::string::npos,
            "rigd names the device it abandoned: %s", log.c_str());
}
