// What the UCX transport's suites share: two links of this process joined
// over TCP on 127.0.0.1 (the transport the machines use), and a peer in a
// child process.
#pragma once

#include <criterion/criterion.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>

#include "ucx_endpoint.hpp"
#include "ucx_link.hpp"
#include "ucx_listener.hpp"

namespace rig::net::test {

// UCX_TLS=tcp, before any link reads UCX's configuration.
inline void use_tcp() { setenv("UCX_TLS", "tcp", 1); }

// Holds what a listener accepts.
struct Accepted {
  std::mutex mutex;
  std::condition_variable changed;
  std::shared_ptr<UcxEndpoint> endpoint;

  UcxAcceptHandler handler() {
    return [this](std::shared_ptr<UcxEndpoint> accepted) {
      std::lock_guard lock(mutex);
      endpoint = std::move(accepted);
      changed.notify_all();
    };
  }
  std::shared_ptr<UcxEndpoint> wait(std::chrono::seconds limit = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex);
    changed.wait_for(lock, limit, [&] { return endpoint != nullptr; });
    return endpoint;
  }
};

// A server link listening on 127.0.0.1 and a client link connected to it.
// Handlers go on through server and client before connect().
struct LinkPair {
  std::unique_ptr<UcxLink> server;
  std::unique_ptr<UcxLink> client;
  std::unique_ptr<UcxListener> listener;
  Accepted accepted;
  std::shared_ptr<UcxEndpoint> to_server;  // the client's endpoint
  std::shared_ptr<UcxEndpoint> to_client;  // the server's

  // Each fails the test with UCX's message where it fails.
  void create(const UcxOptions &options = {}) {
    use_tcp();
    auto made_server = UcxLink::create(options);
    cr_assert(made_server.ok(), "%s", made_server.message().c_str());
    server = std::move(made_server.value());
    auto made_client = UcxLink::create(options);
    cr_assert(made_client.ok(), "%s", made_client.message().c_str());
    client = std::move(made_client.value());
  }
  void connect() {
    auto listening = server->listen("127.0.0.1:0", accepted.handler());
    cr_assert(listening.ok(), "%s", listening.message().c_str());
    listener = std::move(listening.value());
    auto connected = client->connect(listener->address());
    cr_assert(connected.ok(), "%s", connected.message().c_str());
    to_server = connected.value();
    to_client = accepted.wait();
    cr_assert(to_client != nullptr, "the server accepted nothing in 10 s");
  }
};

// Seconds since an instant, for the failure bounds.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace rig::net::test
