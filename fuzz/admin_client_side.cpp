// The client's side of the admin conversation (admin_sides.hpp): a fake
// rigd, listening for the process's life, accepts ask_rigd's connection
// (drivers/proxy/admin_client.cpp), checks its request, and answers the
// input's reply, whole or cut, with fds attached: a memfd of a snapshot
// built from the input (its records, their counts, their offsets, the
// header's fields and the memfd's size made well-formed or lies, as bits
// say), a pipe, an empty memfd.  ask_rigd answers only a whole admin reply
// (or a welcome's refusal) of a status protocol.h names, of rigd's
// version where it is RIG_OK, and throws HandshakeError saying why
// otherwise; read_stats_snapshot reads a well-formed snapshot as it was
// built and refuses any other with MalformedSnapshot and a message, never
// reading past the memfd's records nor taking memory for more than it
// holds; what it answers keeps every index inside its records.
#include "admin_client.hpp"
#include "admin_sides.hpp"
#include "handshake.hpp"
#include "protocol.h"
#include "rigd_fuzz.hpp"
#include "socket_messages.hpp"
#include "stats_snapshot.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace rigd_fuzz {

namespace {

using rig::proxy::OwnedFd;

// The fake rigd's listening socket, in a directory of its own.
class FakeRigd {
 public:
  FakeRigd() {
    char directory[] = "/tmp/rigd-fuzz-fake-XXXXXX";
    RIGD_FUZZ_CHECK(mkdtemp(directory) != nullptr);
    directory_ = directory;
    socket_ = directory_ + "/rigd.sock";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    RIGD_FUZZ_CHECK(socket_.size() < sizeof address.sun_path);
    std::memcpy(address.sun_path, socket_.c_str(), socket_.size() + 1);
    listening_ = OwnedFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    RIGD_FUZZ_CHECK(bind(listening_.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) == 0 &&
                    listen(listening_.get(), 4) == 0);
  }
  ~FakeRigd() {
    unlink(socket_.c_str());
    rmdir(directory_.c_str());
  }
  FakeRigd(const FakeRigd &) = delete;
  FakeRigd &operator=(const FakeRigd &) = delete;

