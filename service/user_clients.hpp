// The clients each user has connected, bounded by the policy's
// max_clients_per_user: one table for rigd, so that one user cannot take
// every thread and segment rigd can make by connecting again and again.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace rigd {

class UserClients {
 public:
  // most: the clients a user may have connected at once; 0 for no bound.
  explicit UserClients(int64_t most) noexcept : most_(most) {}
  UserClients(const UserClients &) = delete;
  UserClients &operator=(const UserClients &) = delete;

  int64_t most() const noexcept { return most_; }

  // Counts one more client of user; false, counting nothing, where user
  // has the most connected already.
  bool join(uid_t user);
  // Counts one fewer client of user, which join counted.
  void leave(uid_t user) noexcept;

 private:
  int64_t most_;
  std::mutex mu_;
  std::unordered_map<uid_t, int64_t> connected_;  // users with clients only
};

}  // namespace rigd
