// The UCX transport's failures (net/ucx_link.hpp, ucx_endpoint.hpp): a peer
// in a child process killed, then SIGSTOPped.  Each failure reaches the
// endpoint's handler once, within the failure bound, with its reason; a
// send pending then returns with it and a send after it fails at once.
// A process that exits with a link alive ends it on the way out, at once.
// The transport's side of PROXY-07 and PROXY-89 (a link's failure, with
// its root cause, reaches everything on the link).
#include <criterion/criterion.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "test_ucx_pair.hpp"

using namespace rig::net;
using namespace std::chrono_literals;

namespace {

constexpr uint16_t kNothing = 9;  // a message the peer takes and drops
constexpr uint16_t kGo = 10;      // to the peer: send your message now
constexpr uint16_t kBig = 11;     // from the peer: its message

// A peer in a child process: a link listening on 127.0.0.1 that keeps the
// endpoint it accepts, sends a message of sends bytes (if any) once told
// to, and does nothing else until it is killed.
struct ChildPeer {
  pid_t pid = -1;
  std::string address;

  ChildPeer(std::chrono::milliseconds bound, size_t sends) {
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid = fork();
    cr_assert_geq(pid, 0, "fork");
    if (pid == 0) serve(fds[1], bound, sends);
    close(fds[1]);
    char text[64] = {};
    const ssize_t got = read(fds[0], text, sizeof text - 1);
    close(fds[0]);
    cr_assert_gt(got, 0, "the peer tells its address");
    address.assign(text, static_cast<size_t>(got));
  }
  ~ChildPeer() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  void signal(int number) {
    kill(pid, number);
    if (number == SIGKILL) {
      waitpid(pid, nullptr, 0);
      pid = -1;
    }
  }

 private:
  [[noreturn]] static void serve(int fd, std::chrono::milliseconds bound, size_t sends) {
    // Gone with the test, even if it fails before killing this peer.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    test::use_tcp();
    auto link = UcxLink::create({"", bound});
    if (!link.ok()) _exit(1);
    link.value()->on_message(kNothing, {nullptr, [](const UcxMessage &) {}});
    std::atomic<bool> go{false};
    link.value()->on_message(kGo, {nullptr, [&](const UcxMessage &) { go = true; }});
    test::Accepted accepted;
    auto listener = link.value()->listen("127.0.0.1:0", accepted.handler());
    if (!listener.ok()) _exit(1);
    const std::string &address = listener.value()->address();
    if (write(fd, address.data(), address.size()) != static_cast<ssize_t>(address.size())) _exit(1);
    close(fd);
    if (sends > 0) {
      std::shared_ptr<UcxEndpoint> endpoint = accepted.wait();
      while (!go) std::this_thread::sleep_for(1ms);
      std::vector<std::byte> data(sends);
      if (endpoint) (void)endpoint->send(kBig, {}, data);
    }
    for (;;) pause();
  }
};

// What an endpoint's failure handler heard, and when.
struct FailureLog {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> messages;
  std::chrono::steady_clock::time_point first;

  void watch(UcxEndpoint &endpoint) {
    endpoint.on_failure([this](const std::string &message) {
      std::lock_guard lock(mutex);
      if (messages.empty()) first = std::chrono::steady_clock::now();
      messages.push_back(message);
      changed.notify_all();
    });
  }
  bool wait(std::chrono::seconds limit) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, [&] { return !messages.empty(); });
  }
};

// A link connected to a peer in a child process, its endpoint's failure
// handler watched; bound is both sides' failure bound, big the handler of
// the message of peer_sends bytes the peer sends when told to.
struct WatchedPeer {
  FailureLog log;  // first: it outlives the endpoint
  ChildPeer peer;
  std::unique_ptr<UcxLink> link;
  std::shared_ptr<UcxEndpoint> endpoint;

