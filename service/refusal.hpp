// rigd's answer to a hello (protocol.h's welcome), and a refusal of it.
#pragma once

#include "protocol.h"

#include <cstdint>
#include <string>

namespace rigd {

// A welcome of status, device_count devices and why (cut to fit).
rig_proxy_welcome welcome_of(int32_t status, uint32_t device_count, const std::string &why);

// Answers the client on socket RIG_EOPEN with why, and logs it
// (log_refusal) with who the client is (describe(), peer.hpp; "" where
// rigd does not know).  Never blocks where the socket's buffer has room
// for a welcome (a new connection's has).
void refuse(int socket, const std::string &why, const std::string &who);

}  // namespace rigd
