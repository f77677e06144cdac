// Devices' holds on their contexts (cuda_context.hpp).
#include "cuda_context.hpp"

#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace rig::cu {

class OwnContext {
 public:
  OwnContext(const Api &api, Context handle) : api_(api), handle_(handle) {}
  ~OwnContext() { api_.cuCtxDestroy(handle_); }
  OwnContext(const OwnContext &) = delete;
  OwnContext &operator=(const OwnContext &) = delete;

  Context handle() const { return handle_; }
  std::atomic<bool> broken{false};

 private:
  const Api &api_;
  Context handle_;
};

namespace {

// The own contexts that devices hold, by GPU ordinal and name.  A context
// stays here while a device holds it; a broken one is replaced by the next
// hold of its name, and goes once its last device lets go.
struct Named {
  std::mutex mu;
  std::map<std::pair<int, std::string>, std::weak_ptr<OwnContext>> contexts;
};

Named &named_contexts() {
  static Named *named = new Named();  // lives for the process, as the API does
  return *named;
}

std::shared_ptr<OwnContext> make_context(const Api &api, Device device) {
  if (!api.cuCtxCreate)
    throw std::runtime_error("the CUDA driver makes no contexts of rig's own (cuCtxCreate_v4 needs CUDA 12.5)");
  CtxCreateParams params{};
  Context handle = nullptr;
  if (Result r = api.cuCtxCreate(&handle, &params, 0, device); r != kSuccess)
    throw std::runtime_error("cuCtxCreate: " + api.describe(r));
  // cuCtxCreate made it current on this thread: give the thread back the
  // context it had.
  Context popped = nullptr;
  api.cuCtxPopCurrent(&popped);
  return std::make_shared<OwnContext>(api, handle);
}

}  // namespace

ContextHold::ContextHold(const Api &api, Device device, Context handle, std::shared_ptr<OwnContext> own)
    : api_(api), device_(device), handle_(handle), own_(own != nullptr), context_(std::move(own)) {}

std::unique_ptr<ContextHold> ContextHold::primary(const Api &api, Device device) {
  Context handle = nullptr;
  if (Result r = api.cuDevicePrimaryCtxRetain(&handle, device); r != kSuccess)
    throw std::runtime_error("cuDevicePrimaryCtxRetain: " + api.describe(r));
  return std::unique_ptr<ContextHold>(new ContextHold(api, device, handle, nullptr));
}

std::unique_ptr<ContextHold> ContextHold::named(const Api &api, Device device, int ordinal, const std::string &name) {
  Named &named = named_contexts();
  std::lock_guard g(named.mu);
  std::erase_if(named.contexts, [](const auto &entry) { return entry.second.expired(); });
  std::weak_ptr<OwnContext> &slot = named.contexts[{ordinal, name}];
  std::shared_ptr<OwnContext> context = slot.lock();
  if (!context || context->broken.load(std::memory_order_acquire)) {
    context = make_context(api, device);
    slot = context;
  }
  Context handle = context->handle();
  return std::unique_ptr<ContextHold>(new ContextHold(api, device, handle, std::move(context)));
}

void ContextHold::broke() {
  if (context_) context_->broken.store(true, std::memory_order_release);
}

void ContextHold::abandon() {
  if (abandoned_.exchange(true)) return;
  if (own_)
    context_.reset();
  else
    api_.cuDevicePrimaryCtxRelease(device_);
}

}  // namespace rig::cu
