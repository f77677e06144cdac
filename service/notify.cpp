#include "notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rigd {

void notify_systemd(const char *state) {
  const char *where = std::getenv("NOTIFY_SOCKET");
  if (!where || !*where) return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  size_t length = std::strlen(where);
  if ((where[0] != '/' && where[0] != '@') || length >= sizeof address.sun_path) {
    std::fprintf(stderr, "rigd: NOTIFY_SOCKET (%zu bytes) names no socket rigd can reach\n", length);
    return;
  }
  std::memcpy(address.sun_path, where, length);
  if (where[0] == '@') address.sun_path[0] = '\0';  // an abstract name
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    std::fprintf(stderr, "rigd: no socket for systemd's notification: %s\n", std::strerror(errno));
    return;
  }
  auto bytes = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  if (sendto(fd, state, std::strlen(state), MSG_NOSIGNAL, reinterpret_cast<sockaddr *>(&address), bytes) < 0)
    std::fprintf(stderr, "rigd: systemd's notification %s not sent: %s\n", state, std::strerror(errno));
  close(fd);
}

}  // namespace rigd
