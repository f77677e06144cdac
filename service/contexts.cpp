// The context of each client's instance of a served GPU (contexts.hpp).
#include "contexts.hpp"

#include <stdexcept>
#include <string_view>

namespace rigd {

namespace {

// Whether a "key=value,key=value" configuration sets key.
bool sets(std::string_view config, std::string_view key) {
  while (!config.empty()) {
    std::string_view item = config.substr(0, config.find(','));
    if (item.substr(0, item.find('=')) == key) return true;
    if (item.size() == config.size()) break;
    config.remove_prefix(item.size() + 1);
  }
  return false;
}

}  // namespace

CudaContexts parse_cuda_contexts(const std::string &text) {
  if (text == "per_user") return CudaContexts::per_user;
  if (text == "per_client") return CudaContexts::per_client;
  if (text == "shared") return CudaContexts::shared;
  throw std::invalid_argument("cuda_contexts is per_user, per_client or shared, not " + text);
}

std::string user_domain(uid_t user) { return "user-" + std::to_string(user); }

std::string key_domain(const std::string &key_id) { return "key-" + key_id; }

std::optional<InstanceConfig> instance_config(const std::string &device, const std::string &client_config,
                                              CudaContexts policy, const std::string &domain, uint64_t client,
                                              std::string *why) {
  if (device.rfind("CUDA:", 0) != 0) return InstanceConfig{client_config, true};
  if (sets(client_config, "context")) {
    *why = "the CUDA context of a client's work is rigd's to choose (cuda_contexts), not the configuration's";
    return std::nullopt;
  }
  if (policy == CudaContexts::shared) return InstanceConfig{client_config, true};
  std::string config = client_config;
  if (!config.empty()) config += ',';
  if (policy == CudaContexts::per_user) return InstanceConfig{config + "context=" + domain, true};
  return InstanceConfig{config + "context=client-" + std::to_string(client), false};
}

}  // namespace rigd
