// A link's listener (ucx_link.hpp, UcxLink::listen): accepts connections
// on "HOST:PORT" until it is destroyed.  Each accepted endpoint handles
// errors as the connecting side does (UCP_ERR_HANDLING_MODE_PEER).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <ucp/api/ucp.h>

#include "ucx_link.hpp"

namespace rig::net {

class UcxListener {
 public:
  ~UcxListener();
  UcxListener(const UcxListener &) = delete;
  UcxListener &operator=(const UcxListener &) = delete;

  // The port it listens on (the one the system picked for port 0).
  uint16_t port() const { return port_; }
  // "HOST:PORT" with that port.
  const std::string &address() const { return address_; }

  // What UCX's connection callback and the link's core share.
  struct State {
    std::weak_ptr<detail::UcxCore> core;
    UcxAcceptHandler accept;
    std::mutex mutex;
    ucp_listener_h listener = nullptr;  // null once destroyed
  };

  static UcxResult<std::unique_ptr<UcxListener>> create(const std::shared_ptr<detail::UcxCore> &core,
                                                         const std::string &address, UcxAcceptHandler accept);
  // Destroys the UCX listener (the core's shutdown too).
  static void stop(State &state);

 private:
  UcxListener(std::shared_ptr<State> state, uint16_t port, std::string address)
      : state_(std::move(state)), port_(port), address_(std::move(address)) {}
  std::shared_ptr<State> state_;
  uint16_t port_;
  std::string address_;
};

}  // namespace rig::net
