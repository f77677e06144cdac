// rigd's admin channel (admin.hpp).
#include "admin.hpp"

#include "log.hpp"
#include "refusal_log.hpp"
#include "socket_messages.hpp"

#include <rig/rig.h>

#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace rigd {

namespace {

std::string group_name(gid_t gid) {
  group g{}, *found = nullptr;
  char buffer[1024];
  if (getgrgid_r(gid, &g, buffer, sizeof buffer, &found) == 0 && found) return found->gr_name;
  return std::to_string(gid);
}

rig_proxy_admin_reply reply_of(int32_t status, const std::string &why) {
  rig_proxy_admin_reply r{};
  r.magic = RIG_PROXY_MAGIC_ADMIN;
  r.version = RIG_PROXY_VERSION;
  r.status = status;
  std::snprintf(r.why, sizeof r.why, "%s", why.c_str());
  return r;
}

void send_reply(int socket, const rig_proxy_admin_reply &reply, int fd = -1) {
  rig::proxy::send_message(socket, std::as_bytes(std::span(&reply, 1)),
                           fd >= 0 ? std::span<const int>(&fd, 1) : std::span<const int>());
}

template <class T>
void put(std::vector<std::byte> &bytes, uint64_t offset, const std::vector<T> &records) {
  if (!records.empty()) std::memcpy(bytes.data() + offset, records.data(), records.size() * sizeof(T));
}

// The snapshot's records, laid out as protocol.h says.
std::vector<std::byte> snapshot_bytes(const AdminView &view) {
  const size_t devices = view.served.size();
  std::vector<rig_proxy_stats_client> clients;
  std::vector<rig_proxy_stats_use> uses;
  std::vector<rig_proxy_stats_device> served(devices);
  std::vector<uint64_t> held_by_clients(devices);
  int64_t quota = view.policy.quota_bytes();
  // A client's record and its uses, local or remote alike.
  auto add_client = [&](const ClientCounters &c, const UserClients::Counts &held) {
    rig_proxy_stats_client r{};
    r.id = c.id;
    r.pid = c.pid;
    r.uid = c.uid;
    r.first_use = static_cast<uint32_t>(uses.size());
    r.connected_ns = c.connected_ns;
    std::snprintf(r.command, sizeof r.command, "%s", c.command.c_str());
    r.device_bytes = static_cast<uint64_t>(held[static_cast<size_t>(Held::device_bytes)]);
    r.quota_bytes = quota > 0 ? static_cast<uint64_t>(quota) : UINT64_MAX;
    r.images = c.images.read();
    r.submissions = c.submissions.read();
    r.copies = c.copies.read();
    r.copied_bytes = c.copied_bytes.read();
    r.fills = c.fills.read();
    r.launches = c.launches.read();
    r.waits = c.waits.read();
    r.faults = c.faults.read();
    std::snprintf(r.lost, sizeof r.lost, "%s", c.last_loss().c_str());
    for (size_t i = 0; i < devices; ++i) {
      const UseCounters &u = c.uses[i];
      rig_proxy_stats_device &d = served[i];
      d.queued += u.queued.read();
      d.busy_ns += u.busy_ns.read();
      d.faults += u.faults.read();
      if (u.instances.read() == 0) continue;
      d.clients++;
      uint64_t bytes = u.bytes.read();
      held_by_clients[i] += bytes;
      uses.push_back({static_cast<uint32_t>(i), 0, u.instances.read(), bytes});
    }
    r.use_count = static_cast<uint32_t>(uses.size() - r.first_use);
    clients.push_back(r);
  };
  for (const auto &session : view.sessions)
    if (!session->ended()) add_client(session->counters(), session->held());
  if (view.machines) view.machines->visit_clients(add_client);
  for (size_t i = 0; i < devices; ++i) {
    rig_proxy_stats_device &d = served[i];
    std::snprintf(d.name, sizeof d.name, "%s", view.served.records()[i].name);
    d.instances = view.served.instances(i);
    d.allocated = static_cast<uint64_t>(std::max<int64_t>(view.served.allocated(i), 0));
    d.cached = d.allocated > held_by_clients[i] ? d.allocated - held_by_clients[i] : 0;
  }
  std::vector<rig_proxy_stats_export> exports;
  for (const Exports::Row &row : view.exports.rows())
    exports.push_back({row.exporter, static_cast<uint32_t>(row.device), 0, row.bytes, row.importer});
  rig_proxy_stats_header h{};
  h.client_count = static_cast<uint32_t>(clients.size());
  h.use_count = static_cast<uint32_t>(uses.size());
  h.device_count = static_cast<uint32_t>(devices);
  h.export_count = static_cast<uint32_t>(exports.size());
  h.clients_offset = sizeof h;
  h.uses_offset = h.clients_offset + clients.size() * sizeof(rig_proxy_stats_client);
  h.devices_offset = h.uses_offset + uses.size() * sizeof(rig_proxy_stats_use);
  h.exports_offset = h.devices_offset + served.size() * sizeof(rig_proxy_stats_device);
  uint64_t total = h.exports_offset + exports.size() * sizeof(rig_proxy_stats_export);
  h.segment = {RIG_PROXY_MAGIC_STATS, RIG_PROXY_VERSION, total};
  std::vector<std::byte> bytes(total);
  std::memcpy(bytes.data(), &h, sizeof h);
  put(bytes, h.clients_offset, clients);
  put(bytes, h.uses_offset, uses);
  put(bytes, h.devices_offset, served);
  put(bytes, h.exports_offset, exports);
  return bytes;
}

}  // namespace

