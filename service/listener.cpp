// The listening socket (listener.hpp).
#include "listener.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>

namespace rigd {

namespace {

// sd_listen_fds(3): passed sockets start at fd 3.
constexpr int first_passed_fd = 3;

[[noreturn]] void fail(const std::string &what) {
  throw std::system_error(errno, std::generic_category(), what);
}

long environment_number(const char *name) {
  const char *text = std::getenv(name);
  if (!text) return -1;
  long value = -1;
  std::string_view s(text);
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  return error == std::errc() && end == s.data() + s.size() ? value : -1;
}

// Makes path's directory where it is missing (one level: $XDG_RUNTIME_DIR/rig).
void make_directory_of(const std::string &path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return;
  std::string directory = path.substr(0, slash);
  if (mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST) fail("mkdir " + directory);
}

}  // namespace

int activation_socket() {
  long pid = environment_number("LISTEN_PID");
  long count = environment_number("LISTEN_FDS");
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  if (pid != getpid() || count <= 0) return -1;
  if (count != 1) throw std::invalid_argument("socket activation passed " + std::to_string(count) + " sockets, want 1");
  fcntl(first_passed_fd, F_SETFD, FD_CLOEXEC);
  return first_passed_fd;
}

Listener::Listener(const std::string &path) : path_(path) {
  fd_ = activation_socket();
  if (fd_ >= 0) return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path)
    throw std::invalid_argument("the socket path is empty or longer than " +
                                std::to_string(sizeof address.sun_path - 1) + " bytes: " + path);
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  make_directory_of(path);
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail("socket");
  // A socket file left by a rigd that died is stale: no one accepts on it.
  if (connect(fd_, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0) {
    close(fd_);
    throw std::invalid_argument("a rigd already listens on " + path);
  }
  close(fd_);
  // Only a socket is removed: anything else at the path is not rigd's.
  struct stat found;
  if (lstat(path.c_str(), &found) == 0 && !S_ISSOCK(found.st_mode))
    throw std::invalid_argument(path + " exists and is not a socket: rigd replaces only a stale socket");
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail("socket");
  unlink(path.c_str());
  if (bind(fd_, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
    int error = errno;
    close(fd_);
    errno = error;
    fail("bind " + path);
  }
  bound_ = true;
  if (chmod(path.c_str(), 0660) != 0 || listen(fd_, SOMAXCONN) != 0) {
    int error = errno;
    unlink(path.c_str());
    close(fd_);
    errno = error;
    fail("listen on " + path);
  }
}

Listener::~Listener() {
  remove_socket();
  close(fd_);
}

std::string Listener::address() const {
  if (bound_) return path_;
  sockaddr_un address{};
  socklen_t length = sizeof address;
  if (getsockname(fd_, reinterpret_cast<sockaddr *>(&address), &length) != 0 || address.sun_family != AF_UNIX ||
      length <= offsetof(sockaddr_un, sun_path) || address.sun_path[0] == '\0')
    return "";
  return std::string(address.sun_path, strnlen(address.sun_path, length - offsetof(sockaddr_un, sun_path)));
}

void Listener::remove_socket() const noexcept {
  if (bound_) unlink(path_.c_str());
}

}  // namespace rigd
