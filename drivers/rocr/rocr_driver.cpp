// The ROCr driver: opens AMD:n, the nth GPU agent of ROCr.  Where ROCr
// serves no GPU (no libhsa-runtime64.so.1, no amdgpu kernel driver, no
// GPU), an open answers RIG_EOPEN and the probe lists AMD:0 with the
// reason; nothing else of rig changes.  rig_open's config may hold
// hang_ms=N, a hang bound for the device (none by default).
#include "rocr_device.hpp"

#include <unistd.h>

namespace rig::rocr {
namespace {

// n of "AMD:n", or nullopt where name is not of that form.
std::optional<size_t> index_of(const std::string &name) {
  const std::string prefix = "AMD:";
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size() || name.size() > prefix.size() + 6)
    return std::nullopt;
  size_t n = 0;
  for (size_t i = prefix.size(); i < name.size(); i++) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    n = n * 10 + static_cast<size_t>(name[i] - '0');
  }
  return n;
}

// Why ROCr serves no device of this process, or "".
std::string unavailable(const HsaRuntime &rt) {
  if (!rt.failure.empty()) return rt.failure;
  if (rt.pid != getpid())
    return "ROCr was initialised by the parent of this forked process and serves only that process";
  return "";
}

class RocrDriver final : public Driver {
 public:
  const char *prefix() const override { return "AMD"; }

  std::unique_ptr<DriverDevice> open(const std::string &name, const std::string &config, uint64_t start) override {
    std::optional<size_t> index = index_of(name);
    if (!index) throw std::runtime_error("not a name of the form AMD:n");
    const HsaRuntime &rt = hsa_runtime();
    if (std::string why = unavailable(rt); !why.empty()) throw std::runtime_error(why);
    if (*index >= rt.gpus.size())
      throw std::runtime_error("ROCr has " + std::to_string(rt.gpus.size()) + " GPU agent" +
                               (rt.gpus.size() == 1 ? "" : "s"));
    return std::make_unique<RocrDevice>(rt, *index, config, start);
  }

  void probe(const std::function<void(const std::string &, const std::string &)> &f) override {
    const HsaRuntime &rt = hsa_runtime();
    if (std::string why = unavailable(rt); !why.empty()) return f("AMD:0", why);
    for (size_t i = 0; i < rt.gpus.size(); i++) f("AMD:" + std::to_string(i), "");
  }
};

}  // namespace

RIG_REGISTER_DRIVER(RocrDriver)

}  // namespace rig::rocr
