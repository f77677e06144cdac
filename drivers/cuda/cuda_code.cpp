// A CUDA device's code: modules from cubins, fatbins or PTX, and the
// entries of their functions.
#include "cuda_device.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace rig::cuda {
namespace {

// A cubin is an ELF file, a fatbin starts with its magic number; anything
// else is taken for PTX, text that CUDA reads up to a NUL.
bool is_binary(const void *bytes, size_t n) {
  static constexpr unsigned char kElf[4] = {0x7f, 'E', 'L', 'F'};
  static constexpr unsigned char kFatbin[4] = {0x50, 0xed, 0x55, 0xba};  // 0xba55ed50
  return n >= 4 && (std::memcmp(bytes, kElf, 4) == 0 || std::memcmp(bytes, kFatbin, 4) == 0);
}

// The bytes of a function's parameters, from their layout (CUDA 12.4), or
// -1 where the driver does not say.
int64_t parameter_bytes(const cu::Api &api, cu::Function f) {
  if (!api.cuFuncGetParamInfo) return -1;
  size_t end = 0;
  for (size_t i = 0;; i++) {
    size_t offset = 0, bytes = 0;
    cu::Result r = api.cuFuncGetParamInfo(f, i, &offset, &bytes);
    if (r == cu::kErrorInvalidValue) return static_cast<int64_t>(end);  // past the last
    if (r != cu::kSuccess) return -1;
    end = std::max(end, offset + bytes);
  }
}

}  // namespace

std::variant<DriverDevice::Image, std::string> CudaDevice::image(const void *bytes, size_t n) {
  if (n == 0) return std::string("the image is empty: CUDA loads a cubin, a fatbin or PTX");
  std::string text;
  const void *data = bytes;
  if (!is_binary(bytes, n)) {
    text.assign(static_cast<const char *>(bytes), n);  // terminated by its NUL
    data = text.c_str();
  }
  char log[8192] = "";
  cu::JitOption options[] = {cu::kJitErrorLogBuffer, cu::kJitErrorLogBufferSizeBytes};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t{sizeof log})};
  cu::Module module = nullptr;
  auto scope = current();
  cu::Result r = api_.cuModuleLoadDataEx(&module, data, 2, options, values);
  if (r != cu::kSuccess) {
    if (cu::breaks_context(r)) fail("cuModuleLoadDataEx", r);
    log[sizeof log - 1] = '\0';
    std::string why = "CUDA refuses the image: " + api_.describe(r);
    std::string detail(log);
    while (!detail.empty() && std::isspace(static_cast<unsigned char>(detail.back()))) detail.pop_back();
    if (!detail.empty()) why += ": " + detail;
    return why;
  }
  return static_cast<Image>(new CudaImage{module, {}, {}});
}

DriverDevice::EntryAnswer CudaDevice::entry(Image image, const std::string &name) {
  auto *img = static_cast<CudaImage *>(image);
  std::lock_guard<std::mutex> g(img->mu);
  auto made = [](const CudaEntry &e) { return Entry{&e, 0, e.max_threads}; };
  if (auto it = img->entries.find(name); it != img->entries.end()) return made(*it->second);
  auto scope = current();
  // A failure: no memory makes nothing, a broken context faults, anything
  // else says the device cannot run the function.
  auto refused = [&](cu::Result r, const char *what) -> EntryAnswer {
    if (r == cu::kErrorOutOfMemory) return NoMemory{0};  // CUDA does not say how many bytes
    if (cu::breaks_context(r)) fail(what, r);
    throw std::invalid_argument(name + ": " + what + ": " + api_.describe(r));
  };
  cu::Function f = nullptr;
  cu::Result r = api_.cuModuleGetFunction(&f, img->module, name.c_str());
  if (r == cu::kErrorNotFound) return Absent{};
  if (r != cu::kSuccess) return refused(r, "cuModuleGetFunction");
  // Lazy loading would load the function at its first launch: load it now.
  if (api_.cuFuncLoad && (r = api_.cuFuncLoad(f)) != cu::kSuccess) return refused(r, "cuFuncLoad");
  int threads = 0, static_shared = 0, dynamic_shared = 0;
  if ((r = api_.cuFuncGetAttribute(&threads, cu::kFuncAttrMaxThreadsPerBlock, f)) != cu::kSuccess ||
      (r = api_.cuFuncGetAttribute(&static_shared, cu::kFuncAttrSharedSizeBytes, f)) != cu::kSuccess)
    return refused(r, "cuFuncGetAttribute");
  // Launches may ask all the shared memory a block may opt in to, beside
  // the function's own; where CUDA refuses, the default bound stays.
  if (int64_t room = static_cast<int64_t>(limits_.shared_optin) - static_shared; room > 0)
    api_.cuFuncSetAttribute(f, cu::kFuncAttrMaxDynamicSharedSizeBytes, static_cast<int>(room));
  if ((r = api_.cuFuncGetAttribute(&dynamic_shared, cu::kFuncAttrMaxDynamicSharedSizeBytes, f)) != cu::kSuccess)
    return refused(r, "cuFuncGetAttribute");
  auto e = std::make_unique<CudaEntry>(CudaEntry{f, threads, dynamic_shared, parameter_bytes(api_, f)});
  const CudaEntry &kept = *e;
  img->entries.emplace(name, std::move(e));
  return made(kept);
}

void CudaDevice::unload(Image image) {
  std::unique_ptr<CudaImage> img(static_cast<CudaImage *>(image));
  if (context_->abandoned()) return;  // the module went with its context
  auto scope = current();
  cu::Result r = api_.cuModuleUnload(img->module);
  if (r != cu::kSuccess && !stopped_.load()) fail("cuModuleUnload", r);
}

}  // namespace rig::cuda
