// Where rigd listens (service_path.hpp).
#include "service_path.hpp"

#include <cstdlib>

namespace rig::proxy {

namespace {

constexpr const char *system_socket = "/run/rig/rigd.sock";

const char *variable(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

}  // namespace

std::string service_socket_path() { return service_socket_candidates().front(); }

std::vector<std::string> service_socket_candidates() {
  if (const char *service = variable("RIG_SERVICE")) return {service};
  if (const char *runtime = variable("XDG_RUNTIME_DIR")) return {std::string(runtime) + "/rig/rigd.sock", system_socket};
  return {system_socket};
}

std::string no_rigd_reason(const std::vector<std::string> &tried) {
  std::string reason = "no rigd answered; tried";
  for (size_t i = 0; i < tried.size(); ++i) reason += (i ? "; " : " ") + tried[i];
  return reason +
         ". To use the system's rigd, start it (systemctl start rigd.socket) and join the group rig "
         "(usermod -aG rig USER, then log in again); to use another, set RIG_SERVICE to its socket";
}

}  // namespace rig::proxy
