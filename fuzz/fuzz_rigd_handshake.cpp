// libFuzzer target of both sides of rigd's handshake (protocol.h), over a
// socketpair, and of both sides of its admin conversation; a byte of the
// input picks the conversation and the side:
//  - rigd's (service/hello.cpp, service/session.cpp): rigd reads the input
//    as what a client sends, a hello (as its admission does), then a rigd
//    Session reads host arena and export descriptor requests, with fds
//    attached
//    (sealed and unsealed memfds, a pipe); it answers the welcome and the
//    replies protocol.h asks for, or closes, and what it answers is checked;
//  - the client's (drivers/proxy/handshake.cpp, shake_hands): a fake rigd
//    sends the input as a welcome and device records, with fds attached,
//    and the client either throws HandshakeError or returns a connection
//    that holds what the welcome said;
//  - rigd's and the client's of the admin conversation (admin_sides.hpp):
//    rigd's admission loop answers admin peers of several users, and an
//    innocent admin beside them; a fake rigd answers the client's admin
//    request and its STATS snapshot.
// Neither side crashes, leaks memory or an fd, or trips a sanitizer.  Each
// side builds its first message well-formed when a bit of the input says
// so, for the paths past it to be reached.
#include "admin_sides.hpp"
#include "config.hpp"
#include "exports.hpp"
#include "handshake.hpp"
#include "hello.hpp"
#include "peer.hpp"
#include "protocol.h"
#include "refusal.hpp"
#include "rigd_fuzz.hpp"
#include "served.hpp"
#include "session.hpp"
#include "socket_messages.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bitset>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace {

using rig::proxy::OwnedFd;
using rigd_fuzz::bytes_of;
using rigd_fuzz::copy_into;
using rigd_fuzz::receive;
using rigd_fuzz::served;

constexpr uint64_t arena_bytes = 4096;  // each memfd's size
constexpr size_t most_requests = 64;    // within the socket's buffers: see rigd_side
constexpr size_t most_chunks = 16;

// The fds an input's messages carry, made once: rigd must take an arena
// only from a memfd sealed against shrinking (service/arenas.hpp).
enum FdKind { sealed_memfd, unsealed_memfd, pipe_end, fd_kinds };

