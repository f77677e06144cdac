// The memory rigd holds for one client, by handle, within its quota.
#pragma once

#include "served.hpp"

#include <rig/rig.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace rigd {

class ClientObjects {
 public:
  // quota_bytes: the device memory the client may hold; 0 for no bound.
  explicit ClientObjects(int64_t quota_bytes) noexcept : quota_(quota_bytes) {}
  // Releases every buffer: rig frees each once the work using it is done.
  ~ClientObjects();
  ClientObjects(const ClientObjects &) = delete;
  ClientObjects &operator=(const ClientObjects &) = delete;

  // Whether bytes more of counted memory stay within the quota.
  bool fits(int64_t bytes) const;

  // The instances a buffer needs open: the one whose memory it is, and the
  // one it is mapped on where that is another (a borrow).  Empty for host
  // memory.
  struct Instances {
    std::shared_ptr<Instance> memory, mapped_on;
  };

  // Takes the caller's reference to buffer and answers its new handle;
  // counted bytes count against the quota until the handle is removed, and
  // instances stay open until then.
  uint64_t add(rig_buffer_t *buffer, int64_t counted, Instances instances = {});

  // A new reference to the handle's buffer, or NULL for no such handle;
  // instances, if not NULL, gets its instances.
  rig_buffer_t *get(uint64_t handle, Instances *instances = nullptr) const;

  // Releases the handle's buffer; false for no such handle.
  bool remove(uint64_t handle);

 private:
  struct Held {
    rig_buffer_t *buffer;
    int64_t counted;
    Instances instances;
  };
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Held> held_;
  uint64_t next_ = 1;  // handle 0 names nothing
  int64_t quota_;
  int64_t counted_ = 0;
};

}  // namespace rigd
