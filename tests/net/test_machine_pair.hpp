// What the machine connection's suites share (net/machine_channel.hpp): an
// agent's listener on 127.0.0.1 over TCP with a key ring of one key, what
// it accepts and refuses, and clients' inboxes, all in this process.
#pragma once

#include <criterion/criterion.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "machine_channel.hpp"

namespace rig::net::test {

using namespace std::chrono_literals;

inline constexpr auto kWait = 10s;

// UCX_TLS=tcp, before any link reads UCX's configuration.
inline void use_tcp() { setenv("UCX_TLS", "tcp", 1); }

inline Secret secret_of(char fill) {
  auto secret = Secret::of(std::vector<uint8_t>(32, static_cast<uint8_t>(fill)));
  cr_assert(secret.ok(), "%s", secret.ok() ? "" : secret.error().message.c_str());
  return std::move(secret.value());
}

// The agent's one key, "alpha", whose secret is 32 bytes of 'a'.
inline KeyRing ring_of_alpha() {
  KeyRing ring;
  auto added = ring.add("alpha", secret_of('a'));
  cr_assert(added.ok());
  return ring;
}
inline ClientKey key(std::string id, char fill) { return ClientKey{std::move(id), secret_of(fill)}; }

// Waits up to kWait for done(), which changed tells of, under mutex.
template <class Done>
bool wait_under(std::mutex &mutex, std::condition_variable &changed, Done done) {
  std::unique_lock lock(mutex);
  return changed.wait_for(lock, kWait, done);
}

// The machine's host and two devices (wire's rules: one host, id 0).
inline std::vector<MachineAccount> sample_devices() {
  return {{0, "CPU", "x86_64", 1 << 30, 1 << 20, {1}},
          {1, "CUDA:0", "sm_90", uint64_t{80} << 30, 50 << 20, {0, 2}},
          {2, "CUDA:1", "sm_90", uint64_t{81} << 30, 51 << 20, {}}};
}

inline bool same_accounts(const std::vector<MachineAccount> &a, const std::vector<MachineAccount> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i].id != b[i].id || a[i].name != b[i].name || a[i].arch != b[i].arch || a[i].budget != b[i].budget ||
        a[i].cache_bytes != b[i].cache_bytes || a[i].reach != b[i].reach)
      return false;
  return true;
}

// A listener on 127.0.0.1:0 and what it accepted and refused; given a
// failure, it sends each connection that FAILURE as it accepts it (as
// rigd does where it has no room for another client).
struct Agent {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::shared_ptr<AgentConnection>> accepted;
  std::vector<std::pair<std::string, std::string>> refused;  // peer, cause
  std::unique_ptr<AgentListener> listener;

  explicit Agent(AgentListener::Options options = {}, std::string failure_at_accept = "") {
    use_tcp();
    auto listening = AgentListener::listen(
        "127.0.0.1:0", ring_of_alpha(), sample_devices(), options,
        [this, failure_at_accept](std::shared_ptr<AgentConnection> connection) {
          if (!failure_at_accept.empty()) (void)connection->send(wire::Failure{failure_at_accept});
          std::lock_guard lock(mutex);
          accepted.push_back(std::move(connection));
          changed.notify_all();
        },
        [this](const std::string &peer, const std::string &cause) {
          std::lock_guard lock(mutex);
          refused.emplace_back(peer, cause);
          changed.notify_all();
        });
    cr_assert(listening.ok(), "%s", listening.ok() ? "" : listening.error().message.c_str());
    listener = std::move(listening.value());
  }

  std::shared_ptr<AgentConnection> take() {
    cr_assert(wait_under(mutex, changed, [&] { return !accepted.empty(); }), "the agent accepted nothing in 10 s");
    std::lock_guard lock(mutex);
    auto connection = accepted.front();
    accepted.pop_front();
    return connection;
  }
  std::pair<std::string, std::string> refusal() {
    cr_assert(wait_under(mutex, changed, [&] { return !refused.empty(); }), "the agent refused nothing in 10 s");
    std::lock_guard lock(mutex);
    return refused.front();
  }
};

