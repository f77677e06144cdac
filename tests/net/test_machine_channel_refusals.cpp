// A machine connection's refusals and failures (net/machine_channel.hpp)
// over 127.0.0.1 and TCP: an unknown key id and a wrong secret are
// refused (the client reads "authentication failed", the agent's Refused
// hears the cause); a client with no PROOF within the failure bound is
// closed; a message that does not decode, a wire message before ACCEPT,
// an authentication message after it and messages past the agent's queue
// bound fail their connection only, with the reason; an empty span for a
// BYTES fails the client's connection; the agent's FAILURE reaches the
// client with its root cause, one sent at accept included (an agent in a
// process of its own); a BYTES' header that breaks a rule is
// refused before its data lands.
//
// The handshake is the link's own (issue #23's protocol, no rule ID in
// RULES.md).  The connection's side of PROXY-07 and PROXY-89 (a link's
// failure, with its root cause, reaches everything on the link).
#include <criterion/criterion.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>

#include "auth_client.hpp"
#include "machine_channel_frame.hpp"
#include "test_machine_pair.hpp"
#include "ucx_endpoint.hpp"
#include "ucx_link.hpp"
#include "wire_encode.hpp"

using namespace rig::net;
using namespace rig::net::test;

namespace {

// A client of the bare link, which sends what a ClientChannel would not.
struct RawClient {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<uint8_t> challenge, answer;
  bool devices = false;
  std::optional<std::string> failure;
  std::unique_ptr<UcxLink> link;
  std::shared_ptr<UcxEndpoint> endpoint;

  explicit RawClient(const std::string &address, UcxOptions options = {}) {
    use_tcp();
    auto made = UcxLink::create(options);
    cr_assert(made.ok(), "%s", made.message().c_str());
    link = std::move(made.value());
    link->on_message(kAuthChallengeId, keep(challenge));
    link->on_message(kAuthAnswerId, keep(answer));
    UcxHandler on_devices;
    on_devices.deliver = [this](const UcxMessage &) {
      std::lock_guard lock(mutex);
      devices = true;
      changed.notify_all();
    };
    link->on_message(static_cast<uint16_t>(wire::Kind::Devices), on_devices);
    auto connected = link->connect(address);
    cr_assert(connected.ok(), "%s", connected.message().c_str());
    endpoint = connected.value();
    endpoint->on_failure([this](const std::string &why) {
      std::lock_guard lock(mutex);
      failure = why;
      changed.notify_all();
    });
  }
  UcxHandler keep(std::vector<uint8_t> &into) {
    UcxHandler handler;
    handler.deliver = [this, &into](const UcxMessage &message) {
      std::lock_guard lock(mutex);
      const auto *first = reinterpret_cast<const uint8_t *>(message.data.data());
      into.assign(first, first + message.data.size());
      changed.notify_all();
    };
    return handler;
  }
  template <class Done>
  bool wait(Done done) {
    return wait_under(mutex, changed, done);
  }
  // The handshake with key alpha, up to DEVICES.
  void authenticate() {
    cr_assert(wait([&] { return !challenge.empty(); }), "no CHALLENGE");
    auto proof = make_proof(challenge, key("alpha", 'a'), {});
    cr_assert(proof.ok());
    cr_assert(send(kAuthProofId, proof.value().bytes()).ok());
    cr_assert(wait([&] { return devices; }), "no DEVICES");
  }
  UcxStatus send(uint16_t id, std::span<const uint8_t> data) { return endpoint->send(id, {}, std::as_bytes(data)); }
  UcxStatus send(const wire::Message &message) {
    auto encoded = wire::encode(message);
    cr_assert(encoded.ok());
    return send(static_cast<uint16_t>(wire::kind_of(message)), encoded.value());
  }
  bool closed() {
    return wait([&] { return failure.has_value(); });
  }
};

// The connection failed, its failure naming what; nothing queued after.
void expect_failed_with(AgentConnection &connection, const std::string &what) {
  auto after = connection.next(kWait);
  cr_expect(!after.has_value(), "a message after the failure");
  cr_assert(connection.failed(), "the connection works still");
  cr_expect(connection.failure().find(what) != std::string::npos, "failure \"%s\" names no \"%s\"",
            connection.failure().c_str(), what.c_str());
}

void expect_refused(ClientKey with, const std::string &cause) {
  Agent agent;
  Inbox inbox;
  auto connected = ClientChannel::connect(agent.listener->address(), with, client_options(), inbox.handlers());
  cr_assert(!connected.ok(), "connected with a wrong key");
  const std::string &why = connected.error().message;
  cr_expect(why.size() >= 21 && why.substr(why.size() - 21) == "authentication failed", "refused with \"%s\"",
            why.c_str());
  auto [peer, heard] = agent.refusal();
  cr_expect(peer.rfind("127.0.0.1:", 0) == 0, "peer %s", peer.c_str());
  cr_expect(heard.find(cause) != std::string::npos, "cause \"%s\" names no \"%s\"", heard.c_str(), cause.c_str());
  std::lock_guard lock(agent.mutex);
  cr_expect(agent.accepted.empty());
}

}  // namespace

