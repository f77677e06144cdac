// The client's side of rigd's admin channel (protocol.h's admin request).
#pragma once

#include "handshake.hpp"
#include "protocol.h"

#include <string>

namespace rig::proxy {

// rigd's answer to an admin request: its status and why, and the snapshot
// it attached (STATS), if any.
struct AdminAnswer {
  int32_t status = 0;
  std::string why;
  OwnedFd snapshot;
};

// Sends request to the rigd at socket_path, or where that is empty at the
// first of service_socket_candidates() that accepts a connection, and
// reads its answer, waiting at most answer_ms; a refusal at connect (a
// welcome of RIG_EOPEN) answers as one of the admin request.  Throws
// HandshakeError where no rigd answers, or it answers no admin reply: one
// cut short, of another magic, a welcome of another status, a status
// protocol.h's admin reply does not name, or RIG_OK of another version.
AdminAnswer ask_rigd(const std::string &socket_path, const rig_proxy_admin_request &request);

// How long ask_rigd waits for rigd's answer.
inline constexpr int admin_answer_ms = 10000;

}  // namespace rig::proxy
