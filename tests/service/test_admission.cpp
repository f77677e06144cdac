/* Tests of rigd's admission under attack: clients that connect and say
 * nothing, users the policy refuses, and clients past what rigd may make
 * (threads, descriptors), each against the built rigd under a process limit
 * set in its own process (setrlimit before it execs), never the host's.
 *
 * No rule ID: admission is the design's (DESIGN.md "The per-host service")
 * and rigd(8)'s.  Each test asserts that rigd stays up, that a client
 * connected before the attack gets its round trips within
 * round_trip_bound_ms (their median) while it lasts, that what the attack
 * makes rigd hold (descriptors, threads) returns to what rigd held before
 * once the attackers go, and that rigd then admits a new client. */
#include "client_process.hpp"
#include "raw_client.hpp"
#include "rigd_process.hpp"
#include "rigd_watch.hpp"

#include <rig/rig.h>

#include <criterion/criterion.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace watch;

// A round trip of a connected client while rigd is under attack: generous,
// the host is loaded, but far below what a starved rigd takes.
constexpr double round_trip_bound_ms = 50;
// A test's users, where the test runs as root: rigd runs as one of its own,
// so that a limit on that user's threads (RLIMIT_NPROC) is rigd's alone,
// and the attacker as another, outside rigd's policy.
constexpr uid_t rigd_user = 61234, refused_user = 61235;

std::vector<std::string> served = {"--devices", "MEM:0"};

// rigd's user and system time so far, in seconds.
double cpu_seconds_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string field;
  // utime and stime are fields 14 and 15; the name (field 2) has no blank
  // in rigd's case.
  double ticks = 0;
  for (int i = 1; i <= 15 && stat >> field; ++i)
    if (i >= 14) ticks += std::stod(field);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A connected socket to path that has said nothing yet.