Test(machine_channel_refusals, unknown_key_id_refused) { expect_refused(key("beta", 'a'), "unknown key id beta"); }

Test(machine_channel_refusals, wrong_secret_refused) { expect_refused(key("alpha", 'b'), "bad mac for key id alpha"); }

Test(machine_channel_refusals, no_proof_within_the_failure_bound_closed) {
  AgentListener::Options options;
  options.ucx.failure_bound = std::chrono::milliseconds(1000);
  Agent agent(options);
  // Its heartbeats within the agent's bound: only the PROOF is missing.
  RawClient raw(agent.listener->address(), options.ucx);
  cr_assert(raw.wait([&] { return !raw.challenge.empty(); }), "no CHALLENGE");
  auto [peer, cause] = agent.refusal();
  cr_expect(cause.find("no PROOF") != std::string::npos, "cause %s", cause.c_str());
  cr_expect(raw.closed(), "the agent kept a connection with no PROOF");
}

Test(machine_channel_refusals, garbage_fails_its_connection_only_a_second_one_works) {
  Agent agent;
  RawClient raw(agent.listener->address());
  raw.authenticate();
  auto bad = agent.take();
  Inbox inbox;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto good = agent.take();
  const std::vector<uint8_t> garbage = {2, 0, 1, 0, 9, 9, 9};
  cr_assert(raw.send(2, garbage).ok());
  expect_failed_with(*bad, "a REQUEST ends at byte 12 of 7");
  cr_expect(raw.closed(), "the agent kept the connection that sent garbage");
  cr_assert(client->send(request(5)).ok());
  ReceivedMessage got = next_of(*good);
  const auto *req = std::get_if<wire::Request>(&got.message);
  cr_assert(req != nullptr && req->number == 5);
  cr_assert(good->send(wire::Answer{5, 0, 0, 0, ""}).ok());
  cr_expect(inbox.wait([&] { return inbox.numbers.size() == 1; }), "no ANSWER on the second connection");
  cr_expect(!good->failed() && !client->failed());
}

Test(machine_channel_refusals, wire_message_before_accept_fails_the_connection) {
  Agent agent;
  RawClient raw(agent.listener->address());
  cr_assert(raw.wait([&] { return !raw.challenge.empty(); }), "no CHALLENGE");
  cr_assert(raw.send(request(1)).ok());
  auto [peer, cause] = agent.refusal();
  cr_expect_eq(cause, "a REQUEST before ACCEPT");
  cr_expect(raw.closed());
}

Test(machine_channel_refusals, auth_message_after_accept_fails_the_connection) {
  Agent agent;
  RawClient raw(agent.listener->address());
  raw.authenticate();
  auto connection = agent.take();
  cr_assert(raw.send(kAuthProofId, std::vector<uint8_t>(10, 1)).ok());
  expect_failed_with(*connection, "a PROOF after ACCEPT");
  cr_expect(raw.closed());
}

Test(machine_channel_refusals, client_past_the_queue_bound_fails) {
  AgentListener::Options options;
  options.queue_max = 4096;
  Agent agent(options);
  Inbox inbox;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto connection = agent.take();
  const std::vector<uint8_t> image(4096, 0x5a);
  // The send itself may end with the failure: the agent refuses the data.
  (void)client->send(wire::Request{1, 1, 7, wire::Image{wire::Data{image}}});
  expect_failed_with(*connection, "past the connection's bound of 4096");
  cr_expect(inbox.wait([&] { return inbox.failure.has_value(); }), "the client did not hear it");
}

