// The client's reading of rigd's STATS snapshot (protocol.h's
// rig_proxy_stats_header and its records), checked against its own layout
// before any record is read.
#pragma once

#include "protocol.h"

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace rig::proxy {

// The snapshot's records, each client's uses and each use's and export's
// device inside them, and every string NUL-terminated.
struct StatsSnapshot {
  std::vector<rig_proxy_stats_client> clients;
  std::vector<rig_proxy_stats_use> uses;
  std::vector<rig_proxy_stats_device> devices;
  std::vector<rig_proxy_stats_export> exports;
};

// Why a snapshot was refused, its numbers named: the whole message.
struct MalformedSnapshot : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The largest snapshot a client reads: far more than the records of
// rigd's max_clients and their exports take.
inline constexpr uint64_t most_snapshot_bytes = uint64_t{256} << 20;

// Reads the snapshot of the memfd fd (-1 where rigd attached none).
// Throws MalformedSnapshot where there is none, it cannot be read, it is
// larger than most_snapshot_bytes or its layout is not protocol.h's.
StatsSnapshot read_stats_snapshot(int fd);

}  // namespace rig::proxy