  const std::string &socket() const noexcept { return socket_; }
  // The next connection, within a few seconds.
  OwnedFd accept() const {
    pollfd p{listening_.get(), POLLIN, 0};
    RIGD_FUZZ_CHECK(poll(&p, 1, 5000) == 1);
    return OwnedFd(accept4(listening_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  }

 private:
  std::string directory_;
  std::string socket_;
  OwnedFd listening_;
};

const FakeRigd &fake_rigd() {
  static const FakeRigd fake;
  return fake;
}

// A snapshot built from the input, and whether it is one protocol.h
// lays out (its records' indices inside them, every field true).
struct BuiltSnapshot {
  std::vector<std::byte> bytes;  // the header and records
  uint64_t size = 0;             // the memfd's: its first bytes are those
  bool well_formed = true;
};

template <class T>
void put_records(FuzzedDataProvider &in, std::vector<std::byte> &bytes, uint64_t offset, uint32_t count,
                 auto &&fix) {
  for (uint32_t i = 0; i < count; ++i) {
    T t{};
    copy_into(t, in.ConsumeBytes<std::byte>(sizeof t));
    fix(t);
    std::memcpy(bytes.data() + offset + i * sizeof t, &t, sizeof t);
  }
}

BuiltSnapshot build_snapshot(FuzzedDataProvider &in) {
  uint8_t shape = in.ConsumeIntegral<uint8_t>();
  bool fixed = shape & 1;
  rig_proxy_stats_header h{};
  h.client_count = in.ConsumeIntegralInRange<uint32_t>(0, 3);
  h.use_count = in.ConsumeIntegralInRange<uint32_t>(0, 4);
  h.device_count = in.ConsumeIntegralInRange<uint32_t>(0, 3);
  h.export_count = in.ConsumeIntegralInRange<uint32_t>(0, 3);
  h.clients_offset = sizeof h;
  h.uses_offset = h.clients_offset + h.client_count * sizeof(rig_proxy_stats_client);
  h.devices_offset = h.uses_offset + h.use_count * sizeof(rig_proxy_stats_use);
  h.exports_offset = h.devices_offset + h.device_count * sizeof(rig_proxy_stats_device);
  uint64_t total = h.exports_offset + h.export_count * sizeof(rig_proxy_stats_export);
  h.segment = {RIG_PROXY_MAGIC_STATS, RIG_PROXY_VERSION, total};
  BuiltSnapshot s;
  s.bytes.resize(total);
  uint32_t uses = h.use_count, devices = std::max<uint32_t>(h.device_count, 1);
  put_records<rig_proxy_stats_client>(in, s.bytes, h.clients_offset, h.client_count, [&](auto &c) {
    if (!fixed) return;
    c.first_use %= uses + 1;
    c.use_count %= uses - c.first_use + 1;
  });
  auto fix_device = [&](auto &r) {
    if (fixed) r.device %= devices;
  };
  put_records<rig_proxy_stats_use>(in, s.bytes, h.uses_offset, h.use_count, fix_device);
  put_records<rig_proxy_stats_device>(in, s.bytes, h.devices_offset, h.device_count, [](auto &) {});
  put_records<rig_proxy_stats_export>(in, s.bytes, h.exports_offset, h.export_count, fix_device);
  s.well_formed = fixed && (h.device_count > 0 || h.use_count + h.export_count == 0);
  // A lie in one of the header's fields.
  if (shape & 2) {
    uint64_t value = in.ConsumeIntegral<uint64_t>();
    uint32_t *counts[] = {&h.segment.magic, &h.segment.version, &h.client_count, &h.use_count, &h.device_count,
                          &h.export_count};
    uint64_t *sizes[] = {&h.segment.bytes, &h.clients_offset, &h.uses_offset, &h.devices_offset, &h.exports_offset};
    size_t field = in.ConsumeIntegralInRange<size_t>(0, std::size(counts) + std::size(sizes) - 1);
    if (field < std::size(counts))
      *counts[field] = static_cast<uint32_t>(value);
    else
      *sizes[field - std::size(counts)] = value;
    s.well_formed = false;
  }
  // The memfd's size: the records', a few bytes more or fewer, or far more
  // (sparse, 16 MiB to 16 TiB: short of the most a client reads and past
  // it), which the header says too where a bit says so.
  uint64_t size = total;
  switch (shape >> 2 & 3) {
    case 1:
      size = total + in.ConsumeIntegralInRange<uint64_t>(0, 128) - std::min<uint64_t>(total, 64);
      break;
    case 2:
      size = uint64_t{1} << in.ConsumeIntegralInRange<int>(24, 44);
      break;
  }
  if (shape & 16) h.segment.bytes = size;
  std::memcpy(s.bytes.data(), &h, sizeof h);
  s.size = size;
  s.well_formed = s.well_formed && size == total && h.segment.bytes == total;
  return s;
}

// A memfd of s, sealed where sealed says.
OwnedFd memfd_of(const BuiltSnapshot &s, bool sealed) {
  OwnedFd fd(memfd_create("fuzz-snapshot", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  size_t bytes = static_cast<size_t>(std::min<uint64_t>(s.size, s.bytes.size()));
  RIGD_FUZZ_CHECK(fd.get() >= 0 && write(fd.get(), s.bytes.data(), bytes) == static_cast<ssize_t>(bytes) &&
                  ftruncate(fd.get(), static_cast<off_t>(s.size)) == 0);
  if (sealed) RIGD_FUZZ_CHECK(fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) == 0);
  return fd;
}

// Checks what read_stats_snapshot answered for s: s's records where it is
// well-formed, and indices inside the records whatever it is.
void check_read(const rig::proxy::StatsSnapshot &read, const BuiltSnapshot &s) {
  for (const rig_proxy_stats_client &c : read.clients) {
    RIGD_FUZZ_CHECK(c.first_use <= read.uses.size() && c.use_count <= read.uses.size() - c.first_use);
    RIGD_FUZZ_CHECK(c.command[sizeof c.command - 1] == '\0' && c.lost[sizeof c.lost - 1] == '\0');
  }
  for (const rig_proxy_stats_use &u : read.uses) RIGD_FUZZ_CHECK(u.device < read.devices.size());
  for (const rig_proxy_stats_export &e : read.exports) RIGD_FUZZ_CHECK(e.device < read.devices.size());
  for (const rig_proxy_stats_device &d : read.devices) RIGD_FUZZ_CHECK(d.name[sizeof d.name - 1] == '\0');
  if (!s.well_formed) return;
  rig_proxy_stats_header h;
  std::memcpy(&h, s.bytes.data(), sizeof h);
  RIGD_FUZZ_CHECK(read.clients.size() == h.client_count && read.uses.size() == h.use_count &&
                  read.devices.size() == h.device_count && read.exports.size() == h.export_count);
  auto same = [&](const auto &records, uint64_t offset) {
    for (size_t i = 0; i < records.size(); ++i) {
      auto built = records[i];
      std::memcpy(&built, s.bytes.data() + offset + i * sizeof built, sizeof built);
      if constexpr (requires { built.command; }) built.command[sizeof built.command - 1] = built.lost[sizeof built.lost - 1] = '\0';
      if constexpr (requires { built.name; }) built.name[sizeof built.name - 1] = '\0';
      RIGD_FUZZ_CHECK(std::memcmp(&built, &records[i], sizeof built) == 0);
    }
  };
  same(read.clients, h.clients_offset);
  same(read.uses, h.uses_offset);
  same(read.devices, h.devices_offset);
  same(read.exports, h.exports_offset);
}

// What an admin reply's fields make of it: an answer ask_rigd takes.
bool is_answer(const rig_proxy_admin_reply &r) {
  bool known = r.status == RIG_OK || r.status == RIG_EOPEN || r.status == RIG_EINVAL;
  // A welcome answers an admin request only as a refusal at connect.
  bool admin = r.magic == RIG_PROXY_MAGIC_ADMIN || (r.magic == RIG_PROXY_MAGIC_WELCOME && r.status == RIG_EOPEN);
  return known && admin && (r.status != RIG_OK || r.version == RIG_PROXY_VERSION);
}

}  // namespace

const std::string &fake_rigd_socket() { return fake_rigd().socket(); }

void client_admin_side(FuzzedDataProvider &in) {
  uint8_t code = in.ConsumeIntegral<uint8_t>();
  rig_proxy_admin_request request{RIG_PROXY_MAGIC_ADMIN, RIG_PROXY_VERSION,
                                  code & 1 ? RIG_PROXY_ADMIN_DROP : RIG_PROXY_ADMIN_STATS, 0,
                                  code & 1 ? in.ConsumeIntegral<uint64_t>() : 0};
  rig_proxy_admin_reply reply{};
  if (code & 2) {
    // Built, its why as long as the input says: a short input reaches the
    // snapshot.
    int32_t statuses[] = {RIG_OK, RIG_EOPEN, RIG_EINVAL, in.ConsumeIntegral<int32_t>()};
    reply.magic = code & 4 ? RIG_PROXY_MAGIC_WELCOME : RIG_PROXY_MAGIC_ADMIN;
    reply.version = RIG_PROXY_VERSION;
    reply.status = statuses[code >> 3 & 3];
    copy_into(reply.why, in.ConsumeBytes<char>(in.ConsumeIntegralInRange<size_t>(0, sizeof reply.why)));
  } else {
    copy_into(reply, in.ConsumeBytes<std::byte>(sizeof reply));
  }
  size_t reply_bytes = code & 32 ? sizeof reply : in.ConsumeIntegralInRange<size_t>(0, sizeof reply);
  // The fds attached: the snapshot's memfd first where a bit says so, else
  // a pipe's end or an empty memfd, then more of the snapshot's.
  uint8_t attach = in.ConsumeIntegral<uint8_t>();
  BuiltSnapshot built = build_snapshot(in);
  OwnedFd snapshot = memfd_of(built, attach & 4);
  OwnedFd empty(memfd_create("fuzz-empty", MFD_CLOEXEC));
  int pipe_ends[2];
  RIGD_FUZZ_CHECK(empty.get() >= 0 && pipe2(pipe_ends, O_CLOEXEC) == 0);
  OwnedFd pipe_read(pipe_ends[0]), pipe_write(pipe_ends[1]);
  int firsts[] = {snapshot.get(), snapshot.get(), pipe_read.get(), empty.get()};
  std::vector<int> fds(attach & 3, snapshot.get());
  if (!fds.empty()) fds[0] = firsts[attach >> 3 & 3];
  bool snapshot_first = !fds.empty() && fds[0] == snapshot.get();

  std::thread fake([&] {
    OwnedFd peer = fake_rigd().accept();
    auto asked = receive<rig_proxy_admin_request>(peer.get());
    RIGD_FUZZ_CHECK(asked && std::memcmp(&*asked, &request, sizeof request) == 0);
    rig::proxy::send_message(peer.get(), bytes_of(reply).first(reply_bytes), fds);
  });
  rig::proxy::AdminAnswer answer;
  bool threw = false;
  try {
    answer = rig::proxy::ask_rigd(fake_rigd().socket(), request);
  } catch (const rig::proxy::HandshakeError &e) {
    RIGD_FUZZ_CHECK(e.what()[0] != '\0');
    threw = true;
  }
  fake.join();
  RIGD_FUZZ_CHECK(threw == !(reply_bytes == sizeof reply && is_answer(reply)));
  if (threw) return;
  RIGD_FUZZ_CHECK(answer.status == reply.status &&
                  answer.why == std::string(reply.why, strnlen(reply.why, sizeof reply.why - 1)));
  RIGD_FUZZ_CHECK((answer.snapshot.get() >= 0) == !fds.empty());
  if (request.op != RIG_PROXY_ADMIN_STATS || answer.status != RIG_OK) return;
  try {
    check_read(rig::proxy::read_stats_snapshot(answer.snapshot.get()), built);
    RIGD_FUZZ_CHECK(snapshot_first);
  } catch (const rig::proxy::MalformedSnapshot &e) {
    RIGD_FUZZ_CHECK(e.what()[0] != '\0' && !(snapshot_first && built.well_formed));
  }
}

}  // namespace rigd_fuzz
