// Registered memory and RMA over a link (ucx_link.hpp): a process maps a
// range of its memory (UcxLink::map) and sends its key to the peer, which
// opens it on its endpoint (UcxEndpoint::open_region) and puts or gets
// byte ranges.  Each range is checked against the region before anything
// is sent: a range outside it fails with its numbers and moves no byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <ucp/api/ucp.h>

#include "ucx_result.hpp"

namespace rig::net {

class UcxEndpoint;
namespace detail {
class UcxCore;
}

// What the peer needs to reach a registered region: its address in the
// owner's process, its length and UCX's packed remote key.
struct UcxRegionKey {
  uint64_t address = 0;
  uint64_t length = 0;
  std::vector<std::byte> rkey;
};

// A registered range of this process's memory (ucp_mem_map); unregistered
// when destroyed, which must not happen while a peer still uses it.
class UcxMemory {
 public:
  ~UcxMemory();
  UcxMemory(const UcxMemory &) = delete;
  UcxMemory &operator=(const UcxMemory &) = delete;
  const UcxRegionKey &key() const { return key_; }

  static UcxResult<std::unique_ptr<UcxMemory>> create(std::shared_ptr<detail::UcxCore> core, void *base, size_t length);

 private:
  UcxMemory(std::shared_ptr<detail::UcxCore> core, ucp_mem_h memory, UcxRegionKey key)
      : core_(std::move(core)), memory_(memory), key_(std::move(key)) {}
  std::shared_ptr<detail::UcxCore> core_;
  ucp_mem_h memory_;
  UcxRegionKey key_;
};

// A peer's registered region, reached through one endpoint.
class UcxRemoteRegion {
 public:
  ~UcxRemoteRegion();
  UcxRemoteRegion(const UcxRemoteRegion &) = delete;
  UcxRemoteRegion &operator=(const UcxRemoteRegion &) = delete;
  uint64_t length() const { return length_; }

  // Writes bytes at offset of the region and waits until they are in the
  // peer's memory (the put, then a flush of the endpoint).
  UcxStatus put(uint64_t offset, std::span<const std::byte> bytes);
  // Reads bytes.size() bytes at offset of the region into bytes.
  UcxStatus get(uint64_t offset, std::span<std::byte> bytes);

 private:
  friend class UcxEndpoint;
  UcxRemoteRegion(std::shared_ptr<UcxEndpoint> endpoint, ucp_rkey_h rkey, uint64_t address, uint64_t length)
      : endpoint_(std::move(endpoint)), rkey_(rkey), address_(address), length_(length) {}
  UcxStatus check(const char *what, uint64_t offset, size_t size) const;
  std::shared_ptr<UcxEndpoint> endpoint_;
  ucp_rkey_h rkey_;
  uint64_t address_;
  uint64_t length_;
};

}  // namespace rig::net
