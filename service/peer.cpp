// A connection's peer (peer.hpp).
#include "peer.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace rigd {

namespace {

std::string user_name(uid_t uid) {
  passwd entry{}, *found = nullptr;
  char buffer[1024];
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) != 0 || !found) return {};
  return found->pw_name;
}

// The process's name, as the kernel keeps it (at most 15 bytes); "" where
// it cannot be read, rigd out of descriptors included.
std::string command_of(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/comm";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char name[64];
  ssize_t n = read(fd, name, sizeof name);
  close(fd);
  if (n <= 0) return "";
  std::string command(name, static_cast<size_t>(n));
  if (command.back() == '\n') command.pop_back();
  return command;
}

}  // namespace

std::optional<Peer> peer_of(int socket) {
  ucred credentials{};
  socklen_t length = sizeof credentials;
  if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return std::nullopt;
  Peer peer;
  peer.pid = credentials.pid;
  peer.uid = credentials.uid;
  peer.gid = credentials.gid;
  // SO_PEERGROUPS answers ERANGE with the size it needs.
  socklen_t bytes = 0;
  getsockopt(socket, SOL_SOCKET, SO_PEERGROUPS, nullptr, &bytes);
  peer.groups.resize(bytes / sizeof(gid_t));
  if (!peer.groups.empty() && getsockopt(socket, SOL_SOCKET, SO_PEERGROUPS, peer.groups.data(), &bytes) != 0)
    peer.groups.clear();
  peer.user = user_name(peer.uid);
  peer.command = command_of(peer.pid);
  return peer;
}

std::string describe(const Peer &peer) {
  return "pid " + std::to_string(peer.pid) + ", uid " + std::to_string(peer.uid) + " (" +
         (peer.user.empty() ? "no name" : peer.user) + "), command " +
         (peer.command.empty() ? "unknown" : peer.command);
}

}  // namespace rigd
