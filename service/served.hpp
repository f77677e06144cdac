// The devices rigd serves, and the device segment that shows their
// timeline words to every client.
#pragma once

#include "protocol.h"
#include "segments.hpp"

#include <rig/rig.h>

#include <memory>
#include <string>
#include <vector>

namespace rigd {

class ServedDevices {
 public:
  // Opens the devices named, or by default every device of the host's
  // drivers that opens but the host, memory and sim devices, and MEM:0 and
  // MEM:1 where none does.  Throws std::runtime_error with rig's reason if
  // a named device does not open.
  explicit ServedDevices(const std::vector<std::string> &names);
  ServedDevices(const ServedDevices &) = delete;
  ServedDevices &operator=(const ServedDevices &) = delete;

  size_t size() const noexcept { return devices_.size(); }
  rig_device_t *device(size_t i) const noexcept { return devices_[i].get(); }
  const std::vector<rig_proxy_device_record> &records() const noexcept { return records_; }
  const Segment &segment() const noexcept { return *segment_; }

  // Returns every served device's cached memory to its driver (rig_free_cache).
  void free_caches() const noexcept;

  // Copies device i's timeline value (rig_signaled) into its word of the
  // device segment, release order.  Any thread may call it.
  void publish_progress(size_t i) const noexcept;

 private:
  // Closed as rigd ends (rig_close waits for their work).
  struct Close {
    void operator()(rig_device_t *d) const noexcept { rig_close(d); }
  };
  std::vector<std::unique_ptr<rig_device_t, Close>> devices_;
  std::vector<rig_proxy_device_record> records_;
  std::unique_ptr<Segment> segment_;
};

}  // namespace rigd
