// A message as it came off the wire, before the reorder point of its
// endpoint (ucx_endpoint.hpp) hands it to its handler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rig::net::detail {

// The link's frame before the owner's header: the sequence number and the
// owner's id, in host order.
inline constexpr size_t kUcxFrameBytes = sizeof(uint64_t) + sizeof(uint16_t);

struct UcxArrival {
  uint64_t seq = 0;
  uint16_t id = 0;
  std::vector<std::byte> header;  // the owner's header, copied
  // UCX's descriptor of the data: a rendezvous to receive, or eager data
  // it keeps for us (UCP_AM_RECV_ATTR_FLAG_DATA) until ucp_am_data_release.
  void *desc = nullptr;
  bool rendezvous = false;
  const std::byte *data = nullptr;  // eager data, in desc or in copy
  size_t length = 0;
  std::vector<std::byte> copy;  // eager data UCX does not keep
};

}  // namespace rig::net::detail
