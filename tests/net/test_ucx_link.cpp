// The UCX transport's link (net/ucx_link.hpp): listening and connecting on
// 127.0.0.1 over TCP, active messages both ways, a refused connection, and
// a progress thread that sleeps while the link is idle.  The transport's
// side of PROXY-02 (calls become messages on the link).
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <netinet/in.h>
#include <optional>
#include <sstream>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "test_ucx_pair.hpp"

using namespace rig::net;
using namespace std::chrono_literals;

namespace {

std::span<const std::byte> bytes_of(const std::string &text) { return std::as_bytes(std::span(text)); }
std::string text_of(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

// Messages a handler got, as "header/data".
struct Inbox {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> messages;
  std::vector<std::string> peers;

  UcxHandler handler() {
    UcxHandler handler;
    handler.deliver = [this](const UcxMessage &message) {
      std::lock_guard lock(mutex);
      messages.push_back(text_of(message.header) + "/" + text_of(message.data));
      peers.push_back(message.from.peer());
      changed.notify_all();
    };
    return handler;
  }
  bool wait(size_t count) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 10s, [&] { return messages.size() >= count; });
  }
};

// User plus system time of a thread of this process, in clock ticks.
long thread_ticks(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int index = 3; fields >> field; ++index) {
    if (index == 14) utime = std::stol(field);
    if (index == 15) {
      stime = std::stol(field);
      break;
    }
  }
  return utime + stime;
}

}  // namespace

Test(ucx_link, listen_connect_and_messages_both_ways) {
  test::LinkPair pair;
  pair.create();
  Inbox at_server, at_client;
  pair.server->on_message(7, at_server.handler());
  pair.client->on_message(8, at_client.handler());
  pair.connect();
  cr_assert_neq(pair.listener->port(), 0, "port 0 picks a port, which the listener tells");
  cr_assert_eq(pair.to_server->peer(), pair.listener->address());

  UcxStatus sent = pair.to_server->send(7, bytes_of("hello"), bytes_of("world"));
  cr_assert(sent.ok(), "%s", sent.message().c_str());
  sent = pair.to_client->send(8, bytes_of("back"), bytes_of(""));
  cr_assert(sent.ok(), "%s", sent.message().c_str());
  cr_assert(at_server.wait(1) && at_client.wait(1), "each side's handler hears its message");
  cr_assert_eq(at_server.messages[0], "hello/world");
  cr_assert_eq(at_client.messages[0], "back/");
  cr_assert_eq(at_server.peers[0], pair.to_client->peer(), "the handler's endpoint is the accepted one");
  cr_assert(pair.to_client->peer().rfind("127.0.0.1:", 0) == 0, "%s", pair.to_client->peer().c_str());
}

Test(ucx_link, connect_without_listener_names_the_address) {
  test::use_tcp();
  // A port with no listener: bound, then closed.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  cr_assert_eq(bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
  cr_assert_eq(getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length), 0);
  close(fd);
  const std::string target = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));

  auto link = UcxLink::create({});
  cr_assert(link.ok(), "%s", link.message().c_str());
  const auto start = std::chrono::steady_clock::now();
  auto connected = link.value()->connect(target);
  cr_assert_not(connected.ok(), "nothing listens on %s", target.c_str());
  const std::string expected = "connecting to " + target + " failed: ";
  cr_assert(connected.message().rfind(expected, 0) == 0 && connected.message().size() > expected.size(),
            "the message names the address and UCX's reason: %s", connected.message().c_str());
  cr_assert_lt(test::seconds_since(start), 10.0, "a refusal is no silence: %s", connected.message().c_str());
  cr_log_info("%s", connected.message().c_str());

  auto malformed = link.value()->connect("127.0.0.1");
  cr_assert(!malformed.ok() && malformed.message().find("'127.0.0.1' is not HOST:PORT") != std::string::npos, "%s",
            malformed.message().c_str());
}

Test(ucx_link, idle_progress_threads_sleep) {
  test::LinkPair pair;
  pair.create();
  pair.connect();
  std::this_thread::sleep_for(200ms);  // past the connection's own traffic
  const pid_t threads[] = {pair.server->progress_thread_id(), pair.client->progress_thread_id()};
  long before[2], after[2];
  for (int i = 0; i < 2; ++i) before[i] = thread_ticks(threads[i]);
  std::this_thread::sleep_for(1s);
  for (int i = 0; i < 2; ++i) after[i] = thread_ticks(threads[i]);
  const long tick_ms = 1000 / sysconf(_SC_CLK_TCK);
  for (int i = 0; i < 2; ++i)
    cr_assert_lt((after[i] - before[i]) * tick_ms, 20, "progress thread %d ran %ld ms of 1 s idle: it spins", threads[i],
                 (after[i] - before[i]) * tick_ms);
}

