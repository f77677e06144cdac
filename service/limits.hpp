// What a client can make rigd hold, and the bounds rigd's config sets on
// it for each client and for each user (all of a uid's clients together).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace rigd {

// The kinds of what a client holds that rigd counts.  Images count in
// device_bytes with the buffers; connections and their threads are
// UserClients' (max_clients, max_clients_per_user).
enum class Held : size_t {
  device_bytes,  // buffers allocated, imported and images loaded
  arena_bytes,   // host arenas, the bytes rigd maps of them
  exports,       // exports in rigd's table
  export_fds,    // descriptors rigd keeps open for exports
  proxies,       // proxies opened
  image_bytes,   // images loaded: the bytes rigd copies of each, counted before it copies them
  handles,       // entries of the client's table: buffers, mappings, imports, stagings
};
inline constexpr size_t held_kinds = 7;

// A bound on one kind: for each client, and for each user; 0 for none.
struct Limit {
  int64_t client = 0, user = 0;
};

struct Limits {
  std::array<Limit, held_kinds> of{};
  Limit &operator[](Held kind) noexcept { return of[static_cast<size_t>(kind)]; }
  const Limit &operator[](Held kind) const noexcept { return of[static_cast<size_t>(kind)]; }
};

// The defaults rigd(8) states.
Limits default_limits() noexcept;

// The config keys of kind's bounds: quota_bytes and quota_bytes_per_user,
// arena_bytes and arena_bytes_per_user, ...
std::string client_key(Held kind);
std::string user_key(Held kind);

// Why rigd refuses n more of kind: the limit's key and its numbers, what
// the client (or, for_user, the user's clients) holds, asks and may hold.
std::string refusal(Held kind, bool for_user, int64_t held, int64_t asked, int64_t limit);

}  // namespace rigd
