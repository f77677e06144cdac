// Exported buffers (exports.hpp).
#include "exports.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace rigd {

namespace {

uint64_t random_token() {
  uint64_t token = 0;
  while (token == 0)
    if (getrandom(&token, sizeof token, 0) != static_cast<ssize_t>(sizeof token)) token = 0;
  return token;
}

}  // namespace

Exports::~Exports() {
  for (auto &[token, e] : exports_) end(e);
}

void Exports::end(const Export &e) noexcept {
  rig_buffer_unref(e.view);
  if (e.fd >= 0) close(e.fd);
}

uint64_t Exports::add(uint64_t owner, size_t device, rig_buffer_t *view, Shared shared) {
  std::lock_guard g(mu_);
  auto with_row = [&] { return random_token() << RIG_PROXY_TOKEN_ROW_BITS | shared.row->index(); };
  uint64_t token = with_row();
  while (token == 0 || exports_.count(token)) token = with_row();
  exports_.emplace(token, Export{owner, device, view, std::move(shared), -1, 0, 0, {}});
  return token;
}

void Exports::WrongTokens::refill(std::chrono::steady_clock::time_point now, double most,
                                  double per_second) noexcept {
  std::chrono::duration<double> since = now - at;
  left = std::min(most, left + since.count() * per_second);
  at = now;
}

template <class Key>
Exports::WrongTokens &Exports::tries_of(std::unordered_map<Key, WrongTokens> &map, Key key,
                                        std::chrono::steady_clock::time_point now, double most,
                                        double per_second) {
  WrongTokens &w = map.try_emplace(key, WrongTokens{most, now}).first->second;
  w.refill(now, most, per_second);
  return w;
}

rig_buffer_t *Exports::get(uint64_t token, size_t device, Shared *shared, uid_t importer, uint64_t client) {
  std::lock_guard g(mu_);
  auto now = std::chrono::steady_clock::now();
  WrongTokens &mine = tries_of(client_wrong_tokens_, client, now, most_wrong_tokens_per_client,
                               wrong_tokens_per_client_second);
  WrongTokens &users = tries_of(wrong_tokens_, importer, now, most_wrong_tokens, wrong_tokens_per_second);
  if (mine.left < 1 || users.left < 1) return nullptr;
  auto it = exports_.find(token);
  if (it == exports_.end()) {
    mine.left -= 1;
    users.left -= 1;
    return nullptr;
  }
  if (it->second.device != device) return nullptr;
  std::vector<uint64_t> &importers = it->second.importers;
  if (importers.size() < most_importers_shown &&
      std::find(importers.begin(), importers.end(), client) == importers.end())
    importers.push_back(client);
  *shared = it->second.shared;
  return rig_buffer_ref(it->second.view);
}

int Exports::fd_of(uint64_t token, uint64_t owner, Account &account, std::string *refused) {
  std::lock_guard g(mu_);
  auto it = exports_.find(token);
  if (it == exports_.end() || it->second.owner != owner) return -1;
  Export &e = it->second;
  if (e.fd < 0) {
    *refused = account.take(Held::export_fds, 1);
    if (!refused->empty()) return -1;
    // Empty and sealed: it carries nothing but its identity.
    e.fd = memfd_create("rigd-export", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    struct stat made;
    if (e.fd >= 0 && (fcntl(e.fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_WRITE | F_SEAL_SEAL) != 0 ||
                      fstat(e.fd, &made) != 0)) {
      close(e.fd);
      e.fd = -1;
    }
    if (e.fd >= 0) {
      e.fd_device = made.st_dev;
      e.fd_inode = made.st_ino;
    } else {
      account.give(Held::export_fds, 1);
    }
  }
  return e.fd;
}

uint64_t Exports::token_of(int fd) const {
  struct stat given;
  if (fstat(fd, &given) != 0) return 0;
  std::lock_guard g(mu_);
  // rigd holds each descriptor it made open, so no other file has its inode.
  for (const auto &[token, e] : exports_)
    if (e.fd >= 0 && e.fd_device == given.st_dev && e.fd_inode == given.st_ino) return token;
  return 0;
}

std::vector<Exports::Row> Exports::rows() const {
  std::vector<Row> rows;
  std::lock_guard g(mu_);
  for (const auto &[token, e] : exports_) {
    auto bytes = static_cast<uint64_t>(rig_buffer_bytes(e.view));
    if (e.importers.empty()) rows.push_back({e.owner, e.device, bytes, 0});
    for (uint64_t importer : e.importers) rows.push_back({e.owner, e.device, bytes, importer});
  }
  return rows;
}

void Exports::remove_owner(uint64_t owner) {
  // Released outside the lock: the last hold of an instance closes it.
  std::vector<Export> ended;
  {
    std::lock_guard g(mu_);
    client_wrong_tokens_.erase(owner);
    std::erase_if(exports_, [&](auto &entry) {
      if (entry.second.owner != owner) return false;
      ended.push_back(std::move(entry.second));
      return true;
    });
    // The tables' buckets shrink to what is left: many exports, gone,
    // leave no memory behind.
    exports_.rehash(0);
    client_wrong_tokens_.rehash(0);
  }
  for (const Export &e : ended) end(e);
}

}  // namespace rigd