int fd_of(FdKind kind) {
  static const std::vector<int> fds = [] {
    auto memfd = [](bool sealed) {
      int fd = memfd_create("fuzz-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
      RIGD_FUZZ_CHECK(fd >= 0 && ftruncate(fd, arena_bytes) == 0);
      if (sealed) RIGD_FUZZ_CHECK(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
      return fd;
    };
    int pipe_fds[2];
    RIGD_FUZZ_CHECK(pipe2(pipe_fds, O_CLOEXEC) == 0);
    close(pipe_fds[1]);
    return std::vector<int>{memfd(true), memfd(false), pipe_fds[0]};
  }();
  return fds[kind];
}

// 0 to 4 fds of one kind, as a byte of the input says: more than a
// message's reader takes, at times.
std::vector<int> attached(uint8_t code) {
  return std::vector<int>(code % 5, fd_of(static_cast<FdKind>(code / 5 % fd_kinds)));
}

// Which of the first fds are open: what an input opened and did not close
// shows here, at the lowest free numbers.
std::bitset<128> open_fds() {
  std::bitset<128> open;
  for (size_t fd = 0; fd < open.size(); ++fd) open[fd] = fcntl(static_cast<int>(fd), F_GETFD) != -1;
  return open;
}

// The status rigd answers a well-formed arena request with these fds.
int32_t expected_status(const rig_proxy_arena_request &r, const std::vector<int> &fds) {
  bool sealed = !fds.empty() && fds[0] == fd_of(sealed_memfd);
  return sealed && r.bytes != 0 && r.bytes <= arena_bytes ? RIG_OK : RIG_EINVAL;
}

// rigd's side: the input is the client's hello and arena requests; every
// message is sent before any answer is read, which the socket's buffers
// hold for most_requests requests and their replies.
void rigd_side(FuzzedDataProvider &in) {
  int pair[2];
  RIGD_FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  OwnedFd client(pair[0]);
  rigd::Policy policy;  // admits every peer
  rigd::Exports exports(served());
  rigd::UserClients users(policy.max_clients_per_user);
  std::optional<rigd::Session> session;

  uint8_t code = in.ConsumeIntegral<uint8_t>();
  rig_proxy_hello hello{RIG_PROXY_MAGIC_HELLO, RIG_PROXY_VERSION};
  auto raw_hello = in.ConsumeBytes<std::byte>(code & 1 ? 0 : sizeof hello);
  if (!(code & 1)) copy_into(hello, raw_hello);
  // An admin request is another conversation (a request and one reply),
  // which rigd_admin_side drives: this one is a client's.
  if (hello.magic == RIG_PROXY_MAGIC_ADMIN) hello.magic ^= 1;
  size_t hello_bytes = code & 1 ? sizeof hello : raw_hello.size();
  bool sent = rig::proxy::send_message(client.get(), bytes_of(hello).first(hello_bytes), attached(code >> 1));
  // What rigd answers each request (the reply's magic and status), up to
  // the first that breaks the protocol, after which it closes the
  // connection.  A request is an arena's or an export descriptor's, built
  // well-formed when a bit says so; this client exports nothing, so rigd
  // answers every descriptor request RIG_EINVAL.
  std::vector<std::pair<uint32_t, int32_t>> replies;
  bool broken = false;
  for (size_t i = 0; sent && in.remaining_bytes() > 0 && i < most_requests; ++i) {
    code = in.ConsumeIntegral<uint8_t>();
    rig_proxy_arena_request r{};
    auto raw = in.ConsumeBytes<std::byte>(sizeof r);
    copy_into(r, raw);
    if (code & 1) {
      r.magic = code & 2 ? RIG_PROXY_MAGIC_EXPORT_FD : RIG_PROXY_MAGIC_ARENA;
      if (r.magic == RIG_PROXY_MAGIC_ARENA) r.reserved = 0;
      r.bytes %= 2 * arena_bytes;
    }
    std::vector<int> fds = attached(code >> 2);
    sent = rig::proxy::send_message(client.get(), bytes_of(r), fds);
    if (r.magic == RIG_PROXY_MAGIC_EXPORT_FD) {
      if (!broken) replies.push_back({RIG_PROXY_MAGIC_EXPORT_FD, RIG_EINVAL});
      continue;
    }
    broken = broken || r.magic != RIG_PROXY_MAGIC_ARENA || r.reserved != 0;
    if (!broken) replies.push_back({RIG_PROXY_MAGIC_ARENA, expected_status(r, fds)});
  }
  shutdown(client.get(), SHUT_WR);
  // rigd's admission: the hello, then a session for a client it admits.
  rigd::Hello said;
  rigd::Hello::Read read;
  while ((read = said.read(pair[1])) == rigd::Hello::Read::partial) {
  }
  if (read == rigd::Hello::Read::complete && said.refusal().empty()) {
    RIGD_FUZZ_CHECK(users.join(getuid()));
    auto peer = rigd::peer_of(pair[1]);
    RIGD_FUZZ_CHECK(peer.has_value());
    session.emplace(pair[1], *peer, served(), std::make_shared<const rigd::Policy>(policy), exports, users, [] {});
  } else {
    if (read == rigd::Hello::Read::complete) rigd::refuse(pair[1], said.refusal(), "");
    close(pair[1]);
  }

  // A whole hello gets a welcome, which admits the client if the hello
  // speaks rigd's version, and passes its segments then.
  size_t fd_count = 0;
  auto welcome = receive<rig_proxy_welcome>(client.get(), &fd_count);
  RIGD_FUZZ_CHECK(welcome.has_value() == (hello_bytes == sizeof hello));
  if (!welcome) return;
  bool admitted = hello.magic == RIG_PROXY_MAGIC_HELLO && hello.version == RIG_PROXY_VERSION;
  RIGD_FUZZ_CHECK(welcome->magic == RIG_PROXY_MAGIC_WELCOME && welcome->version == RIG_PROXY_VERSION);
  RIGD_FUZZ_CHECK(welcome->status == (admitted ? RIG_OK : RIG_EOPEN));
  RIGD_FUZZ_CHECK(welcome->why[sizeof welcome->why - 1] == '\0');
  if (!admitted) {
    RIGD_FUZZ_CHECK(fd_count == 0 && welcome->device_count == 0 && !receive<char>(client.get()));
    return;
  }
  RIGD_FUZZ_CHECK(fd_count == RIG_PROXY_SEGMENT_FDS && welcome->device_count == served().size());
  for (uint32_t i = 0; i < welcome->device_count; ++i)
    RIGD_FUZZ_CHECK(receive<rig_proxy_device_record>(client.get()).has_value());
  // Then a reply to each request, with no fd, until rigd closes.
  for (auto [magic, status] : replies) {
    static_assert(sizeof(rig_proxy_arena_reply) == sizeof(rig_proxy_fd_reply));
    auto reply = receive<rig_proxy_arena_reply>(client.get(), &fd_count);
    // The reply's last field is the arena's handle, or the token named.
    RIGD_FUZZ_CHECK(reply && fd_count == 0 && reply->magic == magic && reply->status == status &&
                    (reply->handle != 0) == (status == RIG_OK));
  }
  RIGD_FUZZ_CHECK(!receive<char>(client.get()));
}

// The client's side: the input is what a fake rigd sends, a welcome and
// its device records (built well-formed when the first byte says so, their
// text from the input), then chunks of raw bytes, each with fds attached.
void client_side(FuzzedDataProvider &in) {
  int pair[2];
  RIGD_FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  OwnedFd fake(pair[0]);
  std::vector<std::byte> stream;  // every byte sent
  auto send = [&](std::span<const std::byte> message, const std::vector<int> &fds) {
    stream.insert(stream.end(), message.begin(), message.end());
    RIGD_FUZZ_CHECK(rig::proxy::send_message(fake.get(), message, fds));
  };
  uint8_t code = in.ConsumeIntegral<uint8_t>();
  if (code & 1) {
    rig_proxy_welcome w{RIG_PROXY_MAGIC_WELCOME, RIG_PROXY_VERSION, code & 2 ? RIG_EOPEN : RIG_OK,
                        static_cast<uint32_t>(code >> 2 & 3), {}};
    copy_into(w.why, in.ConsumeBytes<char>(sizeof w.why));
    send(bytes_of(w), attached(code >> 4));
    for (uint32_t i = 0; i < w.device_count; ++i) {
      rig_proxy_device_record r{};
      copy_into(r, in.ConsumeBytes<std::byte>(sizeof r));
      send(bytes_of(r), {});
    }
  }
  for (size_t i = 0; in.remaining_bytes() > 0 && i < most_chunks; ++i) {
    code = in.ConsumeIntegral<uint8_t>();
    send(in.ConsumeBytes<std::byte>(in.ConsumeIntegralInRange<size_t>(1, 2 * sizeof(rig_proxy_welcome))),
         attached(code));
  }
  shutdown(fake.get(), SHUT_WR);

  try {
    rig::proxy::ServiceConnection c = rig::proxy::shake_hands(OwnedFd(pair[1]));
    // Only a welcome that admits, of this version, followed by its records,
    // makes a connection, and the records are the ones sent.
    rig_proxy_welcome w;
    RIGD_FUZZ_CHECK(stream.size() >= sizeof w);
    std::memcpy(&w, stream.data(), sizeof w);
    RIGD_FUZZ_CHECK(w.magic == RIG_PROXY_MAGIC_WELCOME && w.version == RIG_PROXY_VERSION && w.status == RIG_OK);
    RIGD_FUZZ_CHECK(c.devices.size() == w.device_count &&
                    stream.size() >= sizeof w + w.device_count * sizeof c.devices[0]);
    for (size_t i = 0; i < c.devices.size(); ++i) {
      rig_proxy_device_record sent;
      std::memcpy(&sent, stream.data() + sizeof w + i * sizeof sent, sizeof sent);
      sent.name[sizeof sent.name - 1] = sent.arch[sizeof sent.arch - 1] = '\0';
      RIGD_FUZZ_CHECK(std::memcmp(&sent, &c.devices[i], sizeof sent) == 0);
    }
    for (int fd : {c.device_segment.get(), c.completion_segment.get(), c.ring_segment.get()})
      RIGD_FUZZ_CHECK(fcntl(fd, F_GETFD) != -1);
  } catch (const rig::proxy::HandshakeError &) {
  }
  // The client said hello first, speaking this version.
  auto hello = receive<rig_proxy_hello>(fake.get());
  RIGD_FUZZ_CHECK(hello && hello->magic == RIG_PROXY_MAGIC_HELLO && hello->version == RIG_PROXY_VERSION);
}

// Whether the fds open are those of before, once rigd's thread closed
// what an input's peers left it (within a few seconds).
bool fds_return_to(const std::bitset<128> &before) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (open_fds() != before) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  served();
  fd_of(sealed_memfd);
  rigd_fuzz::admin_rigd_socket();
  rigd_fuzz::fake_rigd_socket();
  std::bitset<128> before = open_fds();
  FuzzedDataProvider in(data, size);
  // The low bit picks the side, as it did before the admin conversation.
  switch (in.ConsumeIntegral<uint8_t>() & 3) {
    case 0:
      client_side(in);
      break;
    case 1:
      rigd_side(in);
      break;
    case 2:
      rigd_fuzz::client_admin_side(in);
      break;
    case 3:
      rigd_fuzz::rigd_admin_side(in);
      break;
  }
  RIGD_FUZZ_CHECK(fds_return_to(before));
  return 0;
}
