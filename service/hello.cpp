// A client's hello (hello.hpp).
#include "hello.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace rigd {

static_assert(offsetof(rig_proxy_admin_request, version) == offsetof(rig_proxy_hello, version),
              "an admin request starts as a hello");

Hello::Read Hello::read(int socket) noexcept {
  while (received_ < wanted_) {
    // recv, which takes no descriptors: the kernel drops any the client
    // attached, with no close of rigd's to wait in (passed_descriptors.hpp).
    ssize_t n = recv(socket, bytes_.data() + received_, wanted_ - received_, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return Read::partial;
    if (n <= 0) return Read::closed;
    received_ += static_cast<size_t>(n);
    if (received_ == sizeof(rig_proxy_hello) && admin()) wanted_ = sizeof(rig_proxy_admin_request);
  }
  return Read::complete;
}

bool Hello::admin() const noexcept {
  uint32_t magic;
  std::memcpy(&magic, bytes_.data(), sizeof magic);
  return magic == RIG_PROXY_MAGIC_ADMIN;
}

rig_proxy_admin_request Hello::admin_request() const noexcept {
  rig_proxy_admin_request request;
  std::memcpy(&request, bytes_.data(), sizeof request);
  return request;
}

std::string Hello::refusal() const {
  rig_proxy_hello hello;
  std::memcpy(&hello, bytes_.data(), sizeof hello);
  bool known = hello.magic == RIG_PROXY_MAGIC_HELLO || admin();
  if (known && hello.version == RIG_PROXY_VERSION)
    return admin() && admin_request().reserved != 0 ? "the admin request's reserved field is not zero" : "";
  return "the client speaks protocol version " + std::to_string(hello.version) + ", rigd speaks " +
         std::to_string(RIG_PROXY_VERSION);
}

}  // namespace rigd
