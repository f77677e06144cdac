// What one client holds in rigd, counted in its user's counts and bounded
// by the limits of both (user_clients.hpp); what it still holds as it goes
// is given back at once.
#pragma once

#include "user_clients.hpp"

#include <sys/types.h>

#include <string>

namespace rigd {

class Account {
 public:
  Account(UserClients &users, uid_t user) noexcept : Account(users, user, own_) {}
  // held keeps the counts, where the admin channel reads them
  // (UserClients::read), and must outlive the account.
  Account(UserClients &users, uid_t user, UserClients::Counts &held) noexcept
      : users_(users), user_(user), held_(held) {}
  ~Account();
  Account(const Account &) = delete;
  Account &operator=(const Account &) = delete;

  // Counts n more of kind and answers "", or answers why not (the limit's
  // key and numbers) and counts nothing.  Thread-safe.
  std::string take(Held kind, int64_t n) { return users_.take(user_, held_, kind, n); }
  // Counts n fewer of kind, which take counted.
  void give(Held kind, int64_t n) noexcept { users_.give(user_, held_, kind, n); }

  // rigd's counts of every client (monitoring and tests).
  const UserClients &everyone() const noexcept { return users_; }

 private:
  UserClients &users_;
  uid_t user_;
  UserClients::Counts own_{};
  UserClients::Counts &held_;  // under users_'s lock
};

}  // namespace rigd
