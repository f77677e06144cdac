// rigd's welcome and refusal (refusal.hpp).
#include "refusal.hpp"

#include "refusal_log.hpp"

#include <rig/rig.h>

#include <sys/socket.h>

#include <cstdio>
#include <span>

namespace rigd {

rig_proxy_welcome welcome_of(int32_t status, uint32_t device_count, const std::string &why) {
  rig_proxy_welcome w{};
  w.magic = RIG_PROXY_MAGIC_WELCOME;
  w.version = RIG_PROXY_VERSION;
  w.status = status;
  w.device_count = device_count;
  std::snprintf(w.why, sizeof w.why, "%s", why.c_str());
  return w;
}

void refuse(int socket, const std::string &why, const std::string &who) {
  rig_proxy_welcome w = welcome_of(RIG_EOPEN, 0, why);
  // MSG_DONTWAIT: a refusal never waits on a client that does not read.
  send(socket, &w, sizeof w, MSG_DONTWAIT | MSG_NOSIGNAL);
  log_refusal(who.empty() ? "refused a client: " + why : "refused a client (" + who + "): " + why);
}

}  // namespace rigd
