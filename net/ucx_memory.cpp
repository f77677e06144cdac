#include "ucx_memory.hpp"

#include <cstring>
#include <string>

#include "ucx_core.hpp"
#include "ucx_endpoint.hpp"

namespace rig::net {

UcxResult<std::unique_ptr<UcxMemory>> UcxMemory::create(std::shared_ptr<detail::UcxCore> core, void *base,
                                                        size_t length) {
  const std::string what = "registering " + std::to_string(length) + " bytes at " +
                           std::to_string(reinterpret_cast<uintptr_t>(base));
  if (!base || length == 0) return UcxStatus::failure(what + " failed: no memory");
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = base;
  params.length = length;
  ucp_mem_h memory = nullptr;
  ucs_status_t status = ucp_mem_map(core->context(), &params, &memory);
  if (status != UCS_OK) return UcxStatus::failure(what + " failed: " + ucs_status_string(status));
  void *packed = nullptr;
  size_t packed_size = 0;
  status = ucp_rkey_pack(core->context(), memory, &packed, &packed_size);
  if (status != UCS_OK) {
    ucp_mem_unmap(core->context(), memory);
    return UcxStatus::failure(what + " failed, packing its key: " + ucs_status_string(status));
  }
  UcxRegionKey key;
  key.address = reinterpret_cast<uintptr_t>(base);
  key.length = length;
  key.rkey.resize(packed_size);
  std::memcpy(key.rkey.data(), packed, packed_size);
  ucp_rkey_buffer_release(packed);
  return std::unique_ptr<UcxMemory>(new UcxMemory(std::move(core), memory, std::move(key)));
}

UcxMemory::~UcxMemory() { ucp_mem_unmap(core_->context(), memory_); }

UcxRemoteRegion::~UcxRemoteRegion() { ucp_rkey_destroy(rkey_); }

UcxStatus UcxRemoteRegion::check(const char *what, uint64_t offset, size_t size) const {
  if (offset <= length_ && size <= length_ - offset) return UcxStatus::success();
  return UcxStatus::failure(std::string(what) + " of " + std::to_string(size) + " bytes at offset " +
                            std::to_string(offset) + " is outside the region of " + std::to_string(length_) +
                            " bytes of " + endpoint_->peer());
}

UcxStatus UcxRemoteRegion::put(uint64_t offset, std::span<const std::byte> bytes) {
  UcxStatus in_bounds = check("a put", offset, bytes.size());
  if (!in_bounds.ok() || bytes.empty()) return in_bounds;
  const std::string what = "a put of " + std::to_string(bytes.size()) + " bytes at offset " + std::to_string(offset);
  UcxStatus put = endpoint_->run_blocking(what, [&](ucp_ep_h ep, ucp_request_param_t param) {
    return ucp_put_nbx(ep, bytes.data(), bytes.size(), address_ + offset, rkey_, &param);
  });
  if (!put.ok()) return put;
  return endpoint_->run_blocking(what + "'s flush", [](ucp_ep_h ep, ucp_request_param_t param) {
    return ucp_ep_flush_nbx(ep, &param);
  });
}

UcxStatus UcxRemoteRegion::get(uint64_t offset, std::span<std::byte> bytes) {
  UcxStatus in_bounds = check("a get", offset, bytes.size());
  if (!in_bounds.ok() || bytes.empty()) return in_bounds;
  return endpoint_->run_blocking(
      "a get of " + std::to_string(bytes.size()) + " bytes at offset " + std::to_string(offset),
      [&](ucp_ep_h ep, ucp_request_param_t param) {
        return ucp_get_nbx(ep, bytes.data(), bytes.size(), address_ + offset, rkey_, &param);
      });
}

}  // namespace rig::net
