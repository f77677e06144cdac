// Images: code loaded on a device, and the functions resolved in it
// (rig.txt, Running work: Images; rig-edge-driver.txt, Code).
#pragma once

#include "device.hpp"
#include "rig_internal/handles.hpp"

#include <map>
#include <memory>
#include <string>

struct rig_function : rig::HandleRecord<rig::HandleType::Function> {
  rig_image *image;
  std::string name;
  rig::DriverDevice::Entry entry;
};

struct rig_image : rig::HandleRecord<rig::HandleType::Image> {
  std::atomic<int64_t> refs{1};
  rig_device_t *device = nullptr;
  rig::DriverDevice::Image code = nullptr;  // the driver's
  int64_t charged = 0;                      // its code's bytes in the device's budget
  rig::Mutex mu;                            // functions
  std::map<std::string, std::unique_ptr<rig_function>, std::less<>> functions;
};

namespace rig {

// True iff i is a handle not NULL and not released: some reference holds
// it (a program's or a submission's), though its record lasts until its
// unload.  A function lives as long as its image.
inline bool live_handle(const rig_image_t *i) {
  return handle_live(i, HandleType::Image) && i->refs.load(std::memory_order_acquire) > 0;
}
inline bool live_handle(const rig_function_t *f) {
  return handle_live(f, HandleType::Function) && live_handle(f->image);
}

// True iff i can be launched on d: loaded on d, which has not been closed.
bool image_live(const rig_image_t *i, const rig_device_t *d);

}  // namespace rig
