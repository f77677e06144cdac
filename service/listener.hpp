// The socket rigd accepts its clients on.
#pragma once

#include <string>

namespace rigd {

// The listening socket: the one systemd passed (socket activation:
// LISTEN_PID names this process and LISTEN_FDS is 1, the socket at fd 3),
// else a new Unix stream socket bound at path, mode 0660, its directory
// made (mode 0755) where missing, a stale socket file replaced (anything
// else at path is refused: std::invalid_argument).  The
// socket rigd bound is unlinked when the listener ends; one systemd passed
// is systemd's.
class Listener {
 public:
  // Throws std::system_error, or std::invalid_argument for a path too long.
  explicit Listener(const std::string &path);
  ~Listener();
  Listener(const Listener &) = delete;
  Listener &operator=(const Listener &) = delete;

  int fd() const noexcept { return fd_; }
  bool activated() const noexcept { return !bound_; }
  // The socket's path: the one rigd bound, or the one systemd's socket
  // is bound at (getsockname); "" where it has none.
  std::string address() const;
  // Unlinks the socket rigd bound (not one systemd passed), as the
  // listener's end does: for an exit that ends nothing else.
  void remove_socket() const noexcept;

 private:
  int fd_ = -1;
  bool bound_ = false;
  std::string path_;
};

// The socket fd systemd passed this process, or -1 if none: LISTEN_PID
// must be this process's pid and LISTEN_FDS 1 (more is refused, with
// std::invalid_argument).  Unsets the variables so children do not see them.
int activation_socket();

}  // namespace rigd
