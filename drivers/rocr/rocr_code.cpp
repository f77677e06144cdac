// Code on an AMD GPU: an image is an HSA executable loaded from an amdgcn
// code object (an ELF shared object, as clang --offload-arch or
// -target amdgcn-amd-amdhsa makes it) through a code object reader; an
// entry is a kernel's descriptor (symbol "name.kd") and segment sizes.
#include "rocr_device.hpp"

#include <map>
#include <stdexcept>

namespace rig::rocr {
namespace {

struct LoadedImage {
  std::vector<char> bytes;  // the reader reads them until it is destroyed
  hsa_code_object_reader_t reader{};
  hsa_executable_t executable{};
  std::mutex mu;
  std::map<std::string, Kernel> kernels;  // entries made; nodes never move
};

void destroy(const HsaApi &api, LoadedImage *image) {
  if (image->executable.handle) api.hsa_executable_destroy(image->executable);
  if (image->reader.handle) api.hsa_code_object_reader_destroy(image->reader);
  delete image;
}

template <class T>
T symbol_info(const HsaApi &api, hsa_executable_symbol_t symbol, hsa_executable_symbol_info_t attribute) {
  T value{};
  api.hsa_executable_symbol_get_info(symbol, attribute, &value);
  return value;
}

}  // namespace

std::variant<DriverDevice::Image, std::string> RocrDevice::image(const void *bytes, size_t n) {
  const HsaApi &api = rt_.api;
  hsa_agent_t agent{agent_};
  if (n == 0) return std::string("an empty code object");
  auto *image = new LoadedImage();
  image->bytes.assign(static_cast<const char *>(bytes), static_cast<const char *>(bytes) + n);
  auto refuse = [&](const char *what, hsa_status_t s) -> std::variant<Image, std::string> {
    destroy(api, image);
    return facts_.arch + " refuses the code object: " + what + ": " + status_text(s);
  };
  hsa_status_t s = api.hsa_code_object_reader_create_from_memory(image->bytes.data(), n, &image->reader);
  if (s != HSA_STATUS_SUCCESS) return refuse("hsa_code_object_reader_create_from_memory", s);
  hsa_profile_t profile = HSA_PROFILE_BASE;
  api.hsa_agent_get_info(agent, HSA_AGENT_INFO_PROFILE, &profile);
  s = api.hsa_executable_create_alt(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr, &image->executable);
  if (s != HSA_STATUS_SUCCESS) return refuse("hsa_executable_create_alt", s);
  s = api.hsa_executable_load_agent_code_object(image->executable, agent, image->reader, nullptr, nullptr);
  if (s != HSA_STATUS_SUCCESS) return refuse("hsa_executable_load_agent_code_object", s);
  s = api.hsa_executable_freeze(image->executable, nullptr);
  if (s != HSA_STATUS_SUCCESS) return refuse("hsa_executable_freeze", s);
  return Image{image};
}

DriverDevice::EntryAnswer RocrDevice::entry(Image i, const std::string &name) {
  const HsaApi &api = rt_.api;
  auto &image = *static_cast<LoadedImage *>(i);
  hsa_agent_t agent{agent_};
  std::lock_guard<std::mutex> g(image.mu);
  if (auto it = image.kernels.find(name); it != image.kernels.end()) return Entry{&it->second, 0, max_threads_};
  // Code objects of version 3 on name a kernel by its descriptor, name.kd;
  // earlier ones by the name itself.
  hsa_executable_symbol_t symbol{};
  if (api.hsa_executable_get_symbol_by_name(image.executable, (name + ".kd").c_str(), &agent, &symbol) !=
          HSA_STATUS_SUCCESS &&
      api.hsa_executable_get_symbol_by_name(image.executable, name.c_str(), &agent, &symbol) != HSA_STATUS_SUCCESS)
    return Absent{};
  if (symbol_info<hsa_symbol_kind_t>(api, symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE) != HSA_SYMBOL_KIND_KERNEL)
    return Absent{};
  Kernel k;
  k.object = symbol_info<uint64_t>(api, symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT);
  k.kernarg_bytes = symbol_info<uint32_t>(api, symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE);
  k.kernarg_align = symbol_info<uint32_t>(api, symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT);
  k.group_bytes = symbol_info<uint32_t>(api, symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE);
  k.private_bytes = symbol_info<uint32_t>(api, symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE);
  uint32_t group_limit = engine_->gpu.group_bytes;
  if (group_limit > 0 && k.group_bytes > group_limit)
    throw std::invalid_argument(name + " needs " + std::to_string(k.group_bytes) + " bytes of group memory; " +
                                facts_.arch + " has " + std::to_string(group_limit));
  Kernel &made = image.kernels.emplace(name, k).first->second;
  return Entry{&made, 0, max_threads_};
}

void RocrDevice::unload(Image i) { destroy(rt_.api, static_cast<LoadedImage *>(i)); }

}  // namespace rig::rocr
