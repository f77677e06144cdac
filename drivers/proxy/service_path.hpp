// Where rigd listens, for rigd and its clients alike.
#pragma once

#include <string>
#include <vector>

namespace rig::proxy {

// Where rigd listens by default: $RIG_SERVICE if set and not empty, else
// $XDG_RUNTIME_DIR/rig/rigd.sock where XDG_RUNTIME_DIR is set, else
// /run/rig/rigd.sock (the system service's).
std::string service_socket_path();

// Where a client looks for rigd, in order: $RIG_SERVICE alone if set and
// not empty; else $XDG_RUNTIME_DIR/rig/rigd.sock where XDG_RUNTIME_DIR is
// set (a user's own rigd), then /run/rig/rigd.sock (the packaged rigd's).
std::vector<std::string> service_socket_candidates();

// The reason of a connect that found no rigd: every path tried with why
// it failed (tried: "PATH: why" each), then what to do.
std::string no_rigd_reason(const std::vector<std::string> &tried);

}  // namespace rig::proxy