// An Agent in a child process of its own, which serves until stop(): UCX
// 1.13 (Debian 12's) asserts where one of a process's workers replays an
// event it missed for a socket another worker of the process has opened
// since, its number reused (fixed in UCX 1.17), which an agent's closes
// and its clients' opens in one process could make happen.  Made before
// this process has any of UCX's state, which a fork's child must not share.
class AgentProcess {
 public:
  explicit AgentProcess(AgentListener::Options options = {}, std::string failure_at_accept = "") {
    int to_parent[2], to_child[2];
    cr_assert(pipe(to_parent) == 0 && pipe(to_child) == 0);
    pid_ = fork();
    cr_assert(pid_ >= 0);
    if (pid_ == 0) {
      close(to_parent[0]);
      close(to_child[1]);
      Agent agent(options, failure_at_accept);
      const std::string &address = agent.listener->address();
      char done;
      // Serves until the parent closes its end.
      if (write(to_parent[1], address.data(), address.size()) == static_cast<ssize_t>(address.size()))
        while (read(to_child[0], &done, 1) < 0 && errno == EINTR) {
        }
      _exit(0);
    }
    close(to_parent[1]);
    close(to_child[0]);
    to_child_ = to_child[1];
    char address[64] = {};
    const ssize_t got = read(to_parent[0], address, sizeof address - 1);
    close(to_parent[0]);
    cr_assert(got > 0, "the agent did not listen");
    address_ = address;
  }
  ~AgentProcess() {
    if (to_child_ < 0) return;
    close(to_child_);
    waitpid(pid_, nullptr, 0);
  }
  AgentProcess(const AgentProcess &) = delete;
  AgentProcess &operator=(const AgentProcess &) = delete;

  const std::string &address() const { return address_; }
  // Ends the agent, which must exit with status 0.
  void stop() {
    close(to_child_);
    to_child_ = -1;
    int status = 0;
    cr_assert(waitpid(pid_, &status, 0) == pid_ && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the agent ended with status %#x", status);
  }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  std::string address_;
};

// What a client's handlers heard: each message's kind and number (an
// ANSWER's or REQUEST's), the BYTES' data, the failure.
struct Inbox {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<wire::Kind> kinds;
  std::vector<uint64_t> numbers;
  std::vector<std::pair<const uint8_t *, std::vector<uint8_t>>> bytes;  // where, what
  std::optional<std::string> failure;
  int failures = 0;
  std::vector<std::byte> landing;  // the span place_bytes gives, unless empty
  bool place_nothing = false;

  ChannelHandlers handlers() {
    ChannelHandlers handlers;
    handlers.message = [this](const wire::Message &message) {
      std::lock_guard lock(mutex);
      kinds.push_back(wire::kind_of(message));
      if (const auto *answer = std::get_if<wire::Answer>(&message)) numbers.push_back(answer->number);
      if (const auto *got = std::get_if<wire::Bytes>(&message))
        bytes.emplace_back(got->data.bytes.data(),
                           std::vector<uint8_t>(got->data.bytes.begin(), got->data.bytes.end()));
      changed.notify_all();
    };
    handlers.place_bytes = [this](const wire::Bytes &, uint64_t length) {
      std::lock_guard lock(mutex);
      if (place_nothing) return std::span<std::byte>();
      landing.resize(length);
      return std::span<std::byte>(landing);
    };
    handlers.failed = [this](const std::string &why) {
      std::lock_guard lock(mutex);
      failure = why;
      failures++;
      changed.notify_all();
    };
    return handlers;
  }
  template <class Done>
  bool wait(Done done) {
    return wait_under(mutex, changed, done);
  }
};

inline ClientChannel::Options client_options(std::string hello = "test client") {
  ClientChannel::Options options;
  options.hello = std::move(hello);
  return options;
}

inline std::unique_ptr<ClientChannel> connect(Agent &agent, Inbox &inbox, const ClientKey &with) {
  auto connected = ClientChannel::connect(agent.listener->address(), with, client_options(), inbox.handlers());
  cr_assert(connected.ok(), "%s", connected.ok() ? "" : connected.error().message.c_str());
  return std::move(connected.value());
}

inline wire::Request request(uint64_t number) { return wire::Request{number, 1, number, wire::Open{"a=b"}}; }

// The client's next message at the agent, which must come.
inline ReceivedMessage next_of(AgentConnection &connection) {
  auto received = connection.next(kWait);
  cr_assert(received.has_value(), "no message at the agent in 10 s (%s)", connection.failure().c_str());
  return std::move(*received);
}

}  // namespace rig::net::test
