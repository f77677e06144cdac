// A client's hello (hello.hpp).
#include "hello.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace rigd {

Hello::Read Hello::read(int socket) noexcept {
  while (received_ < bytes_.size()) {
    ssize_t n = recv(socket, bytes_.data() + received_, bytes_.size() - received_, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return Read::partial;
    if (n <= 0) return Read::closed;
    received_ += static_cast<size_t>(n);
  }
  return Read::complete;
}

std::string Hello::refusal() const {
  rig_proxy_hello hello;
  std::memcpy(&hello, bytes_.data(), sizeof hello);
  if (hello.magic == RIG_PROXY_MAGIC_HELLO && hello.version == RIG_PROXY_VERSION) return "";
  return "the client speaks protocol version " + std::to_string(hello.version) + ", rigd speaks " +
         std::to_string(RIG_PROXY_VERSION);
}

}  // namespace rigd
