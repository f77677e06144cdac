// A client of rigd speaking protocol.h by hand, through the rings and the
// socket, for tests that send what the proxy driver would not.  Its checks
// fail the calling Criterion test: use it in the test's process only.
#pragma once

#include "handshake.hpp"
#include "ring_segment.hpp"
#include "socket_messages.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace raw {

inline constexpr int rig_ok = 0, rig_einval = -1, rig_enomem = -3;
inline constexpr uint64_t arena_bytes = 1 << 16;

template <class T>
struct Mapping {
  T *at = nullptr;
  size_t bytes = 0;
  Mapping(int fd, int protection) {
    struct stat st;
    cr_assert(fstat(fd, &st) == 0);
    bytes = static_cast<size_t>(st.st_size);
    void *p = mmap(nullptr, bytes, protection, MAP_SHARED, fd, 0);
    cr_assert(p != MAP_FAILED);
    at = static_cast<T *>(p);
  }
  Mapping(const Mapping &) = delete;
  Mapping &operator=(const Mapping &) = delete;
  ~Mapping() { munmap(const_cast<std::remove_const_t<T> *>(at), bytes); }
};

struct Client {
  rig::proxy::ServiceConnection connection;
  Mapping<std::byte> ring_memory;
  Mapping<const std::byte> completion_memory;
  rig_proxy_ring_segment layout;
  rig::proxy::RingProducer<rig_proxy_entry> submissions;
  rig::proxy::RingConsumer<rig_proxy_completion> completions;
  rig::proxy::PayloadArena payload;
  uint64_t tag = 0;

  explicit Client(const std::string &socket)
      : connection(rig::proxy::connect_to_rigd(socket)),
        ring_memory(connection.ring_segment.get(), PROT_READ | PROT_WRITE),
        completion_memory(connection.completion_segment.get(), PROT_READ),
        layout(checked_layout()),
        submissions(rings().submission_producer()),
        completions(rings().completion_consumer()),
        payload(rings().payload()) {}

  rig_proxy_ring_segment checked_layout() const {
    rig_proxy_ring_segment l;
    std::memcpy(&l, ring_memory.at, sizeof l);
    cr_assert(rig::proxy::valid_ring_segment(l, ring_memory.bytes));
    return l;
  }

  rig::proxy::RingSegment rings() const { return {ring_memory.at, layout}; }

