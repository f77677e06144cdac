// What rigd does for each entry of a client's submission ring.
#pragma once

#include "client_objects.hpp"
#include "completions.hpp"
#include "protocol.h"
#include "ring.hpp"
#include "served.hpp"

#include <rig/rig.h>

#include <vector>

namespace rigd {

class Requests {
 public:
  // proxy_limit: the words of the client's completion segment.
  Requests(const ServedDevices &served, ClientObjects &objects, Completions &completions,
           rig::proxy::PayloadArena payload, uint32_t proxy_limit) noexcept
      : served_(served), objects_(objects), completions_(completions), payload_(payload), proxy_limit_(proxy_limit) {}

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

  const ServedDevices &served_;
  ClientObjects &objects_;
  Completions &completions_;
  rig::proxy::PayloadArena payload_;
  uint32_t proxy_limit_;
  std::vector<Proxy> proxies_;
};

}  // namespace rigd
