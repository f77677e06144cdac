// rigd's configuration: its command line, its config file and the policy
// that decides which peers it admits.
#pragma once

#include "contexts.hpp"
#include "limits.hpp"
#include "log.hpp"

#include <sys/types.h>

#include <cstdint>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rigd {

// The released memory rigd keeps cached per device unless configured.
inline constexpr int64_t default_cache_limit_bytes = int64_t{64} << 20;
// The rows of the shared-buffer table unless configured: one an exported
// allocation, a cache line each in the device segment every client maps
// (4 MiB), four times what exports_per_user lets one user's clients hold.
inline constexpr int64_t default_shared_rows = 65536;
inline constexpr int64_t max_shared_rows = int64_t{1} << 20;

// Who may connect, and what each client may hold.
struct Policy {
  std::vector<uid_t> users;  // allow_users: admitted uids
  std::vector<gid_t> groups; // allow_groups: admitted gids
  // What each client, and each user's clients together, may hold
  // (limits.hpp): quota_bytes, the device memory of a client, and the
  // others' keys.
  Limits limits = default_limits();
  int64_t quota_bytes() const noexcept { return limits[Held::device_bytes].client; }
  // cache_limit_bytes: the released memory rigd keeps cached for reuse on
  // each device it runs clients' work on (each served device and each
  // instance), and each client's proxy in the client's process.
  int64_t cache_limit_bytes = default_cache_limit_bytes;
  // shared_rows: the rows of the shared-buffer table, which every client's
  // exported allocations share.  Read at the start only.
  int64_t shared_rows = default_shared_rows;
  // max_clients_per_user: the clients one user may have connected at once;
  // 0 for no bound.
  int64_t max_clients_per_user = 256;
  // max_clients: the clients of every user connected at once, each with a
  // thread of its own and its poller's; 0 for no bound.
  int64_t max_clients = 4096;
  // cuda_contexts: which clients share a CUDA context (contexts.hpp).
  CudaContexts cuda_contexts = CudaContexts::per_user;
  // host_code: whether rigd loads and runs its clients' host code (a sim's
  // images) in its own process: allow, for trusted clients and tests, or
  // deny (the default).
  bool host_code = false;
  // test_knobs = allow: clients' opens may set the device knobs that exist
  // for tests (test_knobs.hpp); refuse, the default, answers them RIG_EOPEN.
  bool test_knobs = false;
  // shutdown_deadline_ms: how long rigd's SIGTERM waits for its clients'
  // sessions and devices to end; past it rigd abandons the devices still
  // busy, names them, and exits 1.
  int64_t shutdown_deadline_ms = 10000;
  // log_level: the least severe lines rigd logs (log.hpp), unless its
  // command line's --log-level says otherwise.
  LogLevel log_level = default_log_level;
  // admin_group: the group whose members, beside root and rigd's own user,
  // may use rigd's admin channel (admin.hpp); none where unset.
  std::optional<gid_t> admin_group;
  // metrics_file: where rigd writes its counters in Prometheus' text
  // format (metrics.hpp), "" for nowhere; metrics_interval_ms: how often.
  std::string metrics_file;
  int64_t metrics_interval_ms = 5000;
  // listen: where rigd serves its devices to other machines' clients
  // ("HOST:PORT", port 0 for one the system picks; rigd(8)), "" for
  // nowhere; machine_keys: the directory of the keys those clients prove
  // (a key ring: every file one key, named by its file).  Read at the
  // start only: SIGHUP keeps the link as it is.
  std::string listen;
  std::string machine_keys;
};

struct Options {
  std::string socket;               // --socket, else service_socket_path()
  std::vector<std::string> devices; // --devices, empty for the default
  std::string config_file;          // --config, empty for none
  bool foreground = false;          // --foreground (rigd never daemonizes itself)
  std::optional<LogLevel> log_level; // --log-level, over the config's
  std::string metrics_file;         // --metrics, else the config's metrics_file
  std::string listen;               // --listen, else the config's listen
  Policy policy;                    // read from config_file
};

// The command line, without its config file read.  Throws
// std::invalid_argument saying what is wrong.
Options parse_arguments(std::span<char *const> args);

// Reads a config file: lines `key = value`, blank lines and `#` comments;
// keys allow_users and allow_groups (comma-separated names or numbers),
// the limits' (limits.hpp), cache_limit_bytes, shared_rows, max_clients_per_user,
// max_clients, cuda_contexts, host_code (allow or deny), test_knobs (allow
// or refuse), shutdown_deadline_ms, admin_group (a name or number),
// metrics_file, metrics_interval_ms, log_level, listen and machine_keys.
// Throws std::invalid_argument naming the line.
Policy parse_config(std::istream &in);

// Whether policy admits a peer of uid, primary gid and supplementary groups.
// With neither list set it admits every peer (the socket's mode and group
// then decide who connects); otherwise a peer whose uid is listed, or one
// of whose groups is.
bool admits(const Policy &policy, uid_t uid, gid_t gid, std::span<const gid_t> groups);

}  // namespace rigd
