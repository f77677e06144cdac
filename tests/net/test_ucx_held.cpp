// The reorder point's bound (ucx_endpoint.hpp's UcxHeldBound): a peer
// that skips a sequence number has every later message held, so a peer
// past the bound's messages or bytes fails its endpoint, saying what it
// held; within the bound, the message awaited delivers everything held,
// in order; a repeat of the message landing fails it as any repeat does.
// The agent holds one early message of a client that has not proved its
// key (AgentSide::kHandshakeHeld), and at most handshakes_max such
// clients at once (AgentListener::Options).  rigd's trust rules
// (DESIGN.md: no peer that reaches the agent brings it down); no rule ID
// in RULES.md.
#include <criterion/criterion.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "raw_ucp_sender.hpp"
#include "test_machine_pair.hpp"
#include "ucx_endpoint.hpp"
#include "ucx_link.hpp"
#include "ucx_listener.hpp"

using namespace rig::net;
using namespace rig::net::test;

namespace {

constexpr uint16_t kId = 7;
constexpr size_t kBytes = 100;

// A message's 100 bytes: its sequence number, then 0x5a.
std::vector<std::byte> data_of(uint64_t seq) {
  std::vector<std::byte> data(kBytes, std::byte{0x5a});
  std::memcpy(data.data(), &seq, sizeof seq);
  return data;
}

// A server link that delivers messages of kId, counting them in order,
// and accepts one endpoint with bound as its reorder point's bound.
struct Server {
  std::unique_ptr<UcxLink> link;
  std::unique_ptr<UcxListener> listener;
  std::mutex mutex;
  std::condition_variable changed;
  std::shared_ptr<UcxEndpoint> endpoint;
  std::vector<uint64_t> delivered;  // the sequence numbers in the data, in order
  std::atomic<uint64_t> count{0};

  explicit Server(UcxHeldBound bound) {
    use_tcp();
    auto made = UcxLink::create({});
    cr_assert(made.ok(), "%s", made.message().c_str());
    link = std::move(made.value());
    UcxHandler handler;
    handler.deliver = [this](const UcxMessage &message) {
      uint64_t seq = UINT64_MAX;
      if (message.data.size() == kBytes) std::memcpy(&seq, message.data.data(), sizeof seq);
      std::lock_guard lock(mutex);
      delivered.push_back(seq);
      count.fetch_add(1);
    };
    link->on_message(kId, handler);
    // The bound is set before the first message can arrive: both run on
    // the link's progress thread.
    auto listening = link->listen("127.0.0.1:0", [this, bound](std::shared_ptr<UcxEndpoint> accepted) {
      accepted->bound_held(bound);
      std::lock_guard lock(mutex);
      endpoint = std::move(accepted);
      changed.notify_all();
    });
    cr_assert(listening.ok(), "%s", listening.message().c_str());
    listener = std::move(listening.value());
  }
  std::shared_ptr<UcxEndpoint> accepted() {
    cr_assert(wait_under(mutex, changed, [&] { return endpoint != nullptr; }), "nothing accepted in 10 s");
    std::lock_guard lock(mutex);
    return endpoint;
  }
};

// Waits until the endpoint failed: its failure, empty after 10 s.
std::string failure_of(UcxEndpoint &endpoint) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!endpoint.failed() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return endpoint.failure();
}

}  // namespace

Test(ucx_held, a_peer_past_the_messages_held_fails_saying_so) {
  Server server({16, uint64_t{1} << 20});
  RawUcpSender raw(server.listener->address());
  // Message 0 never comes: 1 to 16 wait for it, within the bound.
  for (uint64_t seq = 1; seq <= 16; ++seq) cr_assert(raw.send(seq, kId, data_of(seq)), "message %llu", (unsigned long long)seq);
  auto endpoint = server.accepted();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  cr_assert(!endpoint->failed(), "failed within the bound: %s", endpoint->failure().c_str());
  (void)raw.send(17, kId, data_of(17));
  const std::string why = failure_of(*endpoint);
  cr_assert(why.find("message 17 of 100 bytes came with 16 messages of 1600 bytes held, waiting for message 0: "
                     "past the bound of 16 messages and 1048576 bytes held") != std::string::npos,
            "failure: \"%s\"", why.c_str());
  cr_assert_eq(server.count.load(), 0u, "a message held was delivered");
  cr_assert(raw.closed(std::chrono::seconds(10)), "the endpoint failed, but its connection stays open");
}

