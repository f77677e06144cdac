// What rigd does for each entry of a client's submission ring.
#pragma once

#include "client_objects.hpp"
#include "completions.hpp"
#include "exports.hpp"
#include "protocol.h"
#include "ring.hpp"
#include "served.hpp"

#include <rig/rig.h>

#include <vector>

namespace rigd {

class Requests {
 public:
  // proxy_limit: the words of the client's completion segment; client:
  // the client's number, which owns its exports.
  Requests(const ServedDevices &served, Exports &exports, uint64_t client, ClientObjects &objects,
           Completions &completions, rig::proxy::PayloadArena payload, uint32_t proxy_limit) noexcept
      : served_(served), exports_(exports), client_(client), objects_(objects), completions_(completions),
        payload_(payload), proxy_limit_(proxy_limit) {}

  // Runs the request entry, rigd's own copy of a ring entry, and returns its
  // completion: RIG_EINVAL with nothing done for an entry that breaks
  // protocol.h's format or names what the client does not hold.
  rig_proxy_completion handle(const rig_proxy_entry &entry);

 private:
  struct Proxy {
    size_t device;        // the served device's index
    uint64_t handed = 0;  // the last value handed over
  };

  rig_status_t open(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  rig_status_t alloc(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  rig_status_t map_peer(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  rig_status_t hand_over(const rig_proxy_entry &entry);
  rig_status_t export_bytes(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  rig_status_t import_bytes(const rig_proxy_entry &entry, rig_proxy_completion &answer);

  const ServedDevices &served_;
  Exports &exports_;
  uint64_t client_;
  ClientObjects &objects_;
  Completions &completions_;
  rig::proxy::PayloadArena payload_;
  uint32_t proxy_limit_;
  std::vector<Proxy> proxies_;
};

}  // namespace rigd
