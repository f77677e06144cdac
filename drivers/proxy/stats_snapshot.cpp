// The client's reading of rigd's STATS snapshot (stats_snapshot.hpp).
#include "stats_snapshot.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace rig::proxy {

namespace {

[[noreturn]] void malformed(const std::string &what) {
  throw MalformedSnapshot("rigd's snapshot is malformed: " + what);
}

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

StatsSnapshot parse(const std::vector<std::byte> &bytes) {
  rig_proxy_stats_header h;
  if (bytes.size() < sizeof h) malformed("shorter than its header");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.segment.magic != RIG_PROXY_MAGIC_STATS || h.segment.version != RIG_PROXY_VERSION ||
      h.segment.bytes != bytes.size())
    malformed("its header is not a snapshot's of " + std::to_string(bytes.size()) + " bytes");
  StatsSnapshot s;
  s.clients = records<rig_proxy_stats_client>(bytes, h.clients_offset, h.client_count, "the clients");
  s.uses = records<rig_proxy_stats_use>(bytes, h.uses_offset, h.use_count, "the uses");
  s.devices = records<rig_proxy_stats_device>(bytes, h.devices_offset, h.device_count, "the devices");
  s.exports = records<rig_proxy_stats_export>(bytes, h.exports_offset, h.export_count, "the exports");
  for (rig_proxy_stats_client &c : s.clients) {
    if (c.first_use > s.uses.size() || c.use_count > s.uses.size() - c.first_use)
      malformed("client " + std::to_string(c.id) + "'s uses pass the uses");
    terminate(c.command);
    terminate(c.lost);
  }
  for (rig_proxy_stats_device &d : s.devices) terminate(d.name);
  for (const rig_proxy_stats_use &u : s.uses)
    if (u.device >= s.devices.size()) malformed("a use names device " + std::to_string(u.device));
  for (const rig_proxy_stats_export &e : s.exports)
    if (e.device >= s.devices.size()) malformed("an export names device " + std::to_string(e.device));
  return s;
}

}  // namespace

StatsSnapshot read_stats_snapshot(int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 0) throw MalformedSnapshot("rigd attached no snapshot to its answer");
  // A memfd may be sparse, of any size: its bytes are taken only within
  // the bound.
  auto size = static_cast<uint64_t>(st.st_size);
  if (size > most_snapshot_bytes)
    malformed("its " + std::to_string(size) + " bytes pass the most a client reads, " +
              std::to_string(most_snapshot_bytes));
  std::vector<std::byte> bytes(static_cast<size_t>(size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) throw MalformedSnapshot("rigd's snapshot cannot be read");
    done += static_cast<size_t>(n);
  }
  return parse(bytes);
}

}  // namespace rig::proxy
