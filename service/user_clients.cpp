// The clients each user has connected (user_clients.hpp).
#include "user_clients.hpp"

namespace rigd {

bool UserClients::join(uid_t user) {
  std::lock_guard g(mu_);
  int64_t &n = connected_[user];
  if (most_ > 0 && n >= most_) return false;
  ++n;
  return true;
}

void UserClients::leave(uid_t user) noexcept {
  std::lock_guard g(mu_);
  auto it = connected_.find(user);
  if (it != connected_.end() && --it->second == 0) connected_.erase(it);
}

}  // namespace rigd
