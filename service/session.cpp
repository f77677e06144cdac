// One client's session (session.hpp).
#include "session.hpp"

#include "arenas.hpp"
#include "client_objects.hpp"
#include "completions.hpp"
#include "log.hpp"
#include "passed_descriptors.hpp"
#include "poller.hpp"
#include "protocol.h"
#include "refusal.hpp"
#include "refusal_log.hpp"
#include "requests.hpp"
#include "ring_segment.hpp"
#include "segments.hpp"
#include "socket_messages.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace rigd {

namespace {

// Each client's rings and words: room for a burst of requests, and for the
// completions of a full submission ring twice over.
constexpr rig::proxy::RingSegmentShape ring_shape{256, 512, 1 << 20};
// A proxy's word is never reused: a client opens this many proxies at most
// while it is connected.
constexpr uint32_t proxy_words = 1024;
// The served devices' records as a client of quota bytes (0 for none)
// sees them: each proxy's budget is at most the quota, which counts them
// together.
std::vector<rig_proxy_device_record> with_quota(std::vector<rig_proxy_device_record> records, int64_t quota) {
  if (quota > 0)
    for (rig_proxy_device_record &r : records) {
      r.budget = std::min(r.budget, quota);
      r.flags |= RIG_PROXY_DEVICE_QUOTA;
    }
  return records;
}

// The client's completion segment: the header, then a word a line.
std::unique_ptr<Segment> completion_segment() {
  uint64_t bytes = RIG_PROXY_CACHE_LINE + uint64_t{RIG_PROXY_WORD_BYTES} * proxy_words;
  auto segment = std::make_unique<Segment>("rigd-completion", bytes, ClientAccess::read_only);
  rig_proxy_completion_segment header{};
  header.segment = {RIG_PROXY_MAGIC_COMPLETION, RIG_PROXY_VERSION, bytes};
  header.word_count = proxy_words;
  header.words_offset = RIG_PROXY_CACHE_LINE;
  std::memcpy(segment->base(), &header, sizeof header);
  return segment;
}

// Makes reply a refusal of status with why, which the log's line (of
// refusals, bounded) gives too, after what the client asked.
template <class Reply>
void refuse_request(Reply &reply, rig_status_t status, const std::string &asked, const std::string &why) {
  log_refusal("refused " + asked + ": " + why);
  reply.status = status;
  std::snprintf(reply.why, sizeof reply.why, "%s", why.c_str());
}

// A host arena's request (protocol.h): the memfd attached, if any, maps as
// an arena of the client's, its bytes counted (arena_bytes) before any is
// mapped.
rig_proxy_arena_reply arena_reply(const rig_proxy_arena_request &request, int fd, ClientObjects &objects) {
  rig_proxy_arena_reply reply{RIG_PROXY_MAGIC_ARENA, RIG_EINVAL, 0, {}};
  if (fd < 0 || request.bytes == 0 || request.bytes > INT64_MAX) return reply;
  auto bytes = static_cast<int64_t>(request.bytes);
  if (std::string refused = objects.charge_entry(bytes, Held::arena_bytes); !refused.empty()) {
    refuse_request(reply, RIG_ENOMEM, "a host arena", refused);
    return reply;
  }
  rig_buffer_t *arena = nullptr;
  std::string why;
  rig_status_t mapped = map_arena(fd, request.bytes, &arena, &why);
  if (mapped == RIG_OK) {
    reply.status = RIG_OK;
    reply.handle = objects.add(arena, bytes, {}, Held::arena_bytes);
  } else {
    objects.refund_entry(bytes, Held::arena_bytes);
    refuse_request(reply, mapped, "a host arena", why);
  }
  return reply;
}

// An export's descriptor request (protocol.h): *out is the descriptor to
// attach to the reply, rigd's own (not to be closed), or -1.
rig_proxy_fd_reply fd_reply(const rig_proxy_fd_request &request, int fd, Exports &exports, uint64_t client,
                            Account &account, int *out) {
  rig_proxy_fd_reply reply{RIG_PROXY_MAGIC_EXPORT_FD, RIG_EINVAL, 0, {}};
  *out = -1;
  if (request.op == RIG_PROXY_FD_OF_EXPORT && fd < 0) {
    std::string refused;
    *out = exports.fd_of(request.token, client, account, &refused);
    if (*out >= 0)
      reply.status = RIG_OK;
    else if (!refused.empty())
      refuse_request(reply, RIG_ENOMEM, "an export's descriptor", refused);
  } else if (request.op == RIG_PROXY_EXPORT_OF_FD && request.token == 0 && fd >= 0) {
    // Asked first: token_of's fstat of another file could wait on the
    // client (passed_descriptors.hpp).
    if (!sealable(fd)) {
      refuse_request(reply, RIG_EINVAL, "the token of a descriptor",
                     "the descriptor is not a memfd, as rigd's export descriptors are");
    } else {
      reply.token = exports.token_of(fd);
      if (reply.token != 0) reply.status = RIG_OK;
    }
  }
  return reply;
}

// Answers the client's next message on the socket: a host arena's request
// or an export's descriptor request, each 16 bytes.  false once the client
// closes the socket, or sends anything else (an arena request with its
// reserved field set included).
bool serve_socket_request(int socket, ClientObjects &objects, Exports &exports, uint64_t client) {
  static_assert(sizeof(rig_proxy_arena_request) == 16 && sizeof(rig_proxy_fd_request) == 16);
  std::byte message[16];
  int fd = -1;
  size_t received = 0;
  if (!rig::proxy::receive_message(socket, message, std::span(&fd, 1), &received, close_passed)) return false;
  if (!received) fd = -1;
  uint32_t magic;
  std::memcpy(&magic, message, sizeof magic);
  bool answered = false;
  if (magic == RIG_PROXY_MAGIC_ARENA) {
    rig_proxy_arena_request request;
    std::memcpy(&request, message, sizeof request);
    if (request.reserved == 0) {
      rig_proxy_arena_reply reply = arena_reply(request, fd, objects);
      answered = rig::proxy::send_message(socket, std::as_bytes(std::span(&reply, 1)));
    }
  } else if (magic == RIG_PROXY_MAGIC_EXPORT_FD) {
    rig_proxy_fd_request request;
    std::memcpy(&request, message, sizeof request);
    int attach;
    rig_proxy_fd_reply reply = fd_reply(request, fd, exports, client, objects.account(), &attach);
    answered = rig::proxy::send_message(socket, std::as_bytes(std::span(&reply, 1)),
                                        attach >= 0 ? std::span<const int>(&attach, 1) : std::span<const int>());
  }
  if (fd >= 0) close_passed(fd);
  return answered;
}

}  // namespace

