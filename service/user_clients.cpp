// The clients each user has connected (user_clients.hpp).
#include "user_clients.hpp"

#include <algorithm>

namespace rigd {

int64_t UserClients::most() const {
  std::lock_guard g(mu_);
  return most_;
}

int64_t UserClients::most_clients() const {
  std::lock_guard g(mu_);
  return most_clients_;
}

void UserClients::set_bounds(int64_t most, const Limits &limits, int64_t most_clients) {
  std::lock_guard g(mu_);
  most_ = most;
  limits_ = limits;
  most_clients_ = most_clients;
}

bool UserClients::join(uid_t user) {
  std::lock_guard g(mu_);
  if (most_clients_ > 0 && clients_ >= most_clients_) return false;
  User &u = users_[user];
  if (most_ > 0 && u.clients >= most_) return false;
  ++u.clients;
  ++clients_;
  return true;
}

void UserClients::leave(uid_t user) noexcept {
  std::lock_guard g(mu_);
  auto it = users_.find(user);
  if (it == users_.end()) return;
  --it->second.clients;
  --clients_;
  forget_if_idle(it);
}

void UserClients::forget_if_idle(std::unordered_map<uid_t, User>::iterator it) noexcept {
  const User &u = it->second;
  if (u.clients <= 0 && std::all_of(u.held.begin(), u.held.end(), [](int64_t n) { return n == 0; })) users_.erase(it);
}

std::string UserClients::take(uid_t user, Counts &client, Held kind, int64_t n) {
  auto k = static_cast<size_t>(kind);
  std::lock_guard g(mu_);
  const Limit &limit = limits_[kind];
  User &u = users_[user];
  // Within the bound, computed without overflow for any n >= 0.
  auto passes = [n](int64_t held, int64_t most) { return most > 0 && (n > most || held > most - n); };
  if (passes(client[k], limit.client)) return refusal(kind, false, client[k], n, limit.client);
  if (passes(u.held[k], limit.user)) return refusal(kind, true, u.held[k], n, limit.user);
  client[k] += n;
  u.held[k] += n;
  total_[k] += n;
  return {};
}

void UserClients::give(uid_t user, Counts &client, Held kind, int64_t n) noexcept {
  auto k = static_cast<size_t>(kind);
  std::lock_guard g(mu_);
  client[k] -= n;
  total_[k] -= n;
  auto it = users_.find(user);
  if (it == users_.end()) return;
  it->second.held[k] -= n;
  forget_if_idle(it);
}

void UserClients::give_all(uid_t user, Counts &client) noexcept {
  std::lock_guard g(mu_);
  auto it = users_.find(user);
  for (size_t k = 0; k < held_kinds; ++k) {
    total_[k] -= client[k];
    if (it != users_.end()) it->second.held[k] -= client[k];
    client[k] = 0;
  }
  if (it != users_.end()) forget_if_idle(it);
}

UserClients::Counts UserClients::read(const Counts &client) const {
  std::lock_guard g(mu_);
  return client;
}

int64_t UserClients::total(Held kind) const {
  std::lock_guard g(mu_);
  return total_[static_cast<size_t>(kind)];
}

int64_t UserClients::clients() const {
  std::lock_guard g(mu_);
  return clients_;
}

}  // namespace rigd
