// A peer of the link for tests, on UCX itself rather than a UcxLink: it
// frames each message as the link does (ucx_arrival.hpp), with the
// sequence number the test gives, so that it sends what no UcxEndpoint
// would: numbers skipped, messages held back.  It answers no heartbeat.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <ucp/api/ucp.h>

namespace rig::net::test {

class RawUcpSender {
 public:
  // Connects to a listener at "HOST:PORT"; fails the test where UCX cannot.
  explicit RawUcpSender(const std::string &address);
  ~RawUcpSender();
  RawUcpSender(const RawUcpSender &) = delete;
  RawUcpSender &operator=(const RawUcpSender &) = delete;

  // A message of the link: its sequence number and data.
  struct Framed {
    uint64_t seq;
    std::span<const std::byte> data;
  };
  // Posts each message, of the link's id `id`, one after the other without
  // waiting (pausing `between` after each but the last, this end making no
  // progress meanwhile), then waits until UCX completed them all: false
  // where the connection failed.
  bool send_all(uint16_t id, std::span<const Framed> messages,
                std::chrono::milliseconds between = std::chrono::milliseconds(0));
  // send_all of one message.
  bool send(uint64_t seq, uint16_t id, std::span<const std::byte> data) {
    const Framed one{seq, data};
    return send_all(id, std::span(&one, 1));
  }
  // Whether the peer closed the connection within limit.
  bool closed(std::chrono::milliseconds limit);

 private:
  static void on_error(void *arg, ucp_ep_h ep, ucs_status_t status);

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_ep_h ep_ = nullptr;
  bool failed_ = false;
};

}  // namespace rig::net::test