Test(ucx_link, a_handler_cannot_wait_on_its_own_thread) {
  test::LinkPair pair;
  pair.create();
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<std::string> refusal;
  UcxHandler replying;
  replying.deliver = [&](const UcxMessage &message) {
    // The send would wait on the thread that completes it.
    UcxStatus sent = message.from.send(8, {}, {});
    std::lock_guard lock(mutex);
    refusal = sent.ok() ? "" : sent.message();
    changed.notify_all();
  };
  pair.server->on_message(7, replying);
  pair.connect();
  UcxStatus sent = pair.to_server->send(7, {}, {});
  cr_assert(sent.ok(), "%s", sent.message().c_str());
  std::unique_lock lock(mutex);
  cr_assert(changed.wait_for(lock, 10s, [&] { return refusal.has_value(); }), "the handler ran");
  cr_assert(refusal->find("cannot wait on the link's progress thread") != std::string::npos, "refused: '%s'",
            refusal->c_str());
  cr_assert_not(pair.to_client->failed(), "the refusal leaves the endpoint working");
}

Test(ucx_link, a_message_the_link_cannot_hand_over_fails_the_endpoint) {
  test::LinkPair pair;
  pair.create();
  UcxHandler small;  // places 4 bytes for any message
  std::vector<std::byte> four(4);
  small.place = [&](UcxEndpoint &, std::span<const std::byte>, size_t) { return std::span<std::byte>(four); };
  small.deliver = [](const UcxMessage &) {};
  pair.server->on_message(7, small);
  pair.connect();
  const std::vector<std::byte> data(100);
  UcxStatus sent = pair.to_server->send(7, {}, data);
  cr_assert(sent.ok(), "%s", sent.message().c_str());
  for (int i = 0; i < 1000 && !pair.to_client->failed(); ++i) std::this_thread::sleep_for(10ms);
  const std::string expected = "the link to " + pair.to_client->peer() +
                               " failed: Message truncated (the handler of id 7 placed 4 bytes for a message of 100)";
  cr_assert_eq(pair.to_client->failure(), expected);

  // The other side sees its peer close the connection.
  for (int i = 0; i < 1000 && !pair.to_server->failed(); ++i) std::this_thread::sleep_for(10ms);
  cr_assert(pair.to_server->failed(), "the sender's endpoint fails too");
  sent = pair.to_server->send(99, {}, {});
  cr_assert_eq(sent.message(), pair.to_server->failure());
}

Test(ucx_link, a_message_for_an_id_without_handler_fails_the_endpoint) {
  test::LinkPair pair;
  pair.create();
  pair.connect();
  UcxStatus sent = pair.to_server->send(99, bytes_of("?"), {});
  cr_assert(sent.ok(), "%s", sent.message().c_str());
  for (int i = 0; i < 1000 && !pair.to_client->failed(); ++i) std::this_thread::sleep_for(10ms);
  cr_assert(pair.to_client->failure().find("(a message for id 99, which has no handler)") != std::string::npos,
            "'%s'", pair.to_client->failure().c_str());
}

Test(ucx_link, connect_to_an_unanswering_address_ends_within_the_bound) {
  // 192.0.2.0/24 is TEST-NET-1: no host there answers (or no route leads
  // there); either way connect ends within the failure bound, by name.
  test::use_tcp();
  auto link = UcxLink::create({"", 1000ms});
  cr_assert(link.ok(), "%s", link.message().c_str());
  const auto start = std::chrono::steady_clock::now();
  auto connected = link.value()->connect("192.0.2.123:9");
  const double took = test::seconds_since(start);
  cr_log_info("%s after %.3f s", connected.ok() ? "connected" : connected.message().c_str(), took);
  cr_assert_not(connected.ok());
  cr_assert(connected.message().rfind("connecting to 192.0.2.123:9 failed: ", 0) == 0, "%s", connected.message().c_str());
  cr_assert_lt(took, 1.0 + 2.0, "ended within the bound of 1 s (and 1 s for the reason), after %.3f s", took);
}
