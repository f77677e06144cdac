// What the rigd fuzz targets that write a client's ring share: a client's
// objects as a session makes them, a model of the client's state, kept
// from the completions alone, that checks each answer against protocol.h,
// and the steps that build entries from the input with what earlier
// answers gave (fuzz_rigd_requests.cpp says how).
#pragma once

#include "account.hpp"
#include "client_counters.hpp"
#include "client_objects.hpp"
#include "completions.hpp"
#include "config.hpp"
#include "exports.hpp"
#include "protocol.h"
#include "requests.hpp"
#include "ring.hpp"
#include "user_clients.hpp"

#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace rigd_fuzz {

constexpr int64_t quota_bytes = 1 << 16;  // small: allocs stay cheap, and the quota is reached
constexpr uint32_t proxy_limit = 8;       // the completion words the client has
constexpr size_t arena_bytes = 4096;

// A client of rigd's, its objects made as a session makes them
// (service/session.cpp) over the served device, in this process: cheap
// enough to make for each input, the completion thread included, so that
// no input sees another's.  Its quota is quota_bytes, and the test knobs
// are refused, as by default.
class Client {
 public:
  // number: the client's, which owns its exports in exports.
  Client(rigd::Exports &exports, uint64_t number);
  // Ends the client's exports, as its session's end does.
  ~Client();
  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;

  uint64_t number() const noexcept { return number_; }
  rig::proxy::PayloadArena &arena() noexcept { return arena_; }
  rigd::ClientObjects &objects() noexcept { return objects_; }
  // Runs e, its tag numbered where it has none, and answers whether it
  // has a completion, which it writes to answer (Requests::handle).
  bool handle(rig_proxy_entry &e, rig_proxy_completion &answer);
  // Ends the client's requests and its completions, which wait for every
  // value handed over, and answers its proxies' words.  Its objects stay.
  const std::byte *end();

 private:
  // rigd's policy with the client's device memory bounded by quota_bytes;
  // test knobs refused, as by default.
  static rigd::Policy fuzz_policy() {
    rigd::Policy p;
    p.limits[rigd::Held::device_bytes].client = quota_bytes;
    return p;
  }

  rigd::Exports &exports_;
  uint64_t number_;
  alignas(RIG_PROXY_CACHE_LINE) std::byte words_[proxy_limit * RIG_PROXY_WORD_BYTES] = {};
  alignas(RIG_PROXY_CACHE_LINE) std::byte arena_memory_[arena_bytes] = {};
  rig::proxy::PayloadArena arena_{arena_memory_, arena_bytes};
  rigd::Policy policy_ = fuzz_policy();
  uint32_t sleepers_ = 0;  // no thread sleeps on the words here
  uint64_t tag_ = 0;
  rigd::UserClients users_{0, policy_.limits};
  rigd::Account account_{users_, getuid()};
  rigd::ClientObjects objects_{account_};
  std::optional<rigd::ClientCounters> counters_;  // made with the served devices
  std::optional<rigd::Completions> completions_;
  std::optional<rigd::Requests> requests_;
};

// What the client holds, as the completions told it.
struct Model {
  struct Proxy {
    uint64_t handed;      // the last value handed over
    uint64_t failed = 0;  // the first value the proxy's word never shows, once it failed; or 0
  };
  std::vector<Proxy> proxies;
  std::map<uint64_t, int64_t> held;     // handle -> bytes counted against the quota
  std::map<uint64_t, uint64_t> tokens;  // export token -> its length
  std::set<uint32_t> configured;        // served devices opened with a configuration
  std::set<uint64_t> images;            // the ids of images rigd loaded
  int64_t counted = 0;

  // Checks how rigd handled entry against protocol.h and the model (its
  // answer c, if answered), then takes in what it changed.
  void observe(const rig_proxy_entry &e, bool answered, const rig_proxy_completion &c);
  // Checks the proxies' words once every value is done (PROXY-80): each
  // holds the last value handed over, or is lost, showing no value from
  // the first whose work failed on.
  void check_words(const std::byte *words) const;
};

// Builds the steps' entries from the input.
class Steps {
 public:
  Steps(FuzzedDataProvider &input, const Model &model, rig::proxy::PayloadArena &arena)
      : in_(input), model_(model), arena_(arena) {}

  // The next step's entry, or false for a step that wrote the arena only.
  bool next(rig_proxy_entry &e);

 private:
  // An element of known, or now and then a value of the input's.
  template <class Known>
  uint64_t pick(const Known &known) {
    size_t i = in_.ConsumeIntegralInRange<size_t>(0, known.size());
    if (i == known.size()) return in_.ConsumeIntegral<uint8_t>();
    auto it = known.begin();
    std::advance(it, i);
    return key(*it);
  }
  static uint64_t key(uint64_t v) { return v; }
  template <class Pair>
  static uint64_t key(const Pair &p) {
    return p.first;
  }

  uint32_t proxy() { return in_.ConsumeIntegralInRange<uint32_t>(0, static_cast<uint32_t>(model_.proxies.size())); }
  uint64_t small() { return in_.ConsumeIntegralInRange<uint64_t>(0, 1024); }
  void hand_over(rig_proxy_entry &e);
  void image_request(rig_proxy_entry &e);
  // A launch part at parts[i], its refs and its parameters' slots after it
  // where they fit; answers the slots it took.
  size_t launch(std::vector<rig_proxy_part> &parts, size_t i);

  FuzzedDataProvider &in_;
  const Model &model_;
  rig::proxy::PayloadArena &arena_;
};

}  // namespace rigd_fuzz
