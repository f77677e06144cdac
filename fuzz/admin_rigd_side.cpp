// rigd's side of the admin conversation (admin_sides.hpp): rigd's
// admission loop (service/admission.cpp) runs for the process's life on a
// socket of its own, with a policy that admits this process's user and
// client_uid as clients and members of admin_gid as admins.  Each input's
// peers connect with the credentials it picks (other users' where this
// process is root: a thread of theirs connects), send an admin request or
// half of one or garbage, then close, keep silent, or read rigd's answer,
// which is checked against protocol.h: a refusal for a peer rigd admits
// to neither role or that breaks the protocol, else the reply to the
// request (a sealed snapshot for STATS; DROP ends the session of an
// input's client, the victim, when a peer names it).  Then, with every
// peer still open, an innocent admin's STATS is answered, the victim is
// still served or dropped as the answers said, and once the peers close
// rigd holds no fd of theirs.
#include "admin_sides.hpp"
#include "admission.hpp"
#include "config.hpp"
#include "handshake.hpp"
#include "listener.hpp"
#include "protocol.h"
#include "rigd_fuzz.hpp"
#include "stats_snapshot.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

namespace rigd_fuzz {

namespace {

using rig::proxy::OwnedFd;

constexpr uid_t client_uid = 4241, admin_uid = 4242, stranger_uid = 4240;
constexpr gid_t admin_gid = 4343;
constexpr size_t most_peers = 6;

// Who a peer is: rigd's own user (an admin, and a client by the policy),
// a member of admin_gid (an admin alone), client_uid (a client alone) or
// a stranger (neither).
enum Identity { own, admin_member, client_only, stranger, identities };

// The input's client, which a DROP may end.
struct Victim {
  enum State { none, connected, maybe_dropped, dropped } state = none;
  std::optional<rig::proxy::ServiceConnection> connection;
  uint64_t id = 0;
};

// What rigd answers a peer: nothing while its hello is partial, else a
// welcome's refusal or an admin reply, of status (or, for a DROP of a
// victim that an unread DROP may have ended already, of either).
struct Expected {
  bool answers = false;
  uint32_t magic = 0;
  int32_t status = 0, or_status = 0;
  bool snapshot = false;
};

Expected expected_of(Identity who, const rig_proxy_admin_request &r, size_t sent, const Victim &victim) {
  auto refusal = [] { return Expected{true, RIG_PROXY_MAGIC_WELCOME, RIG_EOPEN, RIG_EOPEN, false}; };
  auto reply = [](int32_t status) { return Expected{true, RIG_PROXY_MAGIC_ADMIN, status, status, status == RIG_OK}; };
  if (who == stranger) return refusal();  // as it is accepted
  bool admin = r.magic == RIG_PROXY_MAGIC_ADMIN;
  if (sent < sizeof(rig_proxy_hello) || (admin && sent < sizeof r)) return {};
  if (!admin || r.version != RIG_PROXY_VERSION || r.reserved != 0) return refusal();
  if (who == client_only) return reply(RIG_EOPEN);
  if (r.op == RIG_PROXY_ADMIN_STATS && r.client == 0) return reply(RIG_OK);
  bool names_victim = r.op == RIG_PROXY_ADMIN_DROP && victim.id != 0 && r.client == victim.id;
  if (names_victim && victim.state == Victim::connected) return {true, RIG_PROXY_MAGIC_ADMIN, RIG_OK, RIG_OK, false};
  if (names_victim && victim.state == Victim::maybe_dropped)
    return {true, RIG_PROXY_MAGIC_ADMIN, RIG_OK, RIG_EINVAL, false};
  return reply(RIG_EINVAL);
}

// Reads rigd's answer to a peer and checks it against expected: answers
// the snapshot where it attached one.
std::optional<rig::proxy::StatsSnapshot> check_answer(int peer, const Expected &expected) {
  size_t fd_count = 0;
  OwnedFd snapshot;
  auto a = receive<rig_proxy_admin_reply>(peer, &fd_count, &snapshot);
  RIGD_FUZZ_CHECK(a && a->magic == expected.magic && a->version == RIG_PROXY_VERSION);
  RIGD_FUZZ_CHECK(a->status == expected.status || a->status == expected.or_status);
  RIGD_FUZZ_CHECK(a->why[sizeof a->why - 1] == '\0' && (a->status == RIG_OK) == (a->why[0] == '\0'));
  RIGD_FUZZ_CHECK(fd_count == (expected.snapshot ? 1u : 0u));
  std::optional<rig::proxy::StatsSnapshot> read;
  if (expected.snapshot) {
    int seals = fcntl(snapshot.get(), F_GET_SEALS);
    int sealed = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
    RIGD_FUZZ_CHECK(seals >= 0 && (seals & sealed) == sealed);
    read = rig::proxy::read_stats_snapshot(snapshot.get());
    RIGD_FUZZ_CHECK(read->devices.size() == served().size());
  }
  // One request, one reply: rigd closes the connection then, and the
  // snapshot's memfd before.
  RIGD_FUZZ_CHECK(!receive<char>(peer));
  return read;
}

// The snapshot an innocent admin reads, which rigd answers whatever the
// input's peers do; once read, rigd closed what it opened for it.
rig::proxy::StatsSnapshot snapshot_now(const std::string &socket) {
  rig_proxy_admin_request stats{RIG_PROXY_MAGIC_ADMIN, RIG_PROXY_VERSION, RIG_PROXY_ADMIN_STATS, 0, 0};
  OwnedFd innocent = rig::proxy::connect_socket(socket);
  RIGD_FUZZ_CHECK(rig::proxy::send_message(innocent.get(), bytes_of(stats)));
  return *check_answer(innocent.get(), {true, RIG_PROXY_MAGIC_ADMIN, RIG_OK, RIG_OK, true});
}

// rigd's admission loop in a thread, on a socket in a directory of its own.
class FuzzRigd {
 public:
  FuzzRigd();
  // Stops the loop as SIGTERM does (a signalfd's record on its pipe).
  ~FuzzRigd();
  FuzzRigd(const FuzzRigd &) = delete;
  FuzzRigd &operator=(const FuzzRigd &) = delete;