int connect_silently(const std::string &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The reason rigd gives for refusing a handshake on path, "" where it
// admits it; a handshake rigd does not answer within answer_s fails with
// the socket's error instead.
std::string refusal_within(const std::string &path, int answer_s) {
  int fd = connect_silently(path);
  cr_assert(fd >= 0, "connect: %s", std::strerror(errno));
  timeval timeout{answer_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  try {
    rig::proxy::shake_hands(rig::proxy::OwnedFd(fd));
  } catch (const rig::proxy::HandshakeError &e) {
    return e.what();
  }
  return "";
}

// In rigd's process: rigd runs as rigd_user, its threads bounded, its
// socket's directory its own and open to the group root (the attacker's).
void as_rigd_user_with_threads(const std::string &directory, rlim_t threads) {
  if (chown(directory.c_str(), rigd_user, 0) != 0 || chmod(directory.c_str(), 0770) != 0) _exit(126);
  rlimit limit{threads, threads};
  if (setrlimit(RLIMIT_NPROC, &limit) != 0 || setuid(rigd_user) != 0) _exit(126);
}

}  // namespace

/* rigd(8), admission: a user the policy refuses is refused at accept, before
 * rigd reads its hello or makes anything for it.  Under a bound of 64
 * threads, 200 connections of a refused user that never speak leave rigd
 * serving (before, each took a thread, and the failure to make one ended
 * rigd); a connected client's round trip stays within the bound; each is
 * refused with the reason; rigd's descriptors and threads return to what
 * they were, and it admits a new client. */
Test(admission, a_refused_users_silent_connections_cost_rigd_no_thread, .timeout = 120) {
  if (getuid() != 0) cr_skip_test("rigd runs as a user of its own: needs root");
  RigdProcess rigd = start_rigd_with_config(served, "allow_users = 0\n",
                                            [](const std::string &d) { as_rigd_user_with_threads(d, 64); });
  raw::Client steady(rigd.socket);
  long descriptors = descriptors_of(rigd.pid), threads = threads_of(rigd.pid);
  Channel link;
  pid_t attacker = fork_client(
      [&] {
        require(setuid(refused_user) == 0, "setuid");
        std::vector<int> silent;
        for (int i = 0; i < 200; ++i) {
          int fd = connect_silently(rigd.socket);
          require(fd >= 0, "connect %d: %s", i, std::strerror(errno));
          silent.push_back(fd);
        }
        require(send_value(link.ends[1], silent.size()), "the test is gone");
        uint64_t done;
        receive_value(link.ends[1], done, client_start_ms);
        int refused = 0;
        for (int fd : silent) {
          rig_proxy_welcome w{};
          refused += recv(fd, &w, sizeof w, MSG_WAITALL) == sizeof w && w.status == RIG_EOPEN &&
                     std::strstr(w.why, "not admitted") != nullptr;
        }
        require(refused == 200, "%d of 200 were refused with the reason", refused);
        return 0;
      },
      {link.ends[1]});
  link.close_end(1);
  uint64_t connected = 0;
  cr_assert(receive_value(link.ends[0], connected, client_start_ms) && connected == 200, "the attacker connected");
  double round_trip = round_trip_ms(steady);
  cr_assert(alive(rigd.pid), "rigd stays up");
  cr_assert(round_trip < round_trip_bound_ms, "a round trip took %.1f ms during the attack", round_trip);
  cr_assert(send_value(link.ends[0], 1));
  cr_assert(ended_cleanly(await_client(attacker, client_end_s)), "every silent connection was refused");
  long descriptors_after = settles_at(descriptors, [&] { return descriptors_of(rigd.pid); });
  long threads_after = settles_at(threads, [&] { return threads_of(rigd.pid); });
  cr_assert(descriptors_after == descriptors, "rigd holds %ld descriptors after the attack, %ld before",
            descriptors_after, descriptors);
  cr_assert(threads_after == threads, "rigd has %ld threads after the attack, %ld before", threads_after, threads);
  cr_assert(refusal_within(rigd.socket, 10).empty(), "rigd admits a new client");
}

/* rigd(8), admission: a client admitted where rigd cannot make its threads
 * is refused with the reason, and rigd serves the rest.  Under a bound of
 * 24 threads clients connect until rigd refuses one (before, the failure to
 * make a session's thread ended rigd); the refusal names the thread; a
 * connected client's round trip stays within the bound; once the clients
 * go rigd's threads and descriptors return, and it admits a new client. */
Test(admission, a_client_rigd_cannot_make_threads_for_is_refused, .timeout = 120) {
  if (getuid() != 0) cr_skip_test("rigd runs as a user of its own: needs root");
  RigdProcess rigd =
      start_rigd_with_config(served, "", [](const std::string &d) { as_rigd_user_with_threads(d, 24); });
  raw::Client steady(rigd.socket);
  long descriptors = descriptors_of(rigd.pid), threads = threads_of(rigd.pid);
  std::vector<std::unique_ptr<rig::proxy::ServiceConnection>> clients;
  std::string why;
  while (why.empty() && clients.size() < 64) {
    try {
      clients.push_back(std::make_unique<rig::proxy::ServiceConnection>(rig::proxy::connect_to_rigd(rigd.socket)));
    } catch (const rig::proxy::HandshakeError &e) {
      why = e.what();
    }
  }
  cr_assert(why.find("thread") != std::string::npos, "rigd refuses a client it has no thread for: \"%s\"",
            why.c_str());
  double round_trip = round_trip_ms(steady);
  cr_assert(alive(rigd.pid), "rigd stays up");
  cr_assert(round_trip < round_trip_bound_ms, "a round trip took %.1f ms past rigd's threads", round_trip);
  clients.clear();
  long descriptors_after = settles_at(descriptors, [&] { return descriptors_of(rigd.pid); });
  long threads_after = settles_at(threads, [&] { return threads_of(rigd.pid); });
  cr_assert(descriptors_after == descriptors, "rigd holds %ld descriptors after, %ld before", descriptors_after,
            descriptors);
  cr_assert(threads_after == threads, "rigd has %ld threads after, %ld before", threads_after, threads);
  cr_assert(refusal_within(rigd.socket, 10).empty(), "rigd admits a new client");
}

/* rigd(8), descriptors: at its descriptor limit rigd refuses a new
 * connection at once with the reason (a reserve descriptor it closes to
 * accept it), instead of spinning on accept: under a limit of 96
 * descriptors, 150 connections that never speak; a new client is refused
 * within 3 seconds (before the silent ones' hello deadline) naming the
 * limit, rigd spends under a third of a core meanwhile, a connected client's round trip stays within the bound, and
 * once the silent connections go rigd's descriptors return and it admits a
 * new client. */
Test(admission, at_its_descriptor_limit_rigd_refuses_at_once_and_does_not_spin, .timeout = 120) {
  RigdProcess rigd = start_rigd(served, -1, make_temporary_directory(), [] {
    rlimit limit{96, 96};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(126);
  });
  raw::Client steady(rigd.socket);
  long descriptors = descriptors_of(rigd.pid);
  std::vector<int> silent;
  for (int i = 0; i < 150; ++i) {
    int fd = connect_silently(rigd.socket);
    cr_assert(fd >= 0, "connect %d: %s", i, std::strerror(errno));
    silent.push_back(fd);
  }
  double cpu_before = cpu_seconds_of(rigd.pid);
  auto start = std::chrono::steady_clock::now();
  std::string why = refusal_within(rigd.socket, 3);
  cr_assert(why.find("descriptor") != std::string::npos, "a client past the limit is refused with the reason: \"%s\"",
            why.c_str());
  double round_trip = round_trip_ms(steady);
  std::this_thread::sleep_until(start + std::chrono::seconds(3));
  std::chrono::duration<double> span = std::chrono::steady_clock::now() - start;
  double share = (cpu_seconds_of(rigd.pid) - cpu_before) / span.count();
  cr_assert(alive(rigd.pid), "rigd stays up");
  cr_assert(share < 0.33, "rigd spent %.0f%% of a core at its descriptor limit", share * 100);
  cr_assert(round_trip < round_trip_bound_ms, "a round trip took %.1f ms at the limit", round_trip);
  for (int fd : silent) close(fd);
  long after = settles_at(descriptors, [&] { return descriptors_of(rigd.pid); });
  cr_assert(after == descriptors, "rigd holds %ld descriptors after, %ld before", after, descriptors);
  cr_assert(refusal_within(rigd.socket, 10).empty(), "rigd admits a new client");
}

/* rigd(8): a session that ends gives its descriptors back at once, not at
 * the next connection: a client connects and goes, and rigd's descriptors
 * return to what they were with no other connection made. */
Test(admission, an_ended_session_gives_its_descriptors_back_at_once, .timeout = 60) {
  RigdProcess rigd = start_rigd(served);
  raw::Client steady(rigd.socket);
  long descriptors = descriptors_of(rigd.pid);
  { raw::Client passing(rigd.socket); }
  long after = settles_at(descriptors, [&] { return descriptors_of(rigd.pid); });
  cr_assert(after == descriptors, "rigd holds %ld descriptors after the client went, %ld before", after, descriptors);
}

/* rigd(8): a connection that says nothing is closed once the hello's
 * deadline passes, and costs rigd nothing after. */
Test(admission, a_silent_connection_is_closed_at_the_hellos_deadline, .timeout = 60) {
  RigdProcess rigd = start_rigd(served);
  raw::Client steady(rigd.socket);
  long descriptors = descriptors_of(rigd.pid);
  int fd = connect_silently(rigd.socket);
  cr_assert(fd >= 0);
  timeval timeout{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char byte;
  cr_assert(recv(fd, &byte, 1, 0) == 0, "rigd closes a silent connection");
  close(fd);
  long after = settles_at(descriptors, [&] { return descriptors_of(rigd.pid); });
  cr_assert(after == descriptors, "rigd holds %ld descriptors after, %ld before", after, descriptors);
}
