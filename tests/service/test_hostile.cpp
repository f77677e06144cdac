/* Tests of rigd against a hostile client that speaks the protocol by hand
 * (raw_client.hpp): random and malformed entries and payloads, then clients
 * that break the rings' or the socket's protocol.  Well-behaved clients are
 * processes on librig's public API (client_process.hpp, known_work.hpp).
 *
 * The statements asserted are the design's trust rules (DESIGN.md "The
 * per-host service": rigd copies each entry and payload out before it
 * validates them, answers a bad entry with an error completion, and never
 * crashes, hangs or corrupts another client for anything a client writes; a
 * client that breaks the ring protocol is disconnected; when a client's
 * socket closes rigd releases every object it held once the work using it
 * is done) and protocol.h's (each request gets one completion, in the order
 * of the ring). */
#include "client_process.hpp"
#include "known_work.hpp"
#include "raw_client.hpp"
#include "rigd_process.hpp"

#include <criterion/criterion.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <vector>

namespace {

// The hostile client's quota keeps its allocations small whatever sizes it
// asks for: MEM:0's budget has no bound.
constexpr const char *config = "quota_bytes = 16777216\n";
constexpr uint32_t served_count = 2;  // MEM:0, SIM:0

RigdProcess start_guarded_rigd() { return start_rigd_with_config({"--devices", "MEM:0,SIM:0"}, config); }

// Whether rigd closes socket within timeout_ms (the peer's end of file).
bool closes(int socket, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{socket, POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char byte;
    ssize_t n = recv(socket, &byte, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
}

// A client process that runs KnownWork on both of rigd's devices a few
// times and answers whether every result was right.
bool well_behaved_client_passes(const std::string &socket) {
  pid_t client = fork_client([&] {
    connect_service(socket);
    KnownWork on_mem(open_device("MEM:0@rigd"), 32 << 10);
    KnownWork on_sim(open_device("SIM:0@rigd"), 32 << 10);
    for (uint64_t seed = 0; seed < 4; ++seed) {
      on_mem.run(seed);
      on_sim.run(seed + 100);
    }
    return 0;
  });
  return ended_cleanly(await_client(client, client_end_s));
}

// Writes random and malformed requests into a raw client's rings, in
// bursts, and checks that each gets its completion, in order.  It keeps
// what rigd answered (handles, proxies, tokens) so that many requests name
// real objects with wrong details, and some are well-formed work.
class Hostile {
 public:
  Hostile(raw::Client &client, std::mt19937_64 &random) : client_(client), random_(random) {}

  // Shares host arenas, a sealed one rigd takes and an unsealed one it
  // refuses.
  void share_arenas() {
    std::byte *bytes;
    uint64_t arena = client_.arena(&bytes);
    cr_assert(arena != 0);
    keep(arena, raw::arena_bytes);
    cr_assert(client_.arena(&bytes, false) == 0, "an unsealed arena is refused");
  }

  void burst() {
    size_t count = 1 + random_() % max_burst;
    std::vector<rig_proxy_entry> entries;
    for (size_t i = 0; i < count; ++i) {
      rig_proxy_entry e = entry(i);
      e.tag = ++client_.tag;
      cr_assert(client_.submissions.push(e) == rig::proxy::RingStatus::ok, "the ring has room for a burst");
      entries.push_back(e);
    }
    // A NOP last: its answer comes after every answer of the burst's.
    rig_proxy_entry nop{};
    nop.opcode = RIG_PROXY_OP_NOP;
    nop.tag = ++client_.tag;
    cr_assert(client_.submissions.push(nop) == rig::proxy::RingStatus::ok);
    rig_proxy_completion c = client_.next_completion();
    for (const rig_proxy_entry &e : entries) {
      // A hand-over rigd takes has no answer (protocol.h).
      bool hand_over = e.opcode == RIG_PROXY_OP_HANDOVER || e.opcode == RIG_PROXY_OP_FILL;
      if (hand_over && c.tag != e.tag) {
        learn(e, {e.tag, raw::rig_ok, 0, 0, 0});
        continue;
      }
      cr_assert(!hand_over || c.status != raw::rig_ok, "only a refused hand-over is answered");
      learn(e, c);
      c = client_.next_completion();
    }
    cr_assert(c.tag == nop.tag, "a completion for each request, in order");
    for (Proxy &p : proxies_) p.next = p.handed;
  }

 private:
  static constexpr size_t max_burst = 64;       // of the ring's 256 entries
  static constexpr uint64_t slot_bytes = 8192;  // each burst entry's part of the payload arena

  struct Held {
    uint64_t handle;
    uint64_t bytes;
  };

  struct Proxy {
    uint32_t index;
    uint64_t handed;  // the last value rigd took
    uint64_t next;    // the last value this burst hands over
  };

  uint64_t below(uint64_t n) { return random_() % n; }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }

  // A number that tends to find the edges of checks.
  uint64_t edgy() {
    static constexpr uint64_t edges[] = {0, 1, 2, 3, 4, 7, 8, 63, 64, 4095, 4096, 4097, 65535, 65536, 1 << 20,
                                         (1 << 20) + 1, 1ull << 31, UINT32_MAX, 1ull << 32, 1ull << 47,
                                         INT64_MAX, 1ull << 63, UINT64_MAX - 1, UINT64_MAX};
    if (chance(20)) return random_();
    if (chance(30)) return below(1 << 20);
    return edges[below(std::size(edges))];
  }

  uint64_t handle() {
    if (!held_.empty() && chance(75)) return held_[below(held_.size())].handle;
    return edgy();
  }

  // Keeps a handle for parts that fit, where its bytes are known.
  void keep(uint64_t handle, uint64_t bytes) {
    if (bytes > 0) held_.push_back({handle, bytes});
  }

  uint64_t bytes_of(uint64_t handle) const {
    for (const Held &h : held_)
      if (h.handle == handle) return h.bytes;
    return 0;
  }

  uint32_t proxy() {
    if (!proxies_.empty() && chance(85)) return proxies_[below(proxies_.size())].index;
    return static_cast<uint32_t>(edgy());
  }

  Proxy *known_proxy(uint32_t index) {
    for (Proxy &p : proxies_)
      if (p.index == index) return &p;
    return nullptr;
  }

  rig_proxy_part part() {
    rig_proxy_part p{};
    p.kind = chance(90) ? static_cast<uint32_t>(1 + below(2)) : static_cast<uint32_t>(edgy());
    p.value = chance(90) ? static_cast<uint32_t>(below(256)) : static_cast<uint32_t>(edgy());
    bool fill = p.kind == RIG_PROXY_PART_FILL;
    p.src = fill && chance(80) ? 0 : handle();
    p.src_offset = fill && chance(80) ? 0 : (chance(60) ? below(8192) : edgy());
    p.dst = handle();
    p.dst_offset = chance(60) ? below(8192) : edgy();
    p.width = chance(60) ? 1 + below(4096) : edgy();
    p.rows = chance(60) ? 1 + below(4) : edgy();
    p.src_pitch = fill && chance(70) ? 0 : (chance(60) ? p.width + below(64) : edgy());
    p.dst_pitch = fill && chance(70) ? p.width : (chance(60) ? p.width + below(64) : edgy());
    return p;
  }

  // A part that fits memory rigd holds: a copy between two held objects
  // or a fill of one, at random offsets inside them.
  rig_proxy_part fitting_part() {
    const Held &dst = held_[below(held_.size())];
    const Held &src = held_[below(held_.size())];
    rig_proxy_part p{};
    bool fill = chance(30) || src.handle == dst.handle;
    uint64_t room = fill ? dst.bytes : std::min(src.bytes, dst.bytes);
    p.width = 1 + below(std::min<uint64_t>(room, 16 << 10));
    p.rows = 1;
    p.dst = dst.handle;
    p.dst_offset = below(dst.bytes - p.width + 1);
    p.dst_pitch = p.width;
    if (fill) {
      p.kind = RIG_PROXY_PART_FILL;
      p.value = static_cast<uint32_t>(below(256));
      return p;
    }
    p.kind = RIG_PROXY_PART_COPY;
    p.src = src.handle;
    p.src_offset = below(src.bytes - p.width + 1);
    p.src_pitch = p.width;
    // Some copies of rows: a pitch a little past the width, as many rows
    // as fit both sides.
    uint64_t pitch = p.width + below(64);
    uint64_t rows = 1 + below(4);
    if ((rows - 1) * pitch + p.width <= std::min(src.bytes - p.src_offset, dst.bytes - p.dst_offset)) {
      p.rows = rows;
      p.src_pitch = p.dst_pitch = pitch;
    }
    return p;
  }

  // A hand-over: half of them the proxy's next value with waits for
  // values handed over and parts that fit, the others random: out of
  // order, naming what rigd does not hold, or malformed.
  rig_proxy_entry hand_over(size_t slot) {
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_HANDOVER;
    e.device = proxy();
    Proxy *p = known_proxy(e.device);
    bool fitting = p && !held_.empty() && chance(50);
    if (fitting || (p && chance(40)))
      e.args[0] = ++p->next;
    else
      e.args[0] = p && chance(50) ? p->handed + 2 + below(3) : edgy();
    std::vector<rig_proxy_wait> waits(below(fitting ? 2 : 4));
    for (rig_proxy_wait &w : waits) {
      w.proxy = proxy();
      Proxy *q = known_proxy(w.proxy);
      w.value = q && (fitting || chance(80)) ? below(q->handed + 1) : edgy();
      w.reserved = fitting || chance(95) ? 0 : static_cast<uint32_t>(edgy());
    }
    std::vector<rig_proxy_part> parts(fitting ? 1 + below(3) : below(7));
    for (rig_proxy_part &each : parts) each = fitting ? fitting_part() : part();
    rig_proxy_handover header{static_cast<uint32_t>(waits.size()), static_cast<uint32_t>(parts.size())};
    if (!fitting && chance(10)) header = {static_cast<uint32_t>(edgy()), static_cast<uint32_t>(edgy())};
    std::vector<std::byte> bytes(sizeof header);
    std::memcpy(bytes.data(), &header, sizeof header);
    auto w = std::as_bytes(std::span(waits));
    auto ps = std::as_bytes(std::span(parts));
    bytes.insert(bytes.end(), w.begin(), w.end());
    bytes.insert(bytes.end(), ps.begin(), ps.end());
    if (!fitting && chance(5)) bytes.resize(below(bytes.size() + 1));
    uint64_t offset = slot * slot_bytes;
    cr_assert(bytes.size() <= slot_bytes && client_.payload.copy_in(offset, bytes));
    e.payload_offset = static_cast<uint32_t>(offset);
    e.payload_bytes = static_cast<uint32_t>(bytes.size());
    if (!fitting && chance(5)) e.payload_offset = static_cast<uint32_t>(edgy());
    if (!fitting && chance(5)) e.payload_bytes = static_cast<uint32_t>(edgy());
    return e;
  }

  rig_proxy_entry entry(size_t slot) {
    rig_proxy_entry e{};
    switch (below(12)) {
      case 0:
        e.opcode = RIG_PROXY_OP_OPEN;
        e.device = chance(80) ? static_cast<uint32_t>(below(served_count)) : static_cast<uint32_t>(edgy());
        e.args[0] = chance(70) ? 0 : edgy();
        break;
      case 1:
      case 2:
        e.opcode = RIG_PROXY_OP_ALLOC;
        e.device = proxy();
        e.args[0] = chance(80) ? 0 : edgy();
        e.args[1] = chance(60) ? 1 + below(64 << 10) : edgy();
        break;
      case 3:
        e.opcode = RIG_PROXY_OP_FREE;
        e.args[0] = handle();
        break;
      case 4:
        e.opcode = RIG_PROXY_OP_MAP_PEER;
        e.device = proxy();
        e.args[0] = handle();
        break;
      case 5:
        e.opcode = RIG_PROXY_OP_EXPORT;
        e.device = proxy();
        e.args[0] = handle();
        e.args[1] = chance(50) ? below(4096) : edgy();
        e.args[2] = chance(50) ? below(4096) : edgy();
        break;
      case 6:
        e.opcode = RIG_PROXY_OP_IMPORT;
        e.device = proxy();
        e.args[0] = !tokens_.empty() && chance(70) ? tokens_[below(tokens_.size())] : edgy();
        break;
      case 7:
        e.opcode = chance(50) ? RIG_PROXY_OP_NOP : RIG_PROXY_OP_ALLOCATED;
        e.device = chance(80) ? static_cast<uint32_t>(below(served_count)) : static_cast<uint32_t>(edgy());
        e.args[0] = edgy();
        break;
      case 8:
        e.opcode = static_cast<uint16_t>(RIG_PROXY_OP_ALLOCATED + 1 + below(UINT16_MAX - RIG_PROXY_OP_ALLOCATED));
        e.device = proxy();
        for (uint64_t &a : e.args) a = edgy();
        break;
      default:
        e = hand_over(slot);
        break;
    }
    if (chance(3)) e.flags = static_cast<uint16_t>(1 + below(UINT16_MAX));
    if (chance(3)) e.reserved = 1 + below(UINT64_MAX - 1);
    if (chance(3) && e.opcode != RIG_PROXY_OP_HANDOVER) {
      e.payload_offset = static_cast<uint32_t>(edgy());
      e.payload_bytes = static_cast<uint32_t>(edgy());
    }
    return e;
  }

  // Checks c answers e and keeps what rigd made.
  void learn(const rig_proxy_entry &e, const rig_proxy_completion &c) {
    cr_assert(c.tag == e.tag, "a completion for each request, in order: tag %llu for %llu",
              static_cast<unsigned long long>(c.tag), static_cast<unsigned long long>(e.tag));
    cr_assert(c.status <= 0 && c.status >= -8, "a rig status: %d (opcode %u)", c.status, e.opcode);
    if (c.status != raw::rig_ok) return;
    switch (e.opcode) {
      case RIG_PROXY_OP_OPEN:
        proxies_.push_back({static_cast<uint32_t>(c.value), e.args[0], e.args[0]});
        break;
      case RIG_PROXY_OP_ALLOC:
        keep(c.value, e.args[1]);
        break;
      case RIG_PROXY_OP_IMPORT:
        keep(c.value, c.detail);
        break;
      case RIG_PROXY_OP_MAP_PEER:
        if (c.value) keep(c.value, bytes_of(e.args[0]));
        break;
      case RIG_PROXY_OP_FREE:
        std::erase_if(held_, [&](const Held &h) { return h.handle == e.args[0]; });
        break;
      case RIG_PROXY_OP_EXPORT:
        tokens_.push_back(c.value);
        break;
      case RIG_PROXY_OP_HANDOVER:
      case RIG_PROXY_OP_FILL:
        if (Proxy *p = known_proxy(e.device)) p->handed = e.args[0];
        break;
      case RIG_PROXY_OP_NOP:
        cr_assert(c.value == e.args[0], "NOP answers its argument");
        break;
      default:
        break;
    }
  }

  raw::Client &client_;
  std::mt19937_64 &random_;
  std::vector<Held> held_;
  std::vector<uint64_t> tokens_;
  std::vector<Proxy> proxies_;
};

}  // namespace

/* The design's trust rules (above) and protocol.h's one completion per
 * request, in order: a hostile client writes random and malformed entries
 * and payloads (random opcodes, devices, handles, offsets, counts and
 * pitches, payloads outside the arena or of the wrong size, hand-overs out
 * of order, reserved fields set) among well-formed work, while a
 * well-behaved client computes; every entry gets its completion with a rig
 * status, the well-behaved client's results stay right, rigd accepts and
 * serves a new client after, its allocated bytes return to what they were
 * once the hostile client goes, and it ends cleanly (it never crashed). */
Test(hostile, random_requests_leave_rigd_serving_others, .timeout = 120) {
  RigdProcess rigd = start_guarded_rigd();
  raw::Client observer(rigd.socket);
  raw::Client::Allocated baseline = observer.allocated_of_two();
  Channel steady_link;
  pid_t steady = fork_client([&] { return run_steady_client(rigd.socket, steady_link.ends[1]); },
                             {steady_link.ends[1]});
  steady_link.close_end(1);
  uint64_t ready;
  cr_assert(receive_value(steady_link.ends[0], ready, client_start_ms), "the steady client started");
  raw::Client::Allocated with_steady = observer.allocated_of_two();

  // A failure names its seed; RIG_HOSTILE_SEED replays one.
  const char *replay = std::getenv("RIG_HOSTILE_SEED");
  uint64_t seed = replay ? std::strtoull(replay, nullptr, 10) : std::random_device{}();
  std::fprintf(stderr, "hostile: seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  {
    raw::Client client(rigd.socket);
    Hostile hostile(client, random);
    hostile.share_arenas();
    for (int i = 0; i < 200; ++i) hostile.burst();
  }  // the hostile client goes, its work perhaps in flight
  auto after_hostile = observer.settle(with_steady, 5000);

  cr_assert(send_value(steady_link.ends[0], 0), "the steady client runs on");
  uint64_t rounds = 0;
  cr_assert(receive_value(steady_link.ends[0], rounds, client_start_ms) && rounds > 0, "the steady client ran");
  cr_assert(ended_cleanly(await_client(steady, client_end_s)), "the steady client's results stayed right");
  cr_assert(well_behaved_client_passes(rigd.socket), "rigd serves a new client");
  auto after_all = observer.settle(baseline, 5000);
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly: it never crashed");
  cr_assert(after_hostile == with_steady,
            "once the hostile client went rigd holds %lld and %lld bytes, not %lld and %lld",
            static_cast<long long>(after_hostile.first), static_cast<long long>(after_hostile.second),
            static_cast<long long>(with_steady.first), static_cast<long long>(with_steady.second));
  cr_assert(after_all == baseline, "with every client gone rigd holds %lld and %lld bytes, not %lld and %lld",
            static_cast<long long>(after_all.first), static_cast<long long>(after_all.second),
            static_cast<long long>(baseline.first), static_cast<long long>(baseline.second));
}

/* The design's trust rules: a hand-over naming memory the client holds but
 * with a part that is malformed (a fill or copy of zero rows or zero width,
 * a fill byte past 255 or with a source, a pitch below the width, bytes
 * past the end, sizes whose products overflow, an unknown kind) gets
 * RIG_EINVAL and loses its proxy (protocol.h: rigd runs no
 * later hand-over of it, and marks its word lost at the value it held);
 * another proxy of the device runs on, and rigd serves on. */
Test(hostile, malformed_parts_answer_einval_and_change_nothing, .timeout = 60) {
  RigdProcess rigd = start_guarded_rigd();
  raw::Client client(rigd.socket);
  auto sim = static_cast<uint32_t>(client.open(1));
  uint64_t h = client.alloc(sim, 4096).value, other = client.alloc(sim, 4096).value;
  cr_assert(h != 0 && other != 0);
  constexpr uint64_t huge = uint64_t{1} << 62;
  const rig_proxy_part fill = {RIG_PROXY_PART_FILL, 7, {0}, 0, h, 0, 16, 1, 0, 16};
  const rig_proxy_part copy = {RIG_PROXY_PART_COPY, 0, {h}, 0, other, 0, 16, 1, 16, 16};
  struct Case {
    const char *what;
    rig_proxy_part part;
  };
  auto with = [](rig_proxy_part p, auto change) {
    change(p);
    return p;
  };
  const Case cases[] = {
      {"a fill of zero rows", with(fill, [](auto &p) { p.rows = 0; })},
      {"a fill of zero width", with(fill, [](auto &p) { p.width = p.dst_pitch = 0; })},
      {"a fill byte past 255", with(fill, [](auto &p) { p.value = 256; })},
      {"a fill with a source", with(fill, [&](auto &p) { p.src = other; })},
      {"a fill past the end", with(fill, [](auto &p) { p.width = p.dst_pitch = 4097; })},
      {"a fill whose size overflows", with(fill, [](auto &p) { p.width = p.dst_pitch = huge, p.rows = 8; })},
      {"a copy of zero rows", with(copy, [](auto &p) { p.rows = 0; })},
      {"a copy of zero width", with(copy, [](auto &p) { p.width = 0; })},
      {"a copy with a value", with(copy, [](auto &p) { p.value = 1; })},
      {"a copy whose pitch is below its width", with(copy, [](auto &p) { p.rows = 2, p.src_pitch = 8; })},
      {"a copy past the source's end", with(copy, [](auto &p) { p.src_offset = 4090; })},
      {"a copy at an offset that overflows", with(copy, [](auto &p) { p.dst_offset = UINT64_MAX - 4; })},
      {"a copy whose rows overflow", with(copy, [](auto &p) { p.rows = huge, p.src_pitch = p.dst_pitch = huge; })},
      {"a part of kind 0", with(copy, [](auto &p) { p.kind = 0; })},
      {"a part of kind 3", with(copy, [](auto &p) { p.kind = 3; })},
  };
  for (const Case &c : cases) {
    auto proxy = static_cast<uint32_t>(client.open(1));
    cr_assert(client.hand_over(proxy, 1, {}, {c.part}).status == raw::rig_einval, "RIG_EINVAL for %s", c.what);
    const rig_proxy_word *w = client.word(proxy);
    cr_assert(std::atomic_ref<uint32_t>(const_cast<uint32_t &>(w->lost)).load() != 0 &&
                  std::atomic_ref<uint64_t>(const_cast<uint64_t &>(w->value)).load() == 0,
              "the proxy's word is lost at its start after %s", c.what);
    cr_assert(client.hand_over(proxy, 1, {}, {fill}).status == raw::rig_einval, "no later hand-over runs");
  }
  cr_assert(client.hand_over(sim, 1, {}, {fill, copy}).status == raw::rig_ok, "another proxy runs on");
  client.wait_for(sim, 1);
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

namespace {

// Ways to break the protocol, each once a client has work in flight.
enum class Breach { tail_past_capacity, tail_moved_back, completion_head_past_tail, socket_garbage };

const char *name_of(Breach b) {
  switch (b) {
    case Breach::tail_past_capacity:
      return "a submission tail past the ring's capacity";
    case Breach::tail_moved_back:
      return "a submission tail moved back";
    case Breach::completion_head_past_tail:
      return "a completion head past the tail";
    case Breach::socket_garbage:
      return "a message on the socket that is no arena request";
  }
  return "";
}

rig_proxy_ring_header *ring_header(raw::Client &c, uint64_t offset) {
  return reinterpret_cast<rig_proxy_ring_header *>(c.ring_memory.at + offset);
}

// Breaks the protocol the way breach says, through the client's memory or
// socket.
void commit_breach(raw::Client &c, Breach breach) {
  auto *submission = ring_header(c, c.layout.submission_offset);
  auto *completion = ring_header(c, c.layout.completion_offset);
  std::atomic_ref<uint32_t> tail(submission->tail);
  switch (breach) {
    case Breach::tail_past_capacity:
      tail.store(tail.load() + c.layout.submission_entries + 5);
      break;
    case Breach::tail_moved_back:
      tail.store(tail.load() - 1);
      break;
    case Breach::completion_head_past_tail: {
      std::atomic_ref<uint32_t> head(completion->head);
      head.store(head.load() + 7);
      // rigd sees the head as it answers the next request.
      rig_proxy_entry nop{};
      nop.tag = ++c.tag;
      cr_assert(c.submissions.push(nop) == rig::proxy::RingStatus::ok);
      return;
    }
    case Breach::socket_garbage: {
      const char garbage[16] = "not an arena...";
      cr_assert(send(c.connection.socket.get(), garbage, sizeof garbage, MSG_NOSIGNAL) == sizeof garbage);
      return;
    }
  }
  rig::proxy::futex_wake(&submission->sleeping, 1);
}

}  // namespace

/* The design's "a client that breaks the ring protocol is disconnected"
 * (and the socket's protocol alike), and its client death and trust rules:
 * for each way of breaking the protocol, a client with copies in flight on
 * both devices breaks it and rigd closes its socket; rigd then serves a new
 * client whose work is right, its allocated bytes return to what they were
 * before, and it ends cleanly. */
Test(hostile, a_client_breaking_the_protocol_is_disconnected, .timeout = 120) {
  RigdProcess rigd = start_guarded_rigd();
  raw::Client observer(rigd.socket);
  raw::Client::Allocated baseline = observer.allocated_of_two();
  for (Breach breach : {Breach::tail_past_capacity, Breach::tail_moved_back, Breach::completion_head_past_tail,
                        Breach::socket_garbage}) {
    raw::Client c(rigd.socket);
    for (uint32_t served = 0; served < served_count; ++served) {
      uint32_t proxy = static_cast<uint32_t>(c.open(served));
      rig_proxy_completion a = c.alloc(proxy, 1 << 20), b = c.alloc(proxy, 1 << 20);
      cr_assert(a.status == raw::rig_ok && b.status == raw::rig_ok);
      for (uint64_t v = 1; v <= 4; ++v)
        cr_assert(c.hand_over(proxy, v, {}, {raw::copy(v % 2 ? a.value : b.value, 0, v % 2 ? b.value : a.value, 0,
                                                       1 << 20)})
                      .status == raw::rig_ok);
    }
    commit_breach(c, breach);
    cr_assert(closes(c.connection.socket.get(), 10000), "rigd disconnects a client for %s", name_of(breach));
  }
  cr_assert(well_behaved_client_passes(rigd.socket), "rigd serves a new client");
  auto after = observer.settle(baseline, 5000);
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
  cr_assert(after == baseline, "with the breaking clients gone rigd holds %lld and %lld bytes, not %lld and %lld",
            static_cast<long long>(after.first), static_cast<long long>(after.second),
            static_cast<long long>(baseline.first), static_cast<long long>(baseline.second));
}
