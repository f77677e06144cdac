// The client's side of rigd's admin channel (admin_client.hpp).
#include "admin_client.hpp"

#include "service_path.hpp"
#include "socket_messages.hpp"

#include <rig/rig.h>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace rig::proxy {

namespace {

static_assert(sizeof(rig_proxy_admin_reply) == sizeof(rig_proxy_welcome) &&
                  offsetof(rig_proxy_admin_reply, status) == offsetof(rig_proxy_welcome, status) &&
                  offsetof(rig_proxy_admin_reply, why) == offsetof(rig_proxy_welcome, why),
              "a refusal at connect reads as an admin reply");

OwnedFd connect_any(const std::string &socket_path) {
  if (!socket_path.empty()) return connect_socket(socket_path);
  std::vector<std::string> tried;
  for (const std::string &path : service_socket_candidates()) {
    try {
      return connect_socket(path);
    } catch (const HandshakeError &e) {
      tried.push_back(e.what());
    }
  }
  throw HandshakeError(no_rigd_reason(tried));
}

}  // namespace

AdminAnswer ask_rigd(const std::string &socket_path, const rig_proxy_admin_request &request) {
  OwnedFd socket = connect_any(socket_path);
  timeval timeout{admin_answer_ms / 1000, admin_answer_ms % 1000 * 1000};
  setsockopt(socket.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  // rigd refuses a peer it admits neither as a client nor as an admin as
  // it accepts it: the send may fail, but the refusal is there to read.
  send_message(socket.get(), std::as_bytes(std::span(&request, 1)));
  rig_proxy_admin_reply reply{};
  int fd = -1;
  size_t received = 0;
  if (!receive_message(socket.get(), std::as_writable_bytes(std::span(&reply, 1)), std::span(&fd, 1), &received))
    throw HandshakeError(std::string("rigd closed the admin connection") +
                         (errno ? std::string(": ") + std::strerror(errno) : std::string()));
  AdminAnswer answer;
  if (received) answer.snapshot = OwnedFd(fd);
  if (reply.magic != RIG_PROXY_MAGIC_ADMIN && reply.magic != RIG_PROXY_MAGIC_WELCOME)
    throw HandshakeError("rigd answered no admin reply");
  // A welcome answers an admin request only as a refusal at connect.
  if (reply.magic == RIG_PROXY_MAGIC_WELCOME && reply.status != RIG_EOPEN)
    throw HandshakeError("rigd answered the admin request with a welcome of status " + std::to_string(reply.status) +
                         ", which is no refusal");
  if (reply.status != RIG_OK && reply.status != RIG_EOPEN && reply.status != RIG_EINVAL)
    throw HandshakeError("rigd answered the admin request with status " + std::to_string(reply.status) +
                         ", which no admin reply has");
  reply.why[sizeof reply.why - 1] = '\0';
  if (reply.status == 0 && reply.version != RIG_PROXY_VERSION)
    throw HandshakeError("rigd speaks protocol version " + std::to_string(reply.version));
  answer.status = reply.status;
  answer.why = reply.why;
  return answer;
}

}  // namespace rig::proxy
