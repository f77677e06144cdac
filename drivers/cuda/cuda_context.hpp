// The context a CUDA device's work runs in, and the scope that makes it
// current on the calling thread for the driver's CUDA calls.
//
// A device runs in its GPU's primary context, or, opened with
// "context=NAME", in a context of rig's own that every device of that GPU
// opened under NAME shares: its own GPU address space, apart from the
// primary context's and every other name's.  rigd opens its clients'
// instances so (cuda_contexts), so that clients of different trust domains
// never share an address space, and a fault that breaks one context
// reaches the devices of that context alone.
#pragma once

#include "cuda_api.h"

#include <atomic>
#include <memory>
#include <string>

namespace rig::cu {

// A context of rig's own, made by cuCtxCreate and destroyed, with its
// memory, when the last device holding it lets go.
class OwnContext;

// A device's hold on its context.
class ContextHold {
 public:
  // Holds the primary context of device.  Throws std::runtime_error with
  // CUDA's reason.
  static std::unique_ptr<ContextHold> primary(const Api &api, Device device);
  // Holds the context named name of device ordinal, made on its first
  // hold and after the last one broke.  Throws std::runtime_error with
  // CUDA's reason, or where the driver makes no contexts (before CUDA 12.5).
  static std::unique_ptr<ContextHold> named(const Api &api, Device device, int ordinal, const std::string &name);
  ~ContextHold() { abandon(); }
  ContextHold(const ContextHold &) = delete;
  ContextHold &operator=(const ContextHold &) = delete;

  Context handle() const { return handle_; }
  // Whether the device's context is one of rig's own, which a stopped
  // device lets go of at once (a primary context is kept for the process).
  bool own() const { return own_; }
  // A sticky error broke the context: later holds of its name get a new
  // one.  Call before abandon().
  void broke();
  // Lets go of the context now: once no other device holds it, CUDA
  // destroys it with its memory.  The driver's calls then skip it
  // (abandoned).
  void abandon();
  bool abandoned() const { return abandoned_.load(std::memory_order_acquire); }

 private:
  ContextHold(const Api &api, Device device, Context handle, std::shared_ptr<OwnContext> own);

  const Api &api_;
  Device device_;
  Context handle_;
  bool own_;
  std::shared_ptr<OwnContext> context_;  // own contexts; let go by abandon()
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