Test(ucx_held, a_peer_past_the_bytes_held_fails_saying_so) {
  Server server({4096, 1000});
  RawUcpSender raw(server.listener->address());
  for (uint64_t seq = 1; seq <= 10; ++seq) cr_assert(raw.send(seq, kId, data_of(seq)), "message %llu", (unsigned long long)seq);
  auto endpoint = server.accepted();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  cr_assert(!endpoint->failed(), "failed within the bound: %s", endpoint->failure().c_str());
  (void)raw.send(11, kId, data_of(11));
  const std::string why = failure_of(*endpoint);
  cr_assert(why.find("message 11 of 100 bytes came with 10 messages of 1000 bytes held") != std::string::npos &&
                why.find("past the bound of 4096 messages and 1000 bytes held") != std::string::npos,
            "failure: \"%s\"", why.c_str());
}

Test(ucx_held, the_message_awaited_at_the_bound_delivers_all_held_in_order) {
  Server server({16, uint64_t{1} << 20});
  RawUcpSender raw(server.listener->address());
  for (uint64_t seq = 1; seq <= 16; ++seq) cr_assert(raw.send(seq, kId, data_of(seq)));
  cr_assert(raw.send(0, kId, data_of(0)));
  auto endpoint = server.accepted();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.count.load() < 17 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  cr_assert_eq(server.count.load(), 17u, "the awaited message delivered %llu", (unsigned long long)server.count.load());
  cr_assert(!endpoint->failed(), "%s", endpoint->failure().c_str());
  std::lock_guard lock(server.mutex);
  for (uint64_t i = 0; i < 17; ++i)
    cr_assert_eq(server.delivered[i], i, "delivered %llu as message %llu", (unsigned long long)server.delivered[i],
                 (unsigned long long)i);
}

// A message whose data still lands is no longer held, but not delivered
// yet: its number again, sent while it lands, is a repeat, which fails the
// endpoint as any repeat does, rather than waiting for good ahead of a
// number already passed.
Test(ucx_held, a_repeat_of_the_message_landing_fails_the_endpoint) {
  Server server({16, uint64_t{1} << 20});
  RawUcpSender raw(server.listener->address());
  cr_assert(!raw.closed(std::chrono::milliseconds(200)), "the connection is up");
  // 64 MiB go by rendezvous, whose data the receiver fetches only as this
  // end progresses: the repeat, 200 ms later, comes while they land.
  std::vector<std::byte> large(64 << 20, std::byte{1});
  const std::vector<std::byte> repeat = data_of(0);
  const RawUcpSender::Framed both[] = {{0, large}, {0, repeat}};
  (void)raw.send_all(kId, both, std::chrono::milliseconds(200));
  auto endpoint = server.accepted();
  const std::string why = failure_of(*endpoint);
  cr_assert(why.find("(message 0 came twice)") != std::string::npos, "failure: \"%s\"", why.c_str());
  cr_assert_eq(endpoint->stats().behind_landing, 1u, "the repeat came while the first message landed");
}

// Before its PROOF is checked, a client has one message held at most: a
// second that came early fails its connection, the agent's refusal naming
// the bound, long before the handshake's failure bound.
Test(ucx_held, the_agent_holds_one_early_message_of_a_client_without_a_proof) {
  Agent agent;
  RawUcpSender raw(agent.listener->address());
  const std::vector<std::byte> small(64, std::byte{1});
  cr_assert(raw.send(1, kAuthProofId, small));
  (void)raw.send(2, kAuthProofId, small);
  auto [peer, cause] = agent.refusal();
  cr_assert(cause.find("came with 1 messages of 64 bytes held, waiting for message 0: past the bound of 1 messages") !=
                std::string::npos,
            "cause: \"%s\"", cause.c_str());
  cr_assert(raw.closed(std::chrono::seconds(5)), "the agent kept the connection");
}

// Past handshakes_max connections proving their keys, a new one is closed
// at once; one that goes makes room for the next.  The agent runs in a
// child process (AgentProcess): this one opens and closes many sockets.
Test(ucx_held, the_agent_closes_connections_past_the_handshakes_it_holds) {
  AgentListener::Options options;
  options.handshakes_max = 2;
  AgentProcess agent(options);
  const std::string &address = agent.address();
  const auto kept = std::chrono::milliseconds(300);
  auto first = std::make_unique<RawUcpSender>(address);
  cr_assert(!first->closed(kept), "the agent closed the first connection");
  RawUcpSender second(address);
  cr_assert(!second.closed(kept), "the agent closed the second connection");
  {
    RawUcpSender third(address);
    cr_assert(third.closed(std::chrono::seconds(5)), "the agent kept a third connection proving its key");
  }
  first.reset();
  // The agent hears the first go, then has room for one more.
  std::unique_ptr<RawUcpSender> fourth;
  for (int tries = 0; tries < 50 && !fourth; tries++) {
    fourth = std::make_unique<RawUcpSender>(address);
    if (fourth->closed(kept)) fourth.reset();
  }
  cr_assert(fourth != nullptr, "no room for a connection after the first went");
  cr_assert(!second.closed(std::chrono::milliseconds(0)));
  agent.stop();
}
