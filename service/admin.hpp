// rigd's admin channel (protocol.h's admin request): who may use it, the
// snapshot of rigd's counters it answers, and the drop of a client.
#pragma once

#include "config.hpp"
#include "exports.hpp"
#include "machine_agent.hpp"
#include "protocol.h"
#include "served.hpp"
#include "session.hpp"

#include <sys/types.h>

#include <list>
#include <memory>
#include <span>
#include <string>

namespace rigd {

// "" where a peer of uid, primary gid and supplementary groups may use the
// admin channel (root, rigd's own user, or a member of policy's
// admin_group), else why not, naming who may.
std::string admin_refusal(const Policy &policy, uid_t uid, gid_t gid, std::span<const gid_t> groups);

// What the admin channel reads and acts on: the admission loop's, which
// alone touches the sessions' list.
struct AdminView {
  std::list<std::unique_ptr<Session>> &sessions;
  const ServedDevices &served;
  const Exports &exports;
  const Policy &policy;
  // The remote clients' (rigd --listen), or NULL where rigd serves no
  // other machine: they show, and drop, as local clients do.
  MachineAgent *machines = nullptr;
};

// A sealed memfd of the snapshot of view (protocol.h's
// rig_proxy_stats_header and its records), the caller's to close; -1
// where it cannot be made.
int snapshot_of(const AdminView &view);

// Answers request, a complete admin request of a peer allowed the channel,
// on socket (non-blocking: the reply never waits on a peer that does not
// read) and logs a drop.
void answer_admin(int socket, const rig_proxy_admin_request &request, const AdminView &view);

// Answers the admin request on socket RIG_EOPEN with why.
void refuse_admin(int socket, const std::string &why);

}  // namespace rigd
