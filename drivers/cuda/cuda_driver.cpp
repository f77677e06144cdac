// The CUDA driver: devices CUDA:n, the GPUs of the CUDA Driver API, which
// it loads from libcuda.so.1 at its first open or probe.  Where the library
// is missing, every open answers RIG_EOPEN with the reason and the probe
// lists CUDA:0 with it; nothing else changes.  Config: "hang_ms=N" sets
// the hang bound (0: none; default 10 s where no watchdog bounds kernels);
// "context=NAME" runs the device in a context of rig's own that the
// devices of its GPU opened under NAME share, instead of the GPU's primary
// context (cuda_context.hpp).
#include "cuda_device.hpp"
#include "rig_internal/options.hpp"

#include <algorithm>
#include <cctype>

namespace rig::cuda {
namespace {

// The ordinal of "CUDA:n".
int ordinal_of(const std::string &name) {
  std::string digits = name.substr(name.find(':') == std::string::npos ? name.size() : name.find(':') + 1);
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw std::runtime_error("a CUDA device's name is CUDA:n, n its ordinal");
  return std::stoi(digits);
}

// The API, or throws std::runtime_error with the reason it cannot be had.
const cu::Api &api() {
  std::string why;
  const cu::Api *api = cu::load_api(&why);
  if (!api) throw std::runtime_error(why);
  return *api;
}

int device_count(const cu::Api &api) {
  int count = 0;
  if (cu::Result r = api.cuDeviceGetCount(&count); r != cu::kSuccess)
    throw std::runtime_error("cuDeviceGetCount: " + api.describe(r));
  return count;
}

class CudaDriver final : public Driver {
 public:
  const char *prefix() const override { return "CUDA"; }

  std::unique_ptr<DriverDevice> open(const std::string &name, const std::string &config, uint64_t start) override {
    int ordinal = ordinal_of(name);
    Options options(config, {"hang_ms", "context"});
    std::optional<int64_t> hang_ms;
    if (options.has("hang_ms")) hang_ms = options.integer("hang_ms", 0);
    if (hang_ms && *hang_ms <= 0) options.refuse("hang_ms", "not positive");
    std::string context = options.text("context", "");
    if (options.has("context") && context.empty()) options.refuse("context", "empty: it names no context");
    const cu::Api &cuda = api();
    int count = device_count(cuda);
    if (ordinal >= count)
      throw std::runtime_error("no such device: the machine has " + std::to_string(count) + " CUDA device" +
                               (count == 1 ? "" : "s"));
    return std::make_unique<CudaDevice>(cuda, ordinal, count, start, hang_ms, context);
  }

  void probe(const std::function<void(const std::string &, const std::string &)> &f) override {
    int count = 0;
    try {
      count = device_count(api());
    } catch (const std::exception &e) {
      f("CUDA:0", e.what());
      return;
    }
    if (count == 0) f("CUDA:0", "the machine has no CUDA device");
    for (int i = 0; i < count; i++) f("CUDA:" + std::to_string(i), "");
  }
};

}  // namespace

RIG_REGISTER_DRIVER(CudaDriver)

}  // namespace rig::cuda
