// One remote client's session (rigd --listen): an authenticated
// connection of the machine link (machine_channel.hpp), its messages taken
// in order on a thread of its own and run as a local client's requests
// are (remote_client.hpp).  The connection is the client's job: a value
// that fails, a hand-over rigd refuses or a message that breaks the wire
// contract fails it as a whole (FAILURE with the root cause, then the
// connection closes), and the job's end, however it comes (CLOSE, the
// link's failure, rigd's stop), releases everything the client held, as a
// local client's departure does.
#pragma once

#include "client_counters.hpp"
#include "config.hpp"
#include "exports.hpp"
#include "machine_channel.hpp"
#include "served.hpp"
#include "user_clients.hpp"

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace rigd {

// The user that every remote client counts under in UserClients (its
// max_clients_per_user and _per_user limits bound remote clients
// together): (uid_t)-1, which is no Linux user's uid.
inline constexpr uid_t remote_user = static_cast<uid_t>(-1);

class RemoteSession {
 public:
  // Serves connection, a client users counted under remote_user (join),
  // on a thread of its own, under the policy it connected under; counts it
  // out as it ends, then calls on_end (on its thread).  Throws
  // std::system_error where the thread cannot be made: the count is then
  // still the caller's.
  RemoteSession(std::shared_ptr<rig::net::AgentConnection> connection, const ServedDevices &served,
                std::shared_ptr<const Policy> policy, Exports &exports, UserClients &users,
                std::function<void()> on_end);
  // Stops the session and waits for it to end.
  ~RemoteSession();
  RemoteSession(const RemoteSession &) = delete;
  RemoteSession &operator=(const RemoteSession &) = delete;

  // Asks the session to end: its connection closes, and what the client
  // held goes once its work is done.
  void stop() noexcept;
  bool ended() const noexcept { return ended_.load(std::memory_order_acquire); }
  // An admin's DROP (Session::drop): stops the session, true only where
  // nothing stopped it before.  Its callers hold the agent's lock.
  bool drop() noexcept;

  // As Session's: the client's counters (its pid 0, its uid remote_user,
  // its command its hello), and what it holds by kind.
  const ClientCounters &counters() const noexcept { return counters_; }
  UserClients::Counts held() const { return users_.read(counters_.held); }

 private:
  // Serves the job until it ends, and answers how it ended; what the
  // client held is released as it returns.
  std::string serve_job();
  // Fails the client's job, once: sends FAILURE with why, and the job ends.
  // Any thread.
  void fail_job(const std::string &why) noexcept;
  // After a FAILURE: waits, within the link's failure bound, for the client
  // to close the connection (the agent's side closes at its CLOSE), since
  // closing first could drop the FAILURE in flight.
  void linger() noexcept;
  // A message's bytes, shared by what reads them, given back to the
  // connection once the last reader lets go.
  std::shared_ptr<const std::vector<uint8_t>> kept_bytes(std::vector<uint8_t> bytes);

  std::shared_ptr<rig::net::AgentConnection> connection_;
  const ServedDevices &served_;
  std::shared_ptr<const Policy> policy_;
  Exports &exports_;
  UserClients &users_;
  uint64_t client_;
  std::string who_;  // "remote client N (key K, PEER)", for log lines
  ClientCounters counters_;
  std::function<void()> on_end_;
  std::atomic<bool> closing_{false};   // the job ends
  std::atomic<bool> stopping_{false};  // rigd ends it (stop)
  std::atomic<bool> job_failed_{false};
  std::once_flag failed_;
  std::atomic<bool> ended_{false};
  std::thread thread_;  // last: it starts once the rest is made
};

}  // namespace rigd