  // Whether rigd closed its end of the socket.
  bool closed_by_rigd() const {
    pollfd p{connection.socket.get(), POLLRDHUP, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
  }

  // The next completion, however long rigd takes; fails the test if rigd
  // closes the connection first.
  rig_proxy_completion next_completion() {
    rig_proxy_completion c;
    rig::proxy::RingStatus status;
    while ((status = completions.pop(c)) == rig::proxy::RingStatus::empty) {
      bool closed = closed_by_rigd();
      // An answer rigd gave before it closed still counts.
      if (closed && (status = completions.pop(c)) != rig::proxy::RingStatus::empty) break;
      cr_assert(!closed, "rigd closed the connection before it answered (did rigd die?)");
      completions.sleep(100);
    }
    cr_assert(status == rig::proxy::RingStatus::ok, "rigd broke the completion ring");
    return c;
  }

  rig_proxy_completion request(rig_proxy_entry e) {
    e.tag = ++tag;
    cr_assert(submissions.push(e) == rig::proxy::RingStatus::ok);
    rig_proxy_completion c = next_completion();
    cr_assert(c.tag == e.tag, "a completion answers each request, in order");
    return c;
  }

  uint64_t open(uint32_t device) {
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_OPEN;
    e.device = device;
    rig_proxy_completion c = request(e);
    cr_assert(c.status == rig_ok, "open: %d", c.status);
    return c.value;
  }

  rig_proxy_completion alloc(uint32_t proxy, uint64_t bytes) {
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_ALLOC;
    e.device = proxy;
    e.args[1] = bytes;
    return request(e);
  }

  // The value of rigd's monitoring request opcode of served device `served`.
  int64_t monitor(uint16_t opcode, uint32_t served) {
    rig_proxy_entry e{};
    e.opcode = opcode;
    e.device = served;
    rig_proxy_completion c = request(e);
    cr_assert(c.status == rig_ok, "monitoring request %u: %d", opcode, c.status);
    return static_cast<int64_t>(c.value);
  }

  // The bytes served device `served` holds (its rig_allocated in rigd).
  int64_t allocated(uint32_t served) { return monitor(RIG_PROXY_OP_ALLOCATED, served); }

  // rigd's count `what` (protocol.h's rig_proxy_count) over its clients.
  int64_t count(uint64_t what) {
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_ALLOCATED;
    e.args[0] = what;
    rig_proxy_completion c = request(e);
    cr_assert(c.status == rig_ok, "count %llu: %d", static_cast<unsigned long long>(what), c.status);
    return static_cast<int64_t>(c.value);
  }

  // rigd's allocated bytes of its first two served devices.
  using Allocated = std::pair<int64_t, int64_t>;
  Allocated allocated_of_two() { return {allocated(0), allocated(1)}; }

  // Polls allocated_of_two until it is expected, for at most timeout_ms,
  // and answers the last seen: rigd frees memory once its work is done.
  Allocated settle(Allocated expected, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      Allocated seen = allocated_of_two();
      if (seen == expected || std::chrono::steady_clock::now() > deadline) return seen;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // Shares a new sealed memfd of arena_bytes, mapped here at *bytes.
  uint64_t arena(std::byte **bytes, bool sealed = true) {
    int fd = memfd_create("client-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    cr_assert(fd >= 0 && ftruncate(fd, arena_bytes) == 0);
    if (sealed) cr_assert(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
    void *p = mmap(nullptr, arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    cr_assert(p != MAP_FAILED);
    *bytes = static_cast<std::byte *>(p);
    rig_proxy_arena_reply reply = share_arena(fd, arena_bytes);
    close(fd);
    return reply.status == rig_ok ? reply.handle : 0;
  }

  // Shares bytes bytes of the memfd fd (the caller's still) as a host
  // arena: rigd's reply.
  rig_proxy_arena_reply share_arena(int fd, uint64_t bytes) {
    rig_proxy_arena_request r{RIG_PROXY_MAGIC_ARENA, 0, bytes};
    cr_assert(rig::proxy::send_message(connection.socket.get(), std::as_bytes(std::span(&r, 1)), std::span(&fd, 1)));
    rig_proxy_arena_reply reply{};
    cr_assert(rig::proxy::receive_message(connection.socket.get(), std::as_writable_bytes(std::span(&reply, 1))));
    cr_assert(reply.magic == RIG_PROXY_MAGIC_ARENA);
    return reply;
  }

  // An export descriptor request on the socket (protocol.h), fd attached
  // where not -1: rigd's reply, the descriptor attached to it in *reply_fd
  // (or -1).
  rig_proxy_fd_reply ask_fd(uint32_t op, uint64_t token, int fd, int *reply_fd) {
    rig_proxy_fd_request r{RIG_PROXY_MAGIC_EXPORT_FD, op, token};
    cr_assert(rig::proxy::send_message(connection.socket.get(), std::as_bytes(std::span(&r, 1)),
                                       fd >= 0 ? std::span<const int>(&fd, 1) : std::span<const int>()));
    rig_proxy_fd_reply reply{};
    size_t received = 0;
    *reply_fd = -1;
    cr_assert(rig::proxy::receive_message(connection.socket.get(), std::as_writable_bytes(std::span(&reply, 1)),
                                          std::span(reply_fd, 1), &received));
    if (!received) *reply_fd = -1;
    cr_assert(reply.magic == RIG_PROXY_MAGIC_EXPORT_FD);
    return reply;
  }

  // Hands over value of proxy: its waits and parts, as the payload at 0;
  // then a NOP, whose answer follows rigd's answer to the hand-over if it
  // has one (protocol.h: only a hand-over rigd cannot run has one).
  // Answers the hand-over's completion, or RIG_OK where rigd took it.
  rig_proxy_completion hand_over(uint32_t proxy, uint64_t value, const std::vector<rig_proxy_wait> &waits,
                                 const std::vector<rig_proxy_part> &parts) {
    rig_proxy_handover h{static_cast<uint32_t>(waits.size()), static_cast<uint32_t>(parts.size())};
    std::vector<std::byte> bytes(sizeof h);
    std::memcpy(bytes.data(), &h, sizeof h);
    auto w = std::as_bytes(std::span(waits));
    auto p = std::as_bytes(std::span(parts));
    bytes.insert(bytes.end(), w.begin(), w.end());
    bytes.insert(bytes.end(), p.begin(), p.end());
    cr_assert(payload.copy_in(0, bytes));
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_HANDOVER;
    e.device = proxy;
    e.args[0] = value;
    e.payload_offset = 0;
    e.payload_bytes = static_cast<uint32_t>(bytes.size());
    return send_hand_over(e);
  }

  // Hands over value of proxy as a FILL entry (protocol.h): bytes bytes of
  // handle from offset set to byte (its flags), as hand_over answers.
  rig_proxy_completion fill(uint32_t proxy, uint64_t value, uint64_t handle, uint64_t offset, uint64_t bytes,
                            uint16_t byte) {
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_FILL;
    e.flags = byte;
    e.device = proxy;
    e.args[0] = value;
    e.args[1] = handle;
    e.args[2] = offset;
    e.args[3] = bytes;
    return send_hand_over(e);
  }

  // Sends the hand-over e, then a NOP, as hand_over answers.
  rig_proxy_completion send_hand_over(rig_proxy_entry e) {
    e.tag = ++tag;
    cr_assert(submissions.push(e) == rig::proxy::RingStatus::ok);
    rig_proxy_entry nop{};
    nop.opcode = RIG_PROXY_OP_NOP;
    nop.tag = ++tag;
    cr_assert(submissions.push(nop) == rig::proxy::RingStatus::ok);
    rig_proxy_completion c = next_completion();
    if (c.tag == nop.tag) return {e.tag, rig_ok, 0, 0, 0};
    cr_assert(c.tag == e.tag && c.status != rig_ok, "only a hand-over rigd refuses is answered");
    cr_assert(next_completion().tag == nop.tag, "a completion answers each request, in order");
    return c;
  }

  // An image request (protocol.h) on proxy of image id with the payload a
  // rig_proxy_code then tail; why gets what rigd wrote in the code.
  rig_proxy_completion code_request(uint16_t opcode, uint32_t proxy, uint64_t id, std::span<const std::byte> tail,
                                    std::string *why = nullptr) {
    rig_proxy_entry e{};
    e.opcode = opcode;
    e.device = proxy;
    e.args[0] = id;
    return with_code(e, tail, why);
  }

  // Request e, its payload at 0 a rig_proxy_code then tail; why gets what
  // rigd wrote in the code.
  rig_proxy_completion with_code(rig_proxy_entry e, std::span<const std::byte> tail = {},
                                 std::string *why = nullptr) {
    std::vector<std::byte> bytes(sizeof(rig_proxy_code));
    bytes.insert(bytes.end(), tail.begin(), tail.end());
    cr_assert(payload.copy_in(0, bytes));
    e.payload_offset = 0;
    e.payload_bytes = static_cast<uint32_t>(bytes.size());
    rig_proxy_completion c = request(e);
    rig_proxy_code code{};
    cr_assert(payload.copy_out(0, std::as_writable_bytes(std::span(&code, 1))));
    if (why) *why = std::string(code.why, strnlen(code.why, sizeof code.why));
    return c;
  }

  // Loads the image of object on proxy: rigd's answer, value the image's id.
  rig_proxy_completion load_image(uint32_t proxy, std::span<const std::byte> object, std::string *why = nullptr) {
    return code_request(RIG_PROXY_OP_IMAGE_LOAD, proxy, 0, object, why);
  }

  // The id of the function name of image, which must have it.
  uint64_t resolve(uint32_t proxy, uint64_t image, const std::string &name) {
    rig_proxy_completion c = code_request(RIG_PROXY_OP_IMAGE_ENTRY, proxy, image, std::as_bytes(std::span(name)));
    cr_assert(c.status == rig_ok && c.value != 0, "resolve of %s: %d", name.c_str(), c.status);
    return c.value;
  }

  rig_proxy_completion unload(uint64_t image) {
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_IMAGE_UNLOAD;
    e.args[0] = image;
    return request(e);
  }

  // The images rigd holds for its clients on served device `served`.
  int64_t loaded(uint32_t served) { return monitor(RIG_PROXY_OP_LOADED, served); }

  // Whether proxy's word is lost.
  bool lost(uint64_t proxy) const {
    return std::atomic_ref<uint32_t>(const_cast<uint32_t &>(word(proxy)->lost)).load() != 0;
  }

  // Served device i's timeline word in the device segment.
  uint64_t served_word(size_t i) const {
    Mapping<const std::byte> devices(connection.device_segment.get(), PROT_READ);
    rig_proxy_device_segment h;
    std::memcpy(&h, devices.at, sizeof h);
    auto *word = const_cast<uint64_t *>(
        reinterpret_cast<const uint64_t *>(devices.at + h.words_offset + i * RIG_PROXY_CACHE_LINE));
    return std::atomic_ref<uint64_t>(*word).load(std::memory_order_acquire);
  }

  const rig_proxy_word *word(uint64_t proxy) const {
    rig_proxy_completion_segment h;
    std::memcpy(&h, completion_memory.at, sizeof h);
    return reinterpret_cast<const rig_proxy_word *>(completion_memory.at + h.words_offset +
                                                    proxy * RIG_PROXY_WORD_BYTES);
  }

  // Waits until proxy's word reaches value: reads it, then sleeps on the
  // futex of its low half.
  void wait_for(uint64_t proxy, uint64_t value) const {
    const rig_proxy_word *w = word(proxy);
    auto *v = const_cast<uint64_t *>(&w->value);
    for (;;) {
      uint64_t seen = std::atomic_ref<uint64_t>(*v).load(std::memory_order_acquire);
      if (seen >= value) return;
      cr_assert(std::atomic_ref<uint32_t>(const_cast<uint32_t &>(w->lost)).load() == 0, "the proxy is lost");
      rig::proxy::sleep_on_word(v, seen, rings().word_sleepers(), 1000);
    }
  }
};

inline rig_proxy_part copy(uint64_t src, uint64_t src_offset, uint64_t dst, uint64_t dst_offset, uint64_t bytes) {
  return {RIG_PROXY_PART_COPY, 0, {src}, src_offset, dst, dst_offset, bytes, 1, bytes, bytes};
}

// A words part of count writes: the WORD parts that follow it.
inline rig_proxy_part words(uint64_t count) {
  rig_proxy_part p{};
  p.kind = RIG_PROXY_PART_WORDS;
  p.rows = count;
  return p;
}

// A write of a words part: value into the 8 bytes at offset of dst.
inline rig_proxy_part word(uint64_t dst, uint64_t offset, uint64_t value) {
  rig_proxy_part p{};
  p.kind = RIG_PROXY_PART_WORD;
  p.word = value;
  p.dst = dst;
  p.dst_offset = offset;
  return p;
}

// A launch of function over groups x 1 x 1 groups of threads x 1 x 1
// threads, with refs (rig_proxy_ref slots) and params: its slots.
inline std::vector<rig_proxy_part> launch(uint64_t function, uint64_t groups, uint64_t threads,
                                          const std::vector<rig_proxy_ref> &refs, const std::vector<std::byte> &params) {
  rig_proxy_launch l{RIG_PROXY_PART_LAUNCH, static_cast<uint32_t>(params.size()), function, {groups, 1, 1},
                     {threads, 1, 1}, 0, static_cast<uint32_t>(refs.size())};
  size_t slots = 1 + refs.size() + (params.size() + sizeof(rig_proxy_part) - 1) / sizeof(rig_proxy_part);
  std::vector<rig_proxy_part> parts(slots);
  std::memcpy(&parts[0], &l, sizeof l);
  for (size_t j = 0; j < refs.size(); j++) std::memcpy(&parts[1 + j], &refs[j], sizeof refs[j]);
  if (!params.empty()) std::memcpy(&parts[1 + refs.size()], params.data(), params.size());
  return parts;
}

// A ref of kind (RIG_REF_READ = 1, _WRITE = 2) to the bytes bytes of handle
// from offset, at byte at of the parameters.
inline rig_proxy_ref memory_ref(uint32_t kind, uint64_t handle, uint64_t offset, uint64_t bytes, uint64_t at) {
  rig_proxy_ref r{};
  r.kind = RIG_PROXY_PART_REF;
  r.ref_kind = kind;
  r.handle = handle;
  r.offset = offset;
  r.bytes = bytes;
  r.at = at;
  return r;
}

}  // namespace raw