Test(machine_channel_refusals, empty_span_for_bytes_fails_the_client) {
  Agent agent;
  Inbox inbox;
  inbox.place_nothing = true;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto connection = agent.take();
  const std::vector<uint8_t> data(64, 1);
  cr_assert(connection->send(wire::Bytes{1, 3, 0, 0, wire::Data{data}}).ok());
  cr_assert(inbox.wait([&] { return inbox.failure.has_value(); }), "no failure");
  cr_expect(inbox.failure->rfind("BYTES for no GET", 0) == 0, "failure %s", inbox.failure->c_str());
  cr_expect(client->failed() && client->failure() == *inbox.failure);
  cr_expect(inbox.bytes.empty());
  cr_expect_eq(inbox.failures, 1);
}

Test(machine_channel_refusals, agent_failure_reaches_the_client_with_its_root_cause_PROXY_89) {
  Agent agent;
  Inbox inbox;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto connection = agent.take();
  cr_assert(connection->send(wire::Failure{"device 1 lost: ECC error"}).ok());
  cr_assert(inbox.wait([&] { return inbox.failure.has_value(); }), "no failure");
  cr_expect_eq(*inbox.failure, "device 1 lost: ECC error");
  cr_expect(!client->send(request(1)).ok(), "a send after the failure worked");
}

// A FAILURE the agent sends as it accepts reaches the client's owner
// however it races the handshake's end: connect fails with its root
// cause, or the channel it returns tells its failed() handler.  Many
// connections, since the race is one of threads.  The agent runs in a
// child process, as rigd does (AgentProcess says why).
Test(machine_channel_refusals, a_failure_at_accept_reaches_the_owner_PROXY_89) {
  const std::string reason = "rigd has 1 clients connected, the most its policy admits (max_clients)";
  AgentProcess agent({}, reason);
  const std::string &address = agent.address();
  for (int i = 0; i < 60; i++) {
    Inbox inbox;
    auto connected = ClientChannel::connect(address, key("alpha", 'a'), client_options(), inbox.handlers());
    std::string heard = connected.ok() ? "" : connected.error().message;
    if (connected.ok() && inbox.wait([&] { return inbox.failure.has_value(); })) heard = *inbox.failure;
    cr_assert_eq(heard, reason, "connection %d heard \"%s\"", i, heard.c_str());
  }
  agent.stop();
}

