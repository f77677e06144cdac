// A machine connection (net/machine_channel.hpp) over 127.0.0.1 and TCP:
// the right key is accepted and the agent's DEVICES arrive, owned and
// equal to the listener's; messages go both ways in order; a BYTES' data
// lands in the span the client placed; a HANDOVER's PUT arrives equal,
// sent whole or split; the client's destructor sends
// CLOSE; the listener tells its real port.
//
// The handshake is the link's own (issue #23's protocol, no rule ID in
// RULES.md).  The connection's side of PROXY-02 (calls become messages on
// the link), PROXY-04 (DEVICES, one account for each device the agent
// opened), PROXY-46 (messages in order, never interleaved) and PROXY-37
// (a copy's bytes land where the copy names).
#include <criterion/criterion.h>

#include <algorithm>
#include <numeric>
#include <thread>

#include "test_machine_pair.hpp"

using namespace rig::net;
using namespace rig::net::test;

namespace {

// size bytes, each telling its place (a step apart), to tell bytes moved
// or lost.
std::vector<uint8_t> patterned(size_t size, size_t step) {
  std::vector<uint8_t> data(size);
  for (size_t i = 0; i < size; i++) data[i] = static_cast<uint8_t>(i * step + size);
  return data;
}

}  // namespace

Test(machine_channel, right_key_accepted_devices_owned_and_equal_PROXY_04) {
  Agent agent;
  Inbox inbox;
  std::vector<MachineAccount> devices;
  {
    auto client = connect(agent, inbox, key("alpha", 'a'));
    devices = client->devices();
    auto connection = agent.take();
    cr_expect_eq(connection->key_id(), "alpha");
    cr_expect_eq(connection->hello(), "test client");
    cr_expect(connection->peer().rfind("127.0.0.1:", 0) == 0, "peer %s", connection->peer().c_str());
    cr_expect(!connection->failed() && !client->failed());
    cr_expect_eq(client->address(), agent.listener->address());
  }
  // Owned: the channel and its link are gone, the accounts are intact.
  cr_assert(same_accounts(devices, sample_devices()), "DEVICES differ from the listener's");
  std::lock_guard lock(agent.mutex);
  cr_expect(agent.refused.empty());
}

Test(machine_channel, listener_address_has_the_real_port) {
  Agent agent;
  const std::string &address = agent.listener->address();
  cr_assert(address.rfind("127.0.0.1:", 0) == 0, "address %s", address.c_str());
  const unsigned long port = std::stoul(address.substr(address.rfind(':') + 1));
  cr_expect(port > 0 && port < 65536, "port %lu", port);
}

Test(machine_channel, messages_both_ways_in_order_PROXY_02_PROXY_46) {
  Agent agent;
  Inbox inbox;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto connection = agent.take();
  constexpr uint64_t kCount = 200;
  // Two threads' requests: each thread's in its order, none lost.
  bool odd_sent = true;
  std::thread odd([&] {
    for (uint64_t n = 1; n <= kCount; n += 2) odd_sent = odd_sent && client->send(request(n)).ok();
  });
  for (uint64_t n = 2; n <= kCount; n += 2) cr_assert(client->send(request(n)).ok());
  odd.join();
  cr_assert(odd_sent, "%s", client->failure().c_str());
  std::vector<uint64_t> got;
  for (uint64_t i = 0; i < kCount; i++) {
    ReceivedMessage received = next_of(*connection);
    const auto *req = std::get_if<wire::Request>(&received.message);
    cr_assert(req != nullptr, "message %lu is no REQUEST", static_cast<unsigned long>(i));
    got.push_back(req->number);
  }
  for (uint64_t parity = 0; parity < 2; parity++) {
    std::vector<uint64_t> of;
    std::copy_if(got.begin(), got.end(), std::back_inserter(of), [&](uint64_t n) { return n % 2 == parity; });
    cr_expect(std::is_sorted(of.begin(), of.end()), "a thread's requests out of order");
    cr_expect_eq(of.size(), kCount / 2);
  }
  for (uint64_t n = 1; n <= kCount; n++) cr_assert(connection->send(wire::Answer{n, 0, n, 0, ""}).ok());
  cr_assert(inbox.wait([&] { return inbox.numbers.size() == kCount; }), "%zu answers of %lu", inbox.numbers.size(),
            static_cast<unsigned long>(kCount));
  std::vector<uint64_t> expected(kCount);
  std::iota(expected.begin(), expected.end(), 1);
  cr_expect(inbox.numbers == expected, "answers out of order");
}

