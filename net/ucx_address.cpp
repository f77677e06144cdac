#include "ucx_address.hpp"

#include <arpa/inet.h>
#include <cstdio>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>

namespace rig::net::detail {

UcxResult<UcxSocketAddress> ucx_resolve(const std::string &address, bool passive) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    return UcxStatus::failure("the address '" + address + "' is not HOST:PORT");
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoul(port) > 65535)
    return UcxStatus::failure("the address '" + address + "' has no port from 0 to 65535");
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo *found = nullptr;
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) return UcxStatus::failure("the address '" + address + "' does not resolve: " + gai_strerror(rc));
  UcxSocketAddress resolved;
  std::memcpy(&resolved.storage, found->ai_addr, found->ai_addrlen);
  resolved.length = found->ai_addrlen;
  freeaddrinfo(found);
  return resolved;
}

std::string ucx_address_text(const sockaddr *address) {
  char host[INET6_ADDRSTRLEN] = "?";
  char text[INET6_ADDRSTRLEN + 16];
  if (address->sa_family == AF_INET6) {
    const auto *in6 = reinterpret_cast<const sockaddr_in6 *>(address);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    std::snprintf(text, sizeof text, "[%s]:%u", host, unsigned{ntohs(in6->sin6_port)});
  } else {
    const auto *in = reinterpret_cast<const sockaddr_in *>(address);
    if (address->sa_family == AF_INET) inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    std::snprintf(text, sizeof text, "%s:%u", host, unsigned{ntohs(in->sin_port)});
  }
  return text;
}

}  // namespace rig::net::detail
