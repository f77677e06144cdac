// rigd's configuration: its command line, its config file and the policy
// that decides which peers it admits.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <istream>
#include <span>
#include <string>
#include <vector>

namespace rigd {

// Who may connect, and what each client may hold.
struct Policy {
  std::vector<uid_t> users;  // allow_users: admitted uids
  std::vector<gid_t> groups; // allow_groups: admitted gids
  int64_t quota_bytes = 0;   // quota_bytes: device memory per client; 0 for none
  // max_clients_per_user: the clients one user may have connected at once;
  // 0 for no bound.
  int64_t max_clients_per_user = 256;
  // test_knobs = allow: clients' opens may set the device knobs that exist
  // for tests (test_knobs.hpp); refuse, the default, answers them RIG_EOPEN.
  bool test_knobs = false;
};

struct Options {
  std::string socket;               // --socket, else service_socket_path()
  std::vector<std::string> devices; // --devices, empty for the default
  std::string config_file;          // --config, empty for none
  bool foreground = false;          // --foreground (rigd never daemonizes itself)
  Policy policy;                    // read from config_file
};

// The command line, without its config file read.  Throws
// std::invalid_argument saying what is wrong.
Options parse_arguments(std::span<char *const> args);

// Reads a config file: lines `key = value`, blank lines and `#` comments;
// keys allow_users and allow_groups (comma-separated names or numbers),
// quota_bytes, max_clients_per_user and test_knobs (allow or refuse).  Throws std::invalid_argument
// naming the line.
Policy parse_config(std::istream &in);

// Whether policy admits a peer of uid, primary gid and supplementary groups.
// With neither list set it admits every peer (the socket's mode and group
// then decide who connects); otherwise a peer whose uid is listed, or one
// of whose groups is.
bool admits(const Policy &policy, uid_t uid, gid_t gid, std::span<const gid_t> groups);

}  // namespace rigd
