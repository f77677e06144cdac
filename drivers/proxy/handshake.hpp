// The client's side of rigd's handshake (protocol.h).
#pragma once

#include "protocol.h"

#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

namespace rig::proxy {

// A file descriptor, closed with its owner.
class OwnedFd {
 public:
  explicit OwnedFd(int fd = -1) noexcept : fd_(fd) {}
  OwnedFd(OwnedFd &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  OwnedFd &operator=(OwnedFd &&other) noexcept;
  ~OwnedFd();
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

// A connection rigd admitted: its socket, the devices it serves (in the
// order of the device segment's words) and the segments it passed.
struct ServiceConnection {
  OwnedFd socket;
  std::vector<rig_proxy_device_record> devices;
  OwnedFd device_segment;
  OwnedFd completion_segment;
  OwnedFd ring_segment;
};

// Why a connection failed: rigd's refusal, or what went wrong on the way.
struct HandshakeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A stream socket connected to rigd's socket at path (close-on-exec);
// throws HandshakeError saying why not.
OwnedFd connect_socket(const std::string &path);

// Connects to the rigd listening at path and shakes hands, speaking
// protocol version (this library's, but for tests of a refusal).
ServiceConnection connect_to_rigd(const std::string &path, uint32_t version = RIG_PROXY_VERSION);

// Shakes hands with rigd on socket, a stream socket connected to it: sends
// the hello and reads the welcome, the device records and the segments.
ServiceConnection shake_hands(OwnedFd socket, uint32_t version = RIG_PROXY_VERSION);

}  // namespace rig::proxy
