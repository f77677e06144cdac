// A connection's peer: its credentials (SO_PEERCRED, SO_PEERGROUPS) as
// rigd accepts it, and the names its log lines give it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace rigd {

struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary
  std::string user;           // uid's name, or "" where it has none
  std::string command;        // /proc/PID/comm as rigd accepted the peer
};

// The peer of a connected Unix socket; nullopt where its credentials
// cannot be read.
std::optional<Peer> peer_of(int socket);

// "pid P, uid U (USER), command C", for log lines.
std::string describe(const Peer &peer);

}  // namespace rigd