  explicit WatchedPeer(std::chrono::milliseconds bound, size_t peer_sends = 0, UcxHandler big = {})
      : peer(bound, peer_sends) {
    test::use_tcp();
    auto created = UcxLink::create({"", bound});
    cr_assert(created.ok(), "%s", created.message().c_str());
    link = std::move(created.value());
    if (big.deliver) link->on_message(kBig, std::move(big));
    auto connected = link->connect(peer.address);
    cr_assert(connected.ok(), "%s", connected.message().c_str());
    endpoint = connected.value();
    UcxStatus sent = endpoint->send(kNothing, {}, {});
    cr_assert(sent.ok(), "%s", sent.message().c_str());
    log.watch(*endpoint);
  }
  // Seconds from since to the failure's report.
  double reported_after(std::chrono::steady_clock::time_point since) const {
    return std::chrono::duration<double>(log.first - since).count();
  }
};

// A send after the failure fails at once, with the failure's message.
void check_send_after(UcxEndpoint &endpoint, const std::string &failure) {
  const auto start = std::chrono::steady_clock::now();
  UcxStatus sent = endpoint.send(kNothing, {}, {});
  cr_assert_not(sent.ok(), "a send after the failure");
  cr_assert_lt(test::seconds_since(start), 0.5, "a send after the failure fails at once");
  cr_assert_eq(sent.message(), failure);
}

}  // namespace

Test(ucx_failure, killed_peer_reported_within_the_bound) {
  WatchedPeer watched(3000ms);
  FailureLog &log = watched.log;
  const auto killed = std::chrono::steady_clock::now();
  watched.peer.signal(SIGKILL);
  cr_assert(log.wait(10s), "the killed peer's failure is reported");
  const double after = watched.reported_after(killed);
  cr_log_info("killed: reported after %.3f s: %s", after, log.messages[0].c_str());
  cr_assert_lt(after, 3.0, "reported within the bound of 3 s, after %.3f s", after);
  const std::string expected = "the link to " + watched.peer.address + " failed: ";
  cr_assert(log.messages[0].rfind(expected, 0) == 0 && log.messages[0].size() > expected.size(),
            "the message names the peer and UCX's reason: %s", log.messages[0].c_str());
  cr_assert_eq(watched.endpoint->failure(), log.messages[0]);
  check_send_after(*watched.endpoint, log.messages[0]);
  std::this_thread::sleep_for(100ms);
  cr_assert_eq(log.messages.size(), 1u, "the failure is reported once");
}

Test(ucx_failure, stopped_peer_reported_within_the_bound) {
  WatchedPeer watched(2000ms);
  FailureLog &log = watched.log;
  const auto stopped = std::chrono::steady_clock::now();
  watched.peer.signal(SIGSTOP);
  // A rendezvous the stopped peer never takes: the failure ends it.
  std::vector<std::byte> data(size_t{32} << 20);
  UcxStatus pending = watched.endpoint->send(kNothing, {}, data);
  cr_assert(log.wait(10s), "the stopped peer's failure is reported");
  const double after = watched.reported_after(stopped);
  cr_log_info("stopped: reported after %.3f s: %s", after, log.messages[0].c_str());
  // Between B and B + B/4 after the last heartbeat; 1 s more for a loaded machine.
  cr_assert_lt(after, 2.5 + 1.0, "reported within the bound of 2 s and a quarter, after %.3f s", after);
  cr_assert(log.messages[0].find("the link to " + watched.peer.address + " failed: Endpoint timeout") == 0, "%s",
            log.messages[0].c_str());
  cr_assert_not(pending.ok(), "the send pending at the failure ends with it");
  cr_assert_eq(pending.message(), log.messages[0]);
  check_send_after(*watched.endpoint, log.messages[0]);
}

Test(ucx_failure, peer_killed_while_its_rendezvous_lands) {
  constexpr size_t kBytes = size_t{64} << 20;
  std::vector<std::byte> landing(kBytes);
  std::atomic<pid_t> victim{0};
  std::atomic<int> placed{0}, delivered{0};
  UcxHandler big;
  big.place = [&](UcxEndpoint &, std::span<const std::byte>, size_t length) {
    ++placed;
    kill(victim.load(), SIGKILL);  // before UCX fetches a byte of it
    return std::span<std::byte>(landing).first(std::min(length, kBytes));
  };
  big.deliver = [&](const UcxMessage &) { ++delivered; };
  WatchedPeer watched(3000ms, kBytes, std::move(big));
  victim = watched.peer.pid;
  UcxStatus go = watched.endpoint->send(kGo, {}, {});
  cr_assert(go.ok(), "%s", go.message().c_str());
  cr_assert(watched.log.wait(10s), "the failure of the peer whose data lands is reported");
  cr_log_info("killed while landing: %s", watched.log.messages[0].c_str());
  cr_assert_eq(placed.load(), 1);
  cr_assert_eq(delivered.load(), 0, "a message whose data did not land is not delivered");
  cr_assert(watched.log.messages[0].rfind("the link to " + watched.peer.address + " failed: ", 0) == 0, "%s",
            watched.log.messages[0].c_str());
  check_send_after(*watched.endpoint, watched.log.messages[0]);
}

