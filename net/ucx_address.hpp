// "HOST:PORT" addresses of the link (ucx_link.hpp): HOST a name, an IPv4
// address or an IPv6 one in brackets, PORT a decimal number.
#pragma once

#include <string>
#include <sys/socket.h>

#include "ucx_result.hpp"

namespace rig::net::detail {

struct UcxSocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
};

// Resolves address (passive: for a listener, where an empty HOST is any).
UcxResult<UcxSocketAddress> ucx_resolve(const std::string &address, bool passive);
// "HOST:PORT" of a socket address, numeric.
std::string ucx_address_text(const sockaddr *address);

}  // namespace rig::net::detail
