// rig_service_stats and rig_service_drop (rig/service.h): a snapshot of
// rigd's counters read on its admin channel, checked against its own
// layout before any record is read.  A snapshot is a checked handle
// (rig_internal/handles.hpp): a use after its release answers RIG_EINVAL.
#include "admin_client.hpp"
#include "rig_internal/errors.hpp"
#include "rig_internal/handles.hpp"

#include <rig/service.h>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

struct rig_service_stats : rig::HandleRecord<rig::HandleType::ServiceStats> {
  std::vector<rig_proxy_stats_client> clients;
  std::vector<std::string> users;  // by client
  std::vector<rig_proxy_stats_use> uses;
  std::vector<rig_proxy_stats_device> devices;
  std::vector<rig_proxy_stats_export> exports;
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

[[noreturn]] void malformed(const std::string &what) { throw_open("rigd's snapshot is malformed: " + what); }

// The count records of T at offset of bytes, where they lie inside it.
template <class T>
std::vector<T> records(const std::vector<std::byte> &bytes, uint64_t offset, uint32_t count, const char *what) {
  if (offset > bytes.size() || (bytes.size() - offset) / sizeof(T) < count) malformed(std::string(what) + " pass its end");
  std::vector<T> out(count);
  if (count) std::memcpy(out.data(), bytes.data() + offset, count * sizeof(T));
  return out;
}

template <size_t N>
void terminate(char (&s)[N]) {
  s[N - 1] = '\0';
}

rig_service_stats_t *parse(const std::vector<std::byte> &bytes) {
  rig_proxy_stats_header h;
  if (bytes.size() < sizeof h) malformed("shorter than its header");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.segment.magic != RIG_PROXY_MAGIC_STATS || h.segment.version != RIG_PROXY_VERSION ||
      h.segment.bytes != bytes.size())
    malformed("its header is not a snapshot's of " + std::to_string(bytes.size()) + " bytes");
  auto s = std::make_unique<rig_service_stats_t>();
  s->clients = records<rig_proxy_stats_client>(bytes, h.clients_offset, h.client_count, "the clients");
  s->uses = records<rig_proxy_stats_use>(bytes, h.uses_offset, h.use_count, "the uses");
  s->devices = records<rig_proxy_stats_device>(bytes, h.devices_offset, h.device_count, "the devices");
  s->exports = records<rig_proxy_stats_export>(bytes, h.exports_offset, h.export_count, "the exports");
  for (rig_proxy_stats_client &c : s->clients) {
    if (c.first_use > s->uses.size() || c.use_count > s->uses.size() - c.first_use)
      malformed("client " + std::to_string(c.id) + "'s uses pass the uses");
    terminate(c.command);
    terminate(c.lost);
    s->users.push_back(user_name(c.uid));
  }
  for (rig_proxy_stats_device &d : s->devices) terminate(d.name);
  for (const rig_proxy_stats_use &u : s->uses)
    if (u.device >= s->devices.size()) malformed("a use names device " + std::to_string(u.device));
  for (const rig_proxy_stats_export &e : s->exports)
    if (e.device >= s->devices.size()) malformed("an export names device " + std::to_string(e.device));
  return s.release();
}

std::vector<std::byte> read_snapshot(int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 0) throw_open("rigd attached no snapshot to its answer");
  std::vector<std::byte> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) throw_open("rigd's snapshot cannot be read");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

// The i-th record of s's records, where s is a snapshot and i is below
// their count (none says what it is not).
template <class T>
const T &record(const rig_service_stats_t *s, std::vector<T> rig_service_stats_t::*records, size_t i,
                const char *none) {
  require_handle(s, "the snapshot");
  require(i < (s->*records).size(), none);
  return (s->*records)[i];
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
    *out = parse(read_snapshot(a.snapshot.get()));
    return RIG_OK;
  });
}

void rig_service_stats_release(rig_service_stats_t *s) {
  if (snapshot_answers(s)) delete s;
}

size_t rig_service_stats_clients(const rig_service_stats_t *s) { return snapshot_answers(s) ? s->clients.size() : 0; }
size_t rig_service_stats_devices(const rig_service_stats_t *s) { return snapshot_answers(s) ? s->devices.size() : 0; }
size_t rig_service_stats_exports(const rig_service_stats_t *s) { return snapshot_answers(s) ? s->exports.size() : 0; }

rig_status_t rig_service_stats_client(const rig_service_stats_t *s, size_t i, rig_service_client_info_t *out) {
  RIG_API_CALL({
    const auto &c = record(s, &rig_service_stats_t::clients, i, "no such client in the snapshot");
    rig_service_client_info_t info{sizeof info, c.id, c.pid, c.uid, s->users[i].c_str(), c.command, c.connected_ns,
                                   c.device_bytes, c.quota_bytes, c.images, c.submissions, c.copies,
                                   c.copied_bytes, c.fills, c.launches, c.waits, c.faults, c.lost, c.use_count};
    return answer(info, out);
  });
}

rig_status_t rig_service_stats_use(const rig_service_stats_t *s, size_t client, size_t j,
                                   rig_service_use_info_t *out) {
  RIG_API_CALL({
    const auto &c = record(s, &rig_service_stats_t::clients, client, "no such client in the snapshot");
    require(j < c.use_count, "the client uses fewer served devices");
    const rig_proxy_stats_use &u = s->uses[c.first_use + j];
    rig_service_use_info_t info{sizeof info, s->devices[u.device].name, u.instances, u.bytes};
    return answer(info, out);
  });
}

rig_status_t rig_service_stats_device(const rig_service_stats_t *s, size_t i, rig_service_device_info_t *out) {
  RIG_API_CALL({
    const auto &d = record(s, &rig_service_stats_t::devices, i, "no such device in the snapshot");
    rig_service_device_info_t info{sizeof info, d.name,   d.clients, d.instances, d.allocated,
                                   d.cached,    d.queued, d.busy_ns, d.faults};
    return answer(info, out);
  });
}

rig_status_t rig_service_stats_export(const rig_service_stats_t *s, size_t i, rig_service_export_info_t *out) {
  RIG_API_CALL({
    const auto &e = record(s, &rig_service_stats_t::exports, i, "no such export in the snapshot");
    rig_service_export_info_t info{sizeof info, e.exporter, s->devices[e.device].name, e.bytes, e.importer};
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
