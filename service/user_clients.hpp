// The clients each user has connected, bounded by the policy's
// max_clients_per_user and max_clients, and what they hold (limits.hpp):
// one table for rigd, so that one user cannot take every thread, segment,
// byte or descriptor rigd can make by connecting again and again.
#pragma once

#include "limits.hpp"

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace rigd {

class UserClients {
 public:
  // most: the clients a user may have connected at once; limits: what the
  // clients hold, each and each user's together; most_clients: the
  // clients of every user at once.  0 for no bound.
  explicit UserClients(int64_t most, const Limits &limits = {}, int64_t most_clients = 0) noexcept
      : most_(most), most_clients_(most_clients), limits_(limits) {}
  UserClients(const UserClients &) = delete;
  UserClients &operator=(const UserClients &) = delete;

  int64_t most() const;
  int64_t most_clients() const;

  // The bounds from now on (a reloaded policy's): what clients hold
  // already stays, and the next join and take see the new bounds.
  void set_bounds(int64_t most, const Limits &limits, int64_t most_clients);

  // Counts one more client of user; false, counting nothing, where user
  // has the most connected already, or rigd has max_clients.
  bool join(uid_t user);
  // Counts one fewer client of user, which join counted.
  void leave(uid_t user) noexcept;

  // What one client holds, by kind.
  using Counts = std::array<int64_t, held_kinds>;
  // Counts n more of kind in client's counts and its user's, where both
  // stay within their limits, and answers ""; else counts nothing and
  // answers why (refusal()).
  std::string take(uid_t user, Counts &client, Held kind, int64_t n);
  // Counts n fewer of kind, which take counted.
  void give(uid_t user, Counts &client, Held kind, int64_t n) noexcept;
  // Counts none of what client holds any more, as it goes.
  void give_all(uid_t user, Counts &client) noexcept;

  // A copy of what client holds, read under the lock that take and give
  // hold.
  Counts read(const Counts &client) const;

  // What every client holds together, and the clients connected.
  int64_t total(Held kind) const;
  int64_t clients() const;

 private:
  struct User {
    int64_t clients = 0;
    Counts held{};
  };
  // Forgets user once it has no client and holds nothing (under mu_).
  void forget_if_idle(std::unordered_map<uid_t, User>::iterator it) noexcept;

  mutable std::mutex mu_;
  int64_t most_, most_clients_;  // under mu_
  Limits limits_;                // under mu_
  std::unordered_map<uid_t, User> users_;  // users with clients, or holding
  int64_t clients_ = 0;
  Counts total_{};
};

}  // namespace rigd
