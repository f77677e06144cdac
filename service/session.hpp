// One admitted client's session: its welcome, its segments and its poller.
#pragma once

#include "client_counters.hpp"
#include "config.hpp"
#include "exports.hpp"
#include "peer.hpp"
#include "ring_segment.hpp"
#include "segments.hpp"
#include "served.hpp"
#include "user_clients.hpp"

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

namespace rigd {

// A new client number, unique in rigd's life, local and remote clients
// alike (their counters, exports and per_client contexts are by number).
uint64_t next_client_number();

class Session {
 public:
  // Serves a client rigd admitted (admission.hpp) on socket, a blocking
  // stream socket it takes, on a thread of its own: makes the client's
  // segments and poller, sends the welcome, then runs its requests until
  // it disconnects, breaks the rings' protocol or rigd stops.  Where any of
  // those cannot be made the client is refused with the reason instead.
  // users counts the client under peer's uid; the session counts it out as
  // it ends, then calls on_end (on its own thread).  It logs the client's
  // arrival and departure, and counts what it does (peer names it in its
  // counters).  Throws std::system_error where the thread cannot be made:
  // the socket and the count are then still the caller's.
  Session(int socket, const Peer &peer, const ServedDevices &served, std::shared_ptr<const Policy> policy,
          Exports &exports, UserClients &users, std::function<void()> on_end);
  // Stops the session, waits for it to end and closes its socket.
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  // Asks the session to end; it ends soon after, its objects released once
  // their work is done.
  void stop() noexcept;
  bool ended() const noexcept { return ended_.load(std::memory_order_acquire); }
  // An admin's DROP: stops the session, true the first time only.  A
  // dropped client is no longer connected, though its session may take a
  // while to end: a second DROP of it finds no client.
  bool drop() noexcept;

  // The client's counters, read while the session lives; what it holds by
  // kind, read under its account's lock.
  const ClientCounters &counters() const noexcept { return counters_; }
  UserClients::Counts held() const { return users_.read(counters_.held); }

 private:
  void serve();
  // Sends the welcome, the device records and the segments' fds.
  bool welcome(const Segment &completion, const Segment &ring);
  // Serves the admitted client's rings and socket until it goes or stop(),
  // then returns what it held to the served devices' drivers.
  void run(const rig::proxy::RingSegment &rings, const Segment &completion, const Segment &ring);
  void serve_client(const rig::proxy::RingSegment &rings, const Segment &completion, const Segment &ring);

  int socket_;
  const ServedDevices &served_;
  std::shared_ptr<const Policy> policy_;  // the one the client was admitted under
  Exports &exports_;
  UserClients &users_;
  uint64_t client_;  // the client's number, unique in rigd's life
  std::string who_;  // "client N (describe(peer))", for log lines
  uid_t user_;
  ClientCounters counters_;
  std::function<void()> on_end_;
  std::atomic<bool> ended_{false};
  std::atomic<bool> dropped_{false};
  std::thread thread_;  // last: it starts once the rest is made
};

}  // namespace rigd