Test(ucx_failure, busy_link_is_not_taken_for_silent) {
  // Messages from four threads for three times the bound: both sides'
  // progress threads are busy all along and must beat anyway.
  const auto bound = 1000ms;
  test::LinkPair pair;
  pair.create({"", bound});
  std::atomic<uint64_t> received{0};
  pair.server->on_message(kNothing, {nullptr, [&](const UcxMessage &) { ++received; }});
  pair.connect();
  const auto until = std::chrono::steady_clock::now() + 3 * bound;
  std::vector<std::thread> senders;
  std::vector<std::string> results(4);
  std::vector<std::byte> data(2048);
  for (size_t thread = 0; thread < results.size(); ++thread)
    senders.emplace_back([&, thread] {
      while (std::chrono::steady_clock::now() < until) {
        UcxStatus sent = pair.to_server->send(kNothing, {}, data);
        if (!sent.ok()) {
          results[thread] = sent.message();
          return;
        }
      }
    });
  for (auto &sender : senders) sender.join();
  for (const std::string &result : results) cr_assert(result.empty(), "%s", result.c_str());
  cr_log_info("%llu messages in 3 s", static_cast<unsigned long long>(received.load()));
  cr_assert_not(pair.to_server->failed(), "%s", pair.to_server->failure().c_str());
  cr_assert_not(pair.to_client->failed(), "%s", pair.to_client->failure().c_str());
}


// What a child leaves alive as it exits: reachable, so no leak (volatile,
// so that the store is kept).
static UcxLink *volatile left_alive = nullptr;

// A process that exits with its link alive tears the link down on the way
// out (UCX's threads stopped before its libraries' destructors run), and
// does so at once even while the peer, stopped, answers no close: exit
// gives the closes a moment, not the failure bound of 10 s.  Under
// ThreadSanitizer the child's exit status also says its exit raced with
// no thread of UCX's.
Test(ucx_failure, a_process_exits_at_once_with_its_link_alive_and_its_peer_stopped) {
  ChildPeer peer(10000ms, 0);
  int connected[2], go[2];
  cr_assert_eq(pipe(connected), 0);
  cr_assert_eq(pipe(go), 0);
  const pid_t child = fork();
  cr_assert_geq(child, 0, "fork");
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    test::use_tcp();
    auto link = UcxLink::create({"", 10000ms});
    if (!link.ok()) _exit(3);
    auto endpoint = link.value()->connect(peer.address);
    if (!endpoint.ok() || !endpoint.value()->send(kNothing, {}, {}).ok()) _exit(4);
    char byte = 1;
    if (write(connected[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 1) _exit(5);
    // The link, left alive as a machine's is, is the exit's to end.
    left_alive = link.value().release();
    std::exit(0);
  }
  close(connected[1]);
  close(go[0]);
  char byte = 0;
  cr_assert_eq(read(connected[0], &byte, 1), 1, "the child connected to the peer");
  peer.signal(SIGSTOP);
  const auto told = std::chrono::steady_clock::now();
  cr_assert_eq(write(go[1], &byte, 1), 1);
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(child, &status, WNOHANG)) == 0 && test::seconds_since(told) < 10)
    std::this_thread::sleep_for(10ms);
  const double took = test::seconds_since(told);
  if (done == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  peer.signal(SIGCONT);
  cr_log_info("the child exited %.3f s after it was told to", took);
  cr_assert_neq(done, 0, "the child's exit never ended");
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child ended with status %d", status);
  cr_assert_lt(took, 3.0, "the exit took %.3f s", took);
}
