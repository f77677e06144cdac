/* An allocation on a full served device (rigd(8), LIMITS): the memory a
 * client left with its work still queued returns to the served device
 * only once that work is done, and rig's reclamation of the device's
 * budget waits for it, as slow as that client made its device (the sim's
 * latency knob, which rigd's policy allows here).  That wait runs on a
 * waiter thread of rigd's, never on a poller: another client's round trips
 * stay short meanwhile, and the waiting client's session ends as soon as
 * the client goes, not once the slow work is done.
 *
 * The statements asserted are the design's trust rule (DESIGN.md "The
 * per-host service": rigd never hangs another client for anything a
 * client does) and PROXY-61 (memory is released only once the work
 * submitted before no longer needs it). */
#include "client_process.hpp"
#include "known_work.hpp"
#include "raw_client.hpp"
#include "rigd_process.hpp"
#include "rigd_watch.hpp"

#include <rig/service.h>

#include <criterion/criterion.h>

#include <signal.h>

#include <cstdlib>
#include <string>

using namespace watch;

namespace {

constexpr int64_t mib = 1 << 20;
// The served SIM:0's budget (RIG_SIM's, in rigd), and what each of the two
// clients allocates: one allocation fills it.
constexpr int64_t budget = 8 * mib, held = 6 * mib;
// Each value of the slow client's instance takes this long: far past
// every bound below.
constexpr int64_t slow_value_ms = 4000;
// A round trip of another client, and how long rigd may take to count the
// waiting client out once it is gone: generous on a loaded machine, far
// below the slow value.
constexpr double round_trip_bound_ms = 100;
constexpr int64_t departure_bound_ms = 1500;

const std::string slow_config = "latency_us=" + std::to_string(slow_value_ms * 1000) + ",hang_ms=3600000";

// A client that allocates held bytes of SIM:0@rigd on an instance slowed
// by slow_config (rigd zeroes them there: a slow value), tells link, and
// waits to be killed: its memory returns once that value is done.
pid_t slow_client(const std::string &socket, Channel &link) {
  return start_on_link(
      link,
      [&](int end) {
        connect_service(socket);
        rig_open_options_t slow{sizeof slow, slow_config.c_str()};
        rig_device_t *d = nullptr;
        require(rig_open("SIM:0@rigd", &slow, &d) == RIG_OK, "open: %s", rig_last_error());
        create_buffer(d, held);
        exchange(end, 1, "the test is gone");
        return 0;
      },
      "the slow client allocated");
}

// A client that tells link, then allocates held bytes of SIM:0@rigd: an
// allocation that waits for the slow client's memory.
pid_t allocating_client(const std::string &socket, Channel &link) {
  return start_on_link(
      link,
      [&](int end) {
        connect_service(socket);
        rig_device_t *d = open_device("SIM:0@rigd");
        require(send_value(end, 1), "the test is gone");
        rig_buffer_unref(create_buffer(d, held));
        return 0;
      },
      "the allocating client connected");
}

// Kills a client, waits for it, and answers how long rigd took to count it
// out: until its count of clients is expected.
int64_t ms_to_count_out(raw::Client &steady, pid_t client, long expected) {
  int64_t killed = monotonic_ns();
  kill(client, SIGKILL);
  await_client(client, client_end_s);
  while (steady.count(RIG_PROXY_COUNT_CLIENTS) != expected &&
         monotonic_ns() - killed < 4 * departure_bound_ms * 1000000)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return (monotonic_ns() - killed) / 1000000;
}

}  // namespace

/* PROXY-61: the slow client is killed with its work running; another
 * client allocates the served device's whole room, which waits for that
 * work.  Meanwhile a third client's round trips stay under
 * round_trip_bound_ms, and once the waiting client is killed rigd counts it
 * out within departure_bound_ms.  Before, the allocation waited on the
 * client's poller, which its session's end joins: rigd held the gone
 * client until the slow work was done, seconds later. */
Test(full_device, an_allocation_that_waits_for_another_clients_work_holds_no_poller, .timeout = 90) {
  RigdProcess rigd = start_rigd_with_config({"--devices", "SIM:0"}, "test_knobs = allow\n", [](const std::string &) {
    setenv("RIG_SIM", ("budget=" + std::to_string(budget)).c_str(), 1);
  });
  raw::Client steady(rigd.socket);
  Channel slow_link;
  pid_t slow = slow_client(rigd.socket, slow_link);
  kill(slow, SIGKILL);
  await_client(slow, client_end_s);

  Channel alloc_link;
  pid_t allocating = allocating_client(rigd.socket, alloc_link);
  // Its allocation comes to rigd in a moment, and waits: the served device
  // holds the slow client's memory still, which its session let go as it
  // ended.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  cr_assert(steady.allocated(0) >= held, "the slow client's memory is held still");
  cr_assert_eq(steady.count(RIG_PROXY_COUNT_CLIENTS), 2, "the steady and the allocating client");
  double round_trip = round_trip_ms(steady);
  cr_assert(round_trip < round_trip_bound_ms, "another client's round trip took %.1f ms while the allocation waited",
            round_trip);

  int64_t took_ms = ms_to_count_out(steady, allocating, 1);
  cr_assert(took_ms < departure_bound_ms,
            "rigd counted the waiting client out %lld ms after it went (bound %lld ms; the slow value takes %lld ms)",
            static_cast<long long>(took_ms), static_cast<long long>(departure_bound_ms),
            static_cast<long long>(slow_value_ms));
  cr_assert(alive(rigd.pid), "rigd stays up");
  // Once the slow value is done the memory returns, and nothing stays held.
  long left = settles_at(0, [&] { return static_cast<long>(steady.allocated(0)); });
  cr_assert_eq(left, 0, "rigd holds the clients' memory no more");
}