uint64_t next_client_number() {
  static std::atomic<uint64_t> clients{0};
  return ++clients;
}

Session::Session(int socket, const Peer &peer, const ServedDevices &served, std::shared_ptr<const Policy> policy,
                 Exports &exports, UserClients &users, std::function<void()> on_end)
    : socket_(socket),
      served_(served),
      policy_(std::move(policy)),
      exports_(exports),
      users_(users),
      client_(next_client_number()),
      who_("client " + std::to_string(client_) + " (" + describe(peer) + ")"),
      user_(peer.uid),
      counters_(client_, peer.pid, peer.uid, peer.command, served.size()),
      on_end_(std::move(on_end)),
      thread_([this] {
        try {
          serve();
        } catch (const std::exception &e) {
          log_line(LogLevel::error, who_ + ": its session ended: " + e.what());
        }
        users_.leave(user_);
        ended_.store(true, std::memory_order_release);
        on_end_();
      }) {}

Session::~Session() {
  stop();
  thread_.join();
  close(socket_);
}

void Session::stop() noexcept { shutdown(socket_, SHUT_RDWR); }

bool Session::drop() noexcept {
  if (ended() || dropped_.exchange(true, std::memory_order_acq_rel)) return false;
  stop();
  return true;
}

void Session::serve() {
  // However the session ends, the client sees its end of the socket close
  // now, not once rigd reaps the session.
  struct Stop {
    Session &session;
    ~Stop() { session.stop(); }
  } stop_at_end{*this};
  // What the client needs is made before its welcome, so that a failure to
  // make any of it refuses the client with the reason.
  std::unique_ptr<Segment> completion, ring;
  auto layout = rig::proxy::lay_out_ring_segment(ring_shape);
  try {
    completion = completion_segment();
    ring = std::make_unique<Segment>("rigd-rings", layout->segment.bytes, ClientAccess::read_write);
  } catch (const std::exception &e) {
    refuse(socket_, std::string("rigd cannot make the client's segments: ") + e.what(), who_);
    return;
  }
  std::memcpy(ring->base(), &*layout, sizeof *layout);
  run(rig::proxy::RingSegment(ring->base(), *layout), *completion, *ring);
}

