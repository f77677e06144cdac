// A client's hello (protocol.h), read as it comes on a non-blocking socket:
// a client's, or an admin request, which starts as a hello does.
#pragma once

#include "protocol.h"

#include <array>
#include <cstddef>
#include <string>

namespace rigd {

class Hello {
 public:
  enum class Read { partial, complete, closed };

  // Reads what has come of the hello on socket, never past it: partial
  // until it is whole (an admin request's 24 bytes where its first 8 say
  // so); closed where the client closed the connection (or it failed)
  // first.
  Read read(int socket) noexcept;
  // Once complete: "" where the hello speaks rigd's protocol, else why not.
  std::string refusal() const;
  // Once complete: whether it is an admin request, and that request.
  bool admin() const noexcept;
  rig_proxy_admin_request admin_request() const noexcept;

 private:
  std::array<std::byte, sizeof(rig_proxy_admin_request)> bytes_{};
  size_t wanted_ = sizeof(rig_proxy_hello);
  size_t received_ = 0;
};

}  // namespace rigd
