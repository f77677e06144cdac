// A CUDA device's primary context, and the scope that makes it current on
// the calling thread for the driver's CUDA calls.
#pragma once

#include "cuda_api.h"

#include <atomic>
#include <stdexcept>

namespace rig::cu {

// Retains the primary context of device for as long as it lives.
class PrimaryContext {
 public:
  // Throws std::runtime_error with CUDA's reason.
  PrimaryContext(const Api &api, Device device) : api_(api), device_(device) {
    if (Result r = api.cuDevicePrimaryCtxRetain(&handle_, device); r != kSuccess)
      throw std::runtime_error("cuDevicePrimaryCtxRetain: " + api.describe(r));
  }
  PrimaryContext(const PrimaryContext &) = delete;
  PrimaryContext &operator=(const PrimaryContext &) = delete;
  ~PrimaryContext() { abandon(); }

  Context handle() const { return handle_; }
  // Releases the context now, as for a context a sticky error broke: once
  // no other retain holds it, CUDA destroys it with its memory.  The
  // driver's calls then skip it (abandoned).
  void abandon() {
    if (!abandoned_.exchange(true)) api_.cuDevicePrimaryCtxRelease(device_);
  }
  bool abandoned() const { return abandoned_.load(std::memory_order_acquire); }

 private:
  const Api &api_;
  Device device_;
  Context handle_ = nullptr;
  std::atomic<bool> abandoned_{false};
};

// Makes context current on the calling thread for the scope, and gives the
// thread back the context it had: rig calls the driver on any thread, and
// the program may use CUDA itself on it.
class CurrentContext {
 public:
  CurrentContext(const Api &api, Context context) : api_(api) {
    if (api.cuCtxGetCurrent(&previous_) != kSuccess) previous_ = nullptr;
    if (previous_ != context) {
      api.cuCtxSetCurrent(context);
      switched_ = true;
    }
  }
  CurrentContext(const CurrentContext &) = delete;
  CurrentContext &operator=(const CurrentContext &) = delete;
  ~CurrentContext() {
    if (switched_) api_.cuCtxSetCurrent(previous_);
  }

 private:
  const Api &api_;
  Context previous_ = nullptr;
  bool switched_ = false;
};

}  // namespace rig::cu
