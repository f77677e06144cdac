// Where rigd listens, for rigd and its clients alike.
#pragma once

#include <string>

namespace rig::proxy {

// $RIG_SERVICE if set and not empty, else $XDG_RUNTIME_DIR/rig/rigd.sock
// where XDG_RUNTIME_DIR is set, else /run/rig/rigd.sock (the system
// service's).
std::string service_socket_path();

}  // namespace rig::proxy
