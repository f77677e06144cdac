// rigd's limits on what a client holds (limits.hpp).
#include "limits.hpp"

namespace rigd {

namespace {

constexpr int64_t gib = int64_t{1} << 30;

struct Kind {
  const char *key;   // the client's bound's key; the user's adds _per_user
  const char *unit;  // " bytes" or ""
};

constexpr std::array<Kind, held_kinds> kinds{{
    {"quota_bytes", " bytes"},
    {"arena_bytes", " bytes"},
    {"exports", ""},
    {"export_fds", ""},
    {"proxies", ""},
    {"image_bytes", " bytes"},
    {"handles", ""},
}};

const Kind &kind_of(Held kind) { return kinds[static_cast<size_t>(kind)]; }

}  // namespace

Limits default_limits() noexcept {
  Limits l;
  // Device memory is the device's to bound (its budget) unless configured.
  l[Held::arena_bytes] = {16 * gib, 64 * gib};
  l[Held::exports] = {4096, 16384};
  // Each is a descriptor of rigd's: far below its limit at any client count.
  l[Held::export_fds] = {256, 1024};
  // A client's completion segment has a word for 1024 proxies.
  l[Held::proxies] = {1024, 8192};
  // rigd's own heap: the copy of an image it loads, an entry of some 200
  // bytes for each handle (a mapping or an import costs no device memory).
  l[Held::image_bytes] = {gib, 4 * gib};
  l[Held::handles] = {65536, 262144};
  return l;
}

std::string client_key(Held kind) { return kind_of(kind).key; }

std::string user_key(Held kind) { return client_key(kind) + "_per_user"; }

std::string refusal(Held kind, bool for_user, int64_t held, int64_t asked, int64_t limit) {
  const char *unit = kind_of(kind).unit;
  return "rigd's limit " + (for_user ? user_key(kind) : client_key(kind)) + " is " + std::to_string(limit) + unit +
         (for_user ? ": the user's clients hold " : ": the client holds ") + std::to_string(held) + unit +
         (for_user ? " and the client asks " : " and asks ") + std::to_string(asked) + " more";
}

}  // namespace rigd
