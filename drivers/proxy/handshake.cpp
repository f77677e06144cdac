// The client's side of rigd's handshake (handshake.hpp).
#include "handshake.hpp"

#include "socket_messages.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rig::proxy {

namespace {

// More devices than a host has: a welcome that claims more is corrupt.
constexpr uint32_t most_devices = 4096;

[[noreturn]] void fail(const std::string &what) {
  throw HandshakeError(what + (errno ? std::string(": ") + std::strerror(errno) : std::string()));
}

}  // namespace

OwnedFd &OwnedFd::operator=(OwnedFd &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

OwnedFd::~OwnedFd() {
  if (fd_ >= 0) close(fd_);
}

OwnedFd connect_socket(const std::string &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path)
    throw HandshakeError("the service path is empty or too long: " + path);
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  OwnedFd connected(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (connected.get() < 0) fail("socket");
  if (connect(connected.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0)
    fail("cannot connect to rigd at " + path);
  return connected;
}

ServiceConnection connect_to_rigd(const std::string &path, uint32_t version) {
  return shake_hands(connect_socket(path), version);
}

ServiceConnection shake_hands(OwnedFd socket, uint32_t version) {
  ServiceConnection c;
  c.socket = std::move(socket);
  rig_proxy_hello hello{RIG_PROXY_MAGIC_HELLO, version};
  // rigd refuses a peer its policy does not admit as it accepts it, and
  // may close the connection before the hello arrives: the send then
  // fails, but the refusal is there to read.
  send_message(c.socket.get(), std::as_bytes(std::span(&hello, 1)));
  rig_proxy_welcome welcome{};
  int fds[RIG_PROXY_SEGMENT_FDS];
  size_t received = 0;
  if (!receive_message(c.socket.get(), std::as_writable_bytes(std::span(&welcome, 1)), fds, &received))
    fail("rigd closed the connection");
  OwnedFd owned[RIG_PROXY_SEGMENT_FDS];
  for (size_t i = 0; i < received; ++i) owned[i] = OwnedFd(fds[i]);
  errno = 0;
  if (welcome.magic != RIG_PROXY_MAGIC_WELCOME) fail("rigd answered no welcome");
  welcome.why[sizeof welcome.why - 1] = '\0';
  if (welcome.status != 0) fail(std::string("rigd refused the connection: ") + welcome.why);
  if (welcome.version != version) fail("rigd speaks protocol version " + std::to_string(welcome.version));
  if (received != RIG_PROXY_SEGMENT_FDS) fail("rigd passed " + std::to_string(received) + " segments");
  if (welcome.device_count > most_devices) fail("rigd's welcome is corrupt");
  c.devices.resize(welcome.device_count);
  if (!receive_message(c.socket.get(), std::as_writable_bytes(std::span(c.devices))))
    fail("rigd closed the connection");
  for (auto &d : c.devices) {
    d.name[sizeof d.name - 1] = '\0';
    d.arch[sizeof d.arch - 1] = '\0';
  }
  c.device_segment = std::move(owned[0]);
  c.completion_segment = std::move(owned[1]);
  c.ring_segment = std::move(owned[2]);
  return c;
}

}  // namespace rig::proxy