bool Session::welcome(const Segment &completion, const Segment &ring) {
  auto w = welcome_of(RIG_OK, static_cast<uint32_t>(served_.size()), "");
  std::vector<std::byte> message(sizeof w);
  std::memcpy(message.data(), &w, sizeof w);
  std::vector<rig_proxy_device_record> quota_records = with_quota(served_.records(), policy_->quota_bytes());
  auto records = std::as_bytes(std::span(quota_records));
  message.insert(message.end(), records.begin(), records.end());
  int fds[RIG_PROXY_SEGMENT_FDS] = {served_.segment().fd(), completion.fd(), ring.fd()};
  return rig::proxy::send_message(socket_, message, fds);
}

void Session::run(const rig::proxy::RingSegment &rings, const Segment &completion, const Segment &ring) {
  serve_client(rings, completion, ring);
  // What the client held is in rig's caches now: it goes back to the
  // drivers, so that a client that goes, however it goes, leaves rigd
  // holding what it held before the client came.
  served_.free_caches();
}

void Session::serve_client(const rig::proxy::RingSegment &rings, const Segment &completion, const Segment &ring) {
  // Declared first: what the client holds is counted out last.
  Account account(users_, user_, counters_.held);
  ClientObjects objects(account, &counters_);
  Completions completions(completion.base() + RIG_PROXY_CACHE_LINE, proxy_words, rings.word_sleepers(), served_,
                          counters_, who_);
  Requests requests(served_, exports_, client_, user_, objects, completions, rings.payload(), proxy_words,
                    *policy_, counters_);
  std::atomic<bool> stopping{false};
  std::thread poller;
  try {
    poller = std::thread([&] {
      try {
        if (run_poller(rings, requests, stopping) == PollerEnd::breach)
          log_line(LogLevel::warning, who_ + " broke the rings' protocol: disconnected");
      } catch (const std::exception &e) {
        // Such as a thread or memory rigd could not make for a request.
        log_line(LogLevel::warning, who_ + ": a request failed: " + e.what() + ": disconnected");
      }
      stop();
    });
  } catch (const std::system_error &e) {
    refuse(socket_, std::string("rigd cannot make the client's poller thread: ") + e.what(), who_);
    return;
  }
  // However this function ends, the poller ends, then the client's
  // exports; completions, then objects, end after: the client's values are
  // waited for, then its memory goes back to rig, which frees it once no
  // work uses it.
  struct EndClient {
    Session &session;
    std::thread &poller;
    std::atomic<bool> &stopping;
    const rig::proxy::RingSegment &rings;
    ~EndClient() {
      stopping.store(true, std::memory_order_release);
      wake_poller(rings);
      poller.join();
      session.exports_.remove_owner(session.client_);
    }
  } end_client{*this, poller, stopping, rings};
  if (!welcome(completion, ring)) return;
  log_line(LogLevel::info, who_ + " connected");
  auto since = std::chrono::steady_clock::now();
  while (serve_socket_request(socket_, objects, exports_, client_)) {
  }
  auto stayed = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  char after[64];
  std::snprintf(after, sizeof after, " left after %.1f s", stayed);
  log_line(LogLevel::info, who_ + after);
}

}  // namespace rigd