Test(machine_channel, bytes_data_lands_in_the_placed_span_PROXY_37) {
  Agent agent;
  Inbox inbox;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto connection = agent.take();
  // An eager one and a rendezvous one (4 MiB).
  for (size_t size : {size_t{100}, size_t{4} << 20}) {
    const std::vector<uint8_t> data = patterned(size, 7);
    const size_t before = inbox.bytes.size();
    cr_assert(connection->send(wire::Bytes{1, 3, 2, 64, wire::Data{data}}).ok());
    cr_assert(inbox.wait([&] { return inbox.bytes.size() == before + 1; }), "no BYTES of %zu bytes", size);
    std::lock_guard lock(inbox.mutex);
    cr_expect_eq(inbox.bytes.back().first, reinterpret_cast<const uint8_t *>(inbox.landing.data()),
                 "the BYTES' data is not the placed span");
    cr_expect(inbox.bytes.back().second == data, "the BYTES' %zu bytes differ", size);
  }
  cr_expect(!client->failed(), "%s", client->failure().c_str());
}

// A HANDOVER's PUT bytes, whether they go in the encoding (a small PUT)
// or after it from the caller's memory (the framing's split, 4 MiB, a
// rendezvous), arrive at the agent equal to what the client sent
// (PROXY-38, PROXY-45).
Test(machine_channel, a_handovers_put_bytes_arrive_equal_split_or_whole_PROXY_38_PROXY_45) {
  Agent agent;
  Inbox inbox;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto connection = agent.take();
  const std::vector<uint8_t> small = patterned(100, 11), large = patterned(size_t{4} << 20, 11);
  std::vector<wire::Handover> sent;
  for (const std::vector<uint8_t> *data : {&small, &large})
    sent.push_back({1, sent.size() + 1, {wire::Wait{2, 3}}, {wire::Fill{{4, 0}, 8, 1}, wire::Put{{5, 64}, {*data}}}});
  for (const wire::Handover &h : sent) cr_assert(client->send(h).ok(), "%s", client->failure().c_str());
  for (const wire::Handover &h : sent) {
    ReceivedMessage received = next_of(*connection);
    const auto *got = std::get_if<wire::Handover>(&received.message);
    cr_assert(got != nullptr, "the agent got no HANDOVER of value %lu", static_cast<unsigned long>(h.value));
    cr_expect(*got == h, "the HANDOVER of value %lu arrived otherwise", static_cast<unsigned long>(h.value));
  }
  cr_expect(!connection->failed(), "%s", connection->failure().c_str());
}

// A message's bytes the owner gives back are where the next large
// message lands (no fresh pages to fault in), and that message arrives
// equal to what the client sent, none of the earlier one's bytes left.
Test(machine_channel, bytes_given_back_take_the_next_landing_PROXY_38) {
  Agent agent;
  Inbox inbox;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto connection = agent.take();
  const std::vector<uint8_t> first = patterned(size_t{4} << 20, 3), second = patterned(size_t{4} << 20, 5);
  const wire::Handover sent[] = {{1, 1, {}, {wire::Put{{5, 0}, {first}}}}, {1, 2, {}, {wire::Put{{5, 0}, {second}}}}};
  cr_assert(client->send(sent[0]).ok(), "%s", client->failure().c_str());
  ReceivedMessage received = next_of(*connection);
  const uint8_t *landed = received.bytes.data();
  connection->give_back(std::move(received.bytes));
  cr_assert(client->send(sent[1]).ok(), "%s", client->failure().c_str());
  received = next_of(*connection);
  cr_expect_eq(received.bytes.data(), landed, "the second message landed in new memory");
  const auto *got = std::get_if<wire::Handover>(&received.message);
  cr_assert(got != nullptr && *got == sent[1], "the second HANDOVER arrived otherwise");
}

Test(machine_channel, client_destructor_sends_close) {
  Agent agent;
  Inbox inbox;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto connection = agent.take();
  cr_assert(client->send(request(1)).ok());
  client.reset();
  cr_expect(std::holds_alternative<wire::Request>(next_of(*connection).message));
  cr_expect(std::holds_alternative<wire::Close>(next_of(*connection).message), "no CLOSE after the REQUEST");
  cr_expect(!connection->next(std::chrono::milliseconds(0)).has_value());
  cr_expect(connection->failed());
  // The handlers heard nothing once the destructor returned.
  cr_expect_eq(inbox.failures, 0);
}
