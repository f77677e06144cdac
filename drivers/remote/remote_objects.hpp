// What a proxy of another machine's device hands rig: its regions and
// images, each an object of the agent's named by an id of the job.
#pragma once

#include "rig_internal/driver.hpp"
#include "rig_internal/locks.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace rig::remote {

// Memory of the agent's (an alloc's or a peer mapping's), locate's
// handle its id; or Pinned memory, pages of this process's at host, which
// copies name by address (PROXY-35).
struct RemoteRegion {
  uint64_t id;
  void *host = nullptr;
  size_t host_bytes = 0;
};

// A function an ENTRY made: the object a launch names, in its image.
struct RemoteFunction {
  uint64_t image;
  uint64_t id;
  int64_t max_threads;
};

// An image the agent's host loaded, and the entries made of it.
struct RemoteImage {
  uint64_t id;
  Mutex mu;
  std::map<std::string, std::unique_ptr<RemoteFunction>, std::less<>> functions;  // under mu
};

inline RemoteRegion *region_of(Region r) { return static_cast<RemoteRegion *>(r); }
inline RemoteImage *image_of(DriverDevice::Image i) { return static_cast<RemoteImage *>(i); }

}  // namespace rig::remote
