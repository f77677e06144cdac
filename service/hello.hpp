// A client's hello (protocol.h), read as it comes on a non-blocking socket.
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
  // until it is whole; closed where the client closed the connection (or
  // it failed) first.
  Read read(int socket) noexcept;
  // Once complete: "" where the hello speaks rigd's protocol, else why not.
  std::string refusal() const;

 private:
  std::array<std::byte, sizeof(rig_proxy_hello)> bytes_{};
  size_t received_ = 0;
};

}  // namespace rigd