// The agent's close ends a send that waits on a client that takes
// nothing (a stopped process: its link fetches no rendezvous, and sends no
// heartbeat, but the failure bound is a minute here): the send returns
// failed within a second of the close, rather than holding the
// connection open.  The client is a child process, which stops itself.
Test(machine_channel_refusals, close_ends_a_send_the_client_never_takes, .timeout = 60) {
  // The client forks before this process has any of UCX's state.
  int address_pipe[2], ready[2];
  cr_assert(pipe(address_pipe) == 0 && pipe(ready) == 0);
  pid_t client_pid = fork();
  cr_assert(client_pid >= 0);
  if (client_pid == 0) {
    close(address_pipe[1]);
    close(ready[0]);
    char address[64] = {};
    char ok = 0;
    if (read(address_pipe[0], address, sizeof address - 1) > 0) {
      Inbox inbox;
      ClientChannel::Options client = client_options();
      client.ucx.failure_bound = std::chrono::seconds(60);
      auto connected = ClientChannel::connect(address, key("alpha", 'a'), client, inbox.handlers());
      ok = connected.ok() ? 1 : 0;
      (void)!write(ready[1], &ok, 1);
      raise(SIGSTOP);
    }
    _exit(0);
  }
  close(address_pipe[0]);
  close(ready[1]);
  AgentListener::Options options;
  options.ucx.failure_bound = std::chrono::seconds(60);
  Agent agent(options);
  const std::string &address = agent.listener->address();
  cr_assert(write(address_pipe[1], address.data(), address.size()) == static_cast<ssize_t>(address.size()));
  char ok = 0;
  cr_assert(read(ready[0], &ok, 1) == 1 && ok == 1, "the client did not connect");
  int status = 0;
  cr_assert(waitpid(client_pid, &status, WUNTRACED) == client_pid && WIFSTOPPED(status));
  auto connection = agent.take();
  const std::vector<uint8_t> data(64 << 20, 7);
  std::atomic<bool> returned{false};
  UcxStatus sent = UcxStatus::success();
  std::thread sender([&] {
    sent = connection->send(wire::Bytes{1, 1, 0, 0, wire::Data{data}});
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const bool waited = !returned;
  const auto closed_at = std::chrono::steady_clock::now();
  connection->close();
  while (!returned && std::chrono::steady_clock::now() - closed_at < std::chrono::seconds(5))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const bool returned_at_close = returned;
  const double after = std::chrono::duration<double>(std::chrono::steady_clock::now() - closed_at).count();
  // A killed client ends the send in any case.
  kill(client_pid, SIGKILL);
  waitpid(client_pid, &status, 0);
  sender.join();
  cr_assert(waited, "the send returned before the close, with the client stopped");
  cr_assert(returned_at_close && after < 1.0, "the send still waited %.1f s after the close", after);
  cr_assert(!sent.ok(), "a send to a stopped client succeeded");
}

Test(machine_channel_refusals, a_kind_from_the_wrong_end_fails_the_connection_and_is_not_sent) {
  Agent agent;
  RawClient raw(agent.listener->address());
  raw.authenticate();
  auto connection = agent.take();
  cr_assert(raw.send(wire::Report{1, 1}).ok());
  expect_failed_with(*connection, "a REPORT from the client, which only the agent sends");
  cr_expect(raw.closed());

  // Neither end sends the other's kinds: refused, the connection intact.
  Inbox inbox;
  auto client = connect(agent, inbox, key("alpha", 'a'));
  auto good = agent.take();
  UcxStatus sent = client->send(wire::Report{1, 1});
  cr_expect_eq(sent.message(), "a REPORT from the client, which only the agent sends");
  sent = good->send(request(1));
  cr_expect_eq(sent.message(), "a REQUEST from the agent, which only clients send");
  cr_assert(client->send(request(2)).ok());
  ReceivedMessage got = next_of(*good);
  cr_expect(std::holds_alternative<wire::Request>(got.message));
  cr_expect(!client->failed() && !good->failed());
}

namespace {

// A BYTES' active message header: kind, version, device, value, part,
// offset and the data's length, little-endian.
std::vector<std::byte> bytes_header(uint64_t value, uint64_t length) {
  std::vector<std::byte> header;
  auto put = [&](uint64_t n, size_t size) {
    for (size_t i = 0; i < size; i++) header.push_back(static_cast<std::byte>(n >> (8 * i)));
  };
  put(7, 2), put(1, 2), put(1, 4), put(value, 8), put(0, 4), put(0, 8), put(length, 8);
  return header;
}

std::string why_head_refused(std::span<const std::byte> header, uint64_t length) {
  auto head = channel::decode_bytes_head(header, length);
  cr_assert(!head.ok(), "a BYTES' header taken that breaks a rule");
  return head.error().message;
}

}  // namespace

// The fields that place_bytes hears are checked before the data lands.
Test(machine_channel_refusals, a_bytes_header_breaking_a_rule_is_refused_with_its_numbers) {
  auto good = channel::decode_bytes_head(bytes_header(3, 4), 4);
  cr_assert(good.ok() && good.value().value == 3 && good.value().device == 1);
  cr_expect_eq(why_head_refused(bytes_header(0, 4), 4), "a BYTES: value 0, at least 1");
  cr_expect_eq(why_head_refused(bytes_header(3, 5), 4), "a BYTES' header states 5 bytes of data, its message carries 4");
  cr_expect_eq(why_head_refused(bytes_header(3, 0), 0), "a BYTES: bytes 0, at least 1");
  std::vector<std::byte> short_header = bytes_header(3, 4);
  short_header.pop_back();
  cr_expect_eq(why_head_refused(short_header, 4), "a BYTES' header of 35 bytes, not 36");
}
