#include "notify.hpp"

#include "log.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <cstring>

namespace rigd {

void notify_systemd(const char *state) {
  const char *where = std::getenv("NOTIFY_SOCKET");
  if (!where || !*where) return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  size_t length = std::strlen(where);
  if ((where[0] != '/' && where[0] != '@') || length >= sizeof address.sun_path) {
    log_line(LogLevel::warning,
             "NOTIFY_SOCKET (" + std::to_string(length) + " bytes) names no socket rigd can reach");
    return;
  }
  std::memcpy(address.sun_path, where, length);
  if (where[0] == '@') address.sun_path[0] = '\0';  // an abstract name
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    log_line(LogLevel::warning, std::string("no socket for systemd's notification: ") + std::strerror(errno));
    return;
  }
  auto bytes = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  if (sendto(fd, state, std::strlen(state), MSG_NOSIGNAL, reinterpret_cast<sockaddr *>(&address), bytes) < 0)
    log_line(LogLevel::warning,
             std::string("systemd's notification ") + state + " not sent: " + std::strerror(errno));
  close(fd);
}

}  // namespace rigd
