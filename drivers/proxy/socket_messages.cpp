// Whole messages on a Unix stream socket (socket_messages.hpp).
#include "socket_messages.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rig::proxy {

namespace {

// Room for the control message of up to this many fds.
constexpr size_t max_fds = 8;

}  // namespace

bool send_message(int fd, std::span<const std::byte> message, std::span<const int> fds) {
  if (fds.size() > max_fds) {
    errno = EINVAL;
    return false;
  }
  alignas(cmsghdr) char control[CMSG_SPACE(max_fds * sizeof(int))] = {};
  size_t sent = 0;
  while (sent < message.size()) {
    iovec io{const_cast<std::byte *>(message.data() + sent), message.size() - sent};
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    if (sent == 0 && !fds.empty()) {
      m.msg_control = control;
      m.msg_controllen = CMSG_SPACE(fds.size_bytes());
      cmsghdr *c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(fds.size_bytes());
      std::memcpy(CMSG_DATA(c), fds.data(), fds.size_bytes());
    }
    ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void close_received(int fd) { close(fd); }

bool receive_message(int fd, std::span<std::byte> message, std::span<int> fds, size_t *received,
                     void (*discard)(int fd)) {
  size_t got = 0, taken = 0;
  auto close_taken = [&] {
    for (size_t i = 0; i < taken; ++i) discard(fds[i]);
    taken = 0;
  };
  while (got < message.size()) {
    alignas(cmsghdr) char control[CMSG_SPACE(max_fds * sizeof(int))];
    iovec io{message.data() + got, message.size() - got};
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    ssize_t n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    for (cmsghdr *c = CMSG_FIRSTHDR(&m); n >= 0 && c; c = CMSG_NXTHDR(&m, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int passed;
        std::memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
        if (taken < fds.size())
          fds[taken++] = passed;
        else
          discard(passed);
      }
    }
    if (n <= 0) {
      int error = n == 0 ? 0 : errno;
      close_taken();
      errno = error;
      return false;
    }
    got += static_cast<size_t>(n);
  }
  if (received) *received = taken;
  return true;
}

}  // namespace rig::proxy
