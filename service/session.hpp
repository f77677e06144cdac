// One client's session: admission, handshake, its segments and its poller.
#pragma once

#include "config.hpp"
#include "exports.hpp"
#include "ring_segment.hpp"
#include "segments.hpp"
#include "served.hpp"
#include "user_clients.hpp"

#include <atomic>
#include <thread>

namespace rigd {

class Session {
 public:
  // Takes the connected socket and serves the client on a thread of its
  // own: checks its credentials (SO_PEERCRED) against policy, answers its
  // hello, passes it its segments, then runs its requests until it
  // disconnects, breaks the rings' protocol or rigd stops.  users counts
  // the admitted client under its user while it is connected.
  Session(int socket, const ServedDevices &served, const Policy &policy, Exports &exports, UserClients &users);
  // Stops the session and waits for it to end.
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  // Asks the session to end; it ends soon after, its objects released once
  // their work is done.
  void stop() noexcept;
  bool ended() const noexcept { return ended_.load(std::memory_order_acquire); }

 private:
  void serve();
  // Reads the hello and checks it and the peer's credentials, and counts
  // the client under its user; answers a refusal and false if the client
  // may not connect.
  bool admit();
  // Sends the welcome, the device records and the segments' fds.
  bool welcome(const Segment &completion, const Segment &ring);
  // Serves the admitted client's rings and socket until it goes or stop(),
  // then returns what it held to the served devices' drivers.
  void run(const rig::proxy::RingSegment &rings, const Segment &completion);
  void serve_client(const rig::proxy::RingSegment &rings, const Segment &completion);

  int socket_;
  const ServedDevices &served_;
  const Policy &policy_;
  Exports &exports_;
  UserClients &users_;
  uint64_t client_;       // the client's number, unique in rigd's life
  uid_t user_ = 0;        // the client's user, once admitted
  bool counted_ = false;  // in users_, until the session ends
  std::atomic<bool> ended_{false};
  std::thread thread_;
};

}  // namespace rigd