  const std::string &socket() const noexcept { return socket_; }

 private:
  static rigd::Policy policy() {
    rigd::Policy p;
    p.users = {geteuid(), client_uid};
    p.admin_group = admin_gid;
    return p;
  }

  std::string directory_;
  std::string socket_;
  std::optional<rigd::Listener> listener_;
  int signals_[2] = {-1, -1};
  std::thread thread_;
};

FuzzRigd::FuzzRigd() {
  char directory[] = "/tmp/rigd-fuzz-admin-XXXXXX";
  RIGD_FUZZ_CHECK(mkdtemp(directory) != nullptr);
  directory_ = directory;
  socket_ = directory_ + "/rigd.sock";
  listener_.emplace(socket_);
  // Other users' peers reach the socket too; rigd's policy decides.
  RIGD_FUZZ_CHECK(chmod(directory, 0755) == 0 && chmod(socket_.c_str(), 0666) == 0);
  RIGD_FUZZ_CHECK(pipe2(signals_, O_CLOEXEC) == 0);
  thread_ = std::thread([this] {
    rigd::Policy p = policy();
    rigd::serve_clients(*listener_, signals_[0], served(), p, [] { return policy(); });
  });
  // Once it answers, the loop holds every fd it keeps.
  snapshot_now(socket_);
}

FuzzRigd::~FuzzRigd() {
  signalfd_siginfo stop{};
  stop.ssi_signo = SIGTERM;
  RIGD_FUZZ_CHECK(write(signals_[1], &stop, sizeof stop) == static_cast<ssize_t>(sizeof stop));
  thread_.join();
  listener_.reset();
  close(signals_[0]);
  close(signals_[1]);
  rmdir(directory_.c_str());
}

FuzzRigd &fuzz_rigd() {
  static FuzzRigd rigd;
  return rigd;
}

// Who rigd sees: other users only where this process may take their
// credentials (root).
Identity seen_as(Identity who) { return geteuid() == 0 ? who : own; }

// A connection to rigd with who's credentials: those of a thread that
// takes them alone (the raw system calls: glibc's change every thread's).
OwnedFd connect_as(Identity who, const std::string &socket) {
  if (seen_as(who) == own) return rig::proxy::connect_socket(socket);
  OwnedFd connected;
  std::thread([&] {
    uid_t uid = who == admin_member ? admin_uid : who == client_only ? client_uid : stranger_uid;
    gid_t groups[] = {admin_gid};
    RIGD_FUZZ_CHECK(syscall(SYS_setgroups, who == admin_member ? 1 : 0, groups) == 0 &&
                    syscall(SYS_setresgid, uid, uid, uid) == 0 && syscall(SYS_setresuid, uid, uid, uid) == 0);
    connected = rig::proxy::connect_socket(socket);
  }).join();
  return connected;
}

}  // namespace

const std::string &admin_rigd_socket() { return fuzz_rigd().socket(); }

void rigd_admin_side(FuzzedDataProvider &in) {
  const std::string &socket = admin_rigd_socket();
  Victim victim;
  if (in.ConsumeBool()) {
    victim.connection = rig::proxy::connect_to_rigd(socket);
    auto clients = snapshot_now(socket).clients;
    RIGD_FUZZ_CHECK(clients.size() == 1);
    victim.id = clients[0].id;
    victim.state = Victim::connected;
  }
  std::vector<OwnedFd> open_peers;
  for (size_t i = 0; i < most_peers && in.remaining_bytes() > 0; ++i) {
    uint8_t code = in.ConsumeIntegral<uint8_t>();
    auto who = seen_as(static_cast<Identity>(code % identities));
    rig_proxy_admin_request r{};
    copy_into(r, in.ConsumeBytes<std::byte>(sizeof r));
    if (code & 4) {
      // Well-formed but for the op and the client named.
      r = {RIG_PROXY_MAGIC_ADMIN, RIG_PROXY_VERSION, r.op % 4, code & 8 ? r.reserved : 0, r.client};
      uint64_t clients[] = {0, victim.id, victim.id + 1, r.client};
      r.client = clients[code >> 4 & 3];
    }
    // A client's hello would start a session: this conversation is an
    // admin's.
    if (r.magic == RIG_PROXY_MAGIC_HELLO) r.magic ^= 1;
    // A whole request, part of one, or more than one.
    size_t sent = code & 64 ? sizeof r : in.ConsumeIntegralInRange<size_t>(0, sizeof r + 8);
    std::vector<std::byte> message(sent);
    if (sent) std::memcpy(message.data(), &r, std::min(sent, sizeof r));
    OwnedFd peer = connect_as(who, socket);
    // rigd may have refused the peer and closed already: the send fails.
    rig::proxy::send_message(peer.get(), message);
    Expected expected = expected_of(who, r, sent, victim);
    bool drops_victim = expected.answers && expected.magic == RIG_PROXY_MAGIC_ADMIN && r.op == RIG_PROXY_ADMIN_DROP &&
                        expected.status == RIG_OK;
    if (expected.answers && code & 128) {
      check_answer(peer.get(), expected);
      if (drops_victim) victim.state = Victim::dropped;
    } else {
      if (drops_victim) victim.state = Victim::maybe_dropped;
      // Half a request, or one whose answer the peer never reads: open
      // until the input ends, or closed now.
      if (in.ConsumeBool()) open_peers.push_back(std::move(peer));
    }
  }
  // The innocent admin, among the peers still open.
  rig::proxy::StatsSnapshot now = snapshot_now(socket);
  if (victim.state == Victim::connected) {
    // Still rigd's client: counted, and its connection open (rigd sends
    // nothing unasked on it).
    RIGD_FUZZ_CHECK(now.clients.size() == 1 && now.clients[0].id == victim.id);
    pollfd open{victim.connection->socket.get(), POLLIN | POLLRDHUP, 0};
    RIGD_FUZZ_CHECK(poll(&open, 1, 0) == 0);
  }
  if (victim.state == Victim::dropped) RIGD_FUZZ_CHECK(!receive<char>(victim.connection->socket.get()));
  open_peers.clear();
  if (victim.connection) {
    victim.connection.reset();
    settle();
  }
}

}  // namespace rigd_fuzz
