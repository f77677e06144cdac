// Exported buffers (exports.hpp).
#include "exports.hpp"

#include <sys/random.h>

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
  for (auto &[token, e] : exports_) rig_buffer_unref(e.view);
}

uint64_t Exports::add(uint64_t owner, size_t device, rig_buffer_t *view, Shared shared) {
  std::lock_guard g(mu_);
  auto with_row = [&] { return random_token() << RIG_PROXY_TOKEN_ROW_BITS | shared.row->index(); };
  uint64_t token = with_row();
  while (token == 0 || exports_.count(token)) token = with_row();
  exports_.emplace(token, Export{owner, device, view, std::move(shared)});
  return token;
}

rig_buffer_t *Exports::get(uint64_t token, size_t device, Shared *shared) const {
  std::lock_guard g(mu_);
  auto it = exports_.find(token);
  if (it == exports_.end() || it->second.device != device) return nullptr;
  *shared = it->second.shared;
  return rig_buffer_ref(it->second.view);
}

void Exports::remove_owner(uint64_t owner) {
  // Released outside the lock: the last hold of an instance closes it.
  std::vector<Export> ended;
  {
    std::lock_guard g(mu_);
    std::erase_if(exports_, [&](auto &entry) {
      if (entry.second.owner != owner) return false;
      ended.push_back(std::move(entry.second));
      return true;
    });
  }
  for (const Export &e : ended) rig_buffer_unref(e.view);
}

}  // namespace rigd
