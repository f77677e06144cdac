// Where rigd listens (service_path.hpp).
#include "service_path.hpp"

#include <cstdlib>

namespace rig::proxy {

std::string service_socket_path() {
  const char *service = std::getenv("RIG_SERVICE");
  if (service && *service) return service;
  const char *runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime && *runtime) return std::string(runtime) + "/rig/rigd.sock";
  return "/run/rig/rigd.sock";
}

}  // namespace rig::proxy
