// rig_service_stats and rig_service_drop (rig/service.h): a snapshot of
// rigd's counters read on its admin channel (stats_snapshot.hpp).  A
// snapshot is a checked handle (rig_internal/handles.hpp): a use after its
// release answers RIG_EINVAL.
#include "admin_client.hpp"
#include "stats_snapshot.hpp"
#include "rig_internal/errors.hpp"
#include "rig_internal/handles.hpp"

#include <rig/service.h>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

struct rig_service_stats : rig::HandleRecord<rig::HandleType::ServiceStats> {
  rig::proxy::StatsSnapshot snapshot;
  std::vector<std::string> users;  // by client
};

namespace rig {

// True iff s is a snapshot not released: a load of the word before it.
inline bool live_handle(const rig_service_stats_t *s) { return handle_live(s, HandleType::ServiceStats); }

}  // namespace rig

namespace {

using namespace rig;

// The first check of a call given s that answers no status: true iff s is
// a live snapshot; one released (or never made) leaves RIG_EINVAL "the
// snapshot was released" as the thread's last error.  NULL answers false
// and leaves the last error as it was.
bool snapshot_answers(const rig_service_stats_t *s) noexcept {
  if (!s) return false;
  try {
    require_handle(s, "the snapshot");
    return true;
  } catch (...) {
    record_current_exception();
    return false;
  }
}

std::string socket_of(const rig_service_options_t *opts) {
  if (!opts) return "";
  require(opts->size >= offsetof(rig_service_options_t, socket) + sizeof(opts->socket),
          "rig_service_options_t.size is too small");
  return opts->socket ? opts->socket : "";
}

// rigd's answer to request; RIG_EOPEN where no rigd answers or it refuses.
proxy::AdminAnswer ask(const rig_service_options_t *opts, uint32_t op, uint64_t client) {
  std::string socket = socket_of(opts);
  rig_proxy_admin_request request{RIG_PROXY_MAGIC_ADMIN, RIG_PROXY_VERSION, op, 0, client};
  proxy::AdminAnswer answer;
  try {
    answer = proxy::ask_rigd(socket, request);
  } catch (const proxy::HandshakeError &e) {
    throw_open(e.what());
  }
  if (answer.status == RIG_EOPEN) throw_open(answer.why);
  if (answer.status != RIG_OK) throw_invalid(answer.why);
  return answer;
}

std::string user_name(uint32_t uid) {
  passwd pw{}, *found = nullptr;
  char buffer[1024];
  if (getpwuid_r(uid, &pw, buffer, sizeof buffer, &found) == 0 && found) return found->pw_name;
  return std::to_string(uid);
}

// The snapshot of rigd's answer, and its clients' user names.
rig_service_stats_t *snapshot_of(const proxy::AdminAnswer &a) {
  auto s = std::make_unique<rig_service_stats_t>();
  try {
    s->snapshot = proxy::read_stats_snapshot(a.snapshot.get());
  } catch (const proxy::MalformedSnapshot &e) {
    throw_open(e.what());
  }
  for (const rig_proxy_stats_client &c : s->snapshot.clients) s->users.push_back(user_name(c.uid));
  return s.release();
}

// The i-th record of s's records, where s is a snapshot and i is below
// their count (none says what it is not).
template <class T>
const T &record(const rig_service_stats_t *s, std::vector<T> proxy::StatsSnapshot::*records, size_t i,
                const char *none) {
  require_handle(s, "the snapshot");
  require(i < (s->snapshot.*records).size(), none);
  return (s->snapshot.*records)[i];
}

// Writes info into *out, as much as out->size holds, its size kept.
template <class Info>
rig_status_t answer(const Info &info, Info *out) {
  require(out != nullptr, "out is NULL");
  require(out->size >= sizeof(size_t), "out->size is less than a size_t");
  size_t size = out->size;
  std::memcpy(static_cast<void *>(out), &info, std::min(size, sizeof info));
  out->size = size;
  return RIG_OK;
}

}  // namespace

extern "C" {

rig_status_t rig_service_stats(const rig_service_options_t *opts, rig_service_stats_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    proxy::AdminAnswer a = ask(opts, RIG_PROXY_ADMIN_STATS, 0);
    *out = snapshot_of(a);
    return RIG_OK;
  });
}

void rig_service_stats_release(rig_service_stats_t *s) {
  if (snapshot_answers(s)) delete s;
}

size_t rig_service_stats_clients(const rig_service_stats_t *s) { return snapshot_answers(s) ? s->snapshot.clients.size() : 0; }
size_t rig_service_stats_devices(const rig_service_stats_t *s) { return snapshot_answers(s) ? s->snapshot.devices.size() : 0; }
size_t rig_service_stats_exports(const rig_service_stats_t *s) { return snapshot_answers(s) ? s->snapshot.exports.size() : 0; }

rig_status_t rig_service_stats_client(const rig_service_stats_t *s, size_t i, rig_service_client_info_t *out) {
  RIG_API_CALL({
    const auto &c = record(s, &proxy::StatsSnapshot::clients, i, "no such client in the snapshot");
    rig_service_client_info_t info{sizeof info, c.id, c.pid, c.uid, s->users[i].c_str(), c.command, c.connected_ns,
                                   c.device_bytes, c.quota_bytes, c.images, c.submissions, c.copies,
                                   c.copied_bytes, c.fills, c.launches, c.waits, c.faults, c.lost, c.use_count};
    return answer(info, out);
  });
}

rig_status_t rig_service_stats_use(const rig_service_stats_t *s, size_t client, size_t j,
                                   rig_service_use_info_t *out) {
  RIG_API_CALL({
    const auto &c = record(s, &proxy::StatsSnapshot::clients, client, "no such client in the snapshot");
    require(j < c.use_count, "the client uses fewer served devices");
    const rig_proxy_stats_use &u = s->snapshot.uses[c.first_use + j];
    rig_service_use_info_t info{sizeof info, s->snapshot.devices[u.device].name, u.instances, u.bytes};
    return answer(info, out);
  });
}

rig_status_t rig_service_stats_device(const rig_service_stats_t *s, size_t i, rig_service_device_info_t *out) {
  RIG_API_CALL({
    const auto &d = record(s, &proxy::StatsSnapshot::devices, i, "no such device in the snapshot");
    rig_service_device_info_t info{sizeof info, d.name,   d.clients, d.instances, d.allocated,
                                   d.cached,    d.queued, d.busy_ns, d.faults};
    return answer(info, out);
  });
}

rig_status_t rig_service_stats_export(const rig_service_stats_t *s, size_t i, rig_service_export_info_t *out) {
  RIG_API_CALL({
    const auto &e = record(s, &proxy::StatsSnapshot::exports, i, "no such export in the snapshot");
    rig_service_export_info_t info{sizeof info, e.exporter, s->snapshot.devices[e.device].name, e.bytes, e.importer};
    return answer(info, out);
  });
}

rig_status_t rig_service_drop(const rig_service_options_t *opts, uint64_t client) {
  RIG_API_CALL({
    ask(opts, RIG_PROXY_ADMIN_DROP, client);
    return RIG_OK;
  });
}

}  // extern "C"