std::string admin_refusal(const Policy &policy, uid_t uid, gid_t gid, std::span<const gid_t> groups) {
  if (uid == 0 || uid == geteuid()) return "";
  if (policy.admin_group) {
    gid_t admin = *policy.admin_group;
    if (gid == admin || std::find(groups.begin(), groups.end(), admin) != groups.end()) return "";
    return "rigd admits only root and group " + group_name(admin) + " to its admin channel: uid " +
           std::to_string(uid) + " is neither";
  }
  return "rigd admits only root to its admin channel (its config names no admin_group): uid " +
         std::to_string(uid) + " is not root";
}

int snapshot_of(const AdminView &view) {
  std::vector<std::byte> bytes = snapshot_bytes(view);
  int fd = memfd_create("rigd-stats", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  if (written != bytes.size() || fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void refuse_admin(int socket, const std::string &why) {
  send_reply(socket, reply_of(RIG_EOPEN, why));
  log_refusal("refused an admin request: " + why);
}

void answer_admin(int socket, const rig_proxy_admin_request &request, const AdminView &view) {
  if (request.op == RIG_PROXY_ADMIN_STATS && request.client != 0)
    return send_reply(socket, reply_of(RIG_EINVAL, "the STATS request names client " + std::to_string(request.client) +
                                                       ", where it names none (0)"));
  if (request.op == RIG_PROXY_ADMIN_STATS) {
    int fd = snapshot_of(view);
    if (fd < 0) return send_reply(socket, reply_of(RIG_EINVAL, "rigd cannot make the snapshot's memfd"));
    send_reply(socket, reply_of(RIG_OK, ""), fd);
    close(fd);
    return;
  }
  if (request.op != RIG_PROXY_ADMIN_DROP)
    return send_reply(socket, reply_of(RIG_EINVAL, "no such admin request: " + std::to_string(request.op)));
  for (const auto &session : view.sessions)
    if (session->counters().id == request.client && session->drop()) {
      log_line(LogLevel::notice, "dropped client " + std::to_string(request.client) + " (pid " +
                                     std::to_string(session->counters().pid) + ") on an admin's request");
      return send_reply(socket, reply_of(RIG_OK, ""));
    }
  if (view.machines && view.machines->drop(request.client)) {
    log_line(LogLevel::notice, "dropped remote client " + std::to_string(request.client) + " on an admin's request");
    return send_reply(socket, reply_of(RIG_OK, ""));
  }
  send_reply(socket,
             reply_of(RIG_EINVAL, "rigd has no client " + std::to_string(request.client) + " connected"));
}

}  // namespace rigd
