// A process's connection to rigd (rigd_link.hpp).
#include "rigd_link.hpp"

#include "socket_messages.hpp"

#include <rig/rig.h>

#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

namespace rig::proxy {

namespace {

// How many times a request's wait looks at the completion ring before it
// sleeps: rigd's poller answers within a few microseconds while it spins.
constexpr int answer_spins = 4000;
// A sleeping wait looks at the socket this often, so that rigd's death
// ends it promptly.
constexpr int answer_sleep_ms = 50;
// A hand-over's tag: this bit, which tells rigd's answer to one it refuses
// from a request's, and the proxy's index.  Requests count their tags
// below it.
constexpr uint64_t handover_tag = uint64_t{1} << 63;
// How long a send that finds the ring or the arena full waits between
// looks, once it has spun a while.
constexpr auto full_wait = std::chrono::microseconds(50);

// The forks the process has made since it first connected, counted in each
// child (pthread_atfork), so that a link sees with no system call that it
// is its process's parent's.
std::atomic<unsigned> forks{0};

unsigned fork_count() {
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(nullptr, nullptr, [] { forks.fetch_add(1); }); });
  return forks.load(std::memory_order_relaxed);
}

template <class T>
T *map_segment(int fd, int protection, size_t &bytes) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0) throw HandshakeError("rigd passed a segment that cannot be read");
  bytes = static_cast<size_t>(st.st_size);
  void *p = mmap(nullptr, bytes, protection, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw HandshakeError("rigd passed a segment that cannot be mapped");
  return static_cast<T *>(p);
}

}  // namespace

RigdLink::RigdLink(const std::string &path)
    : path_(path), forks_seen_(fork_count()), connection_(connect_to_rigd(path)) {
  try {
    rings_memory_.at =
        map_segment<std::byte>(connection_.ring_segment.get(), PROT_READ | PROT_WRITE, rings_memory_.bytes);
    completion_memory_.at =
        map_segment<const std::byte>(connection_.completion_segment.get(), PROT_READ, completion_memory_.bytes);
    // The layouts are checked on this process's copies, then trusted.
    if (rings_memory_.bytes < sizeof layout_) throw HandshakeError("rigd's ring segment is too small");
    std::memcpy(&layout_, rings_memory_.at, sizeof layout_);
    if (!valid_ring_segment(layout_, rings_memory_.bytes)) throw HandshakeError("rigd's ring segment is corrupt");
    rig_proxy_completion_segment completion;
    if (completion_memory_.bytes < sizeof completion) throw HandshakeError("rigd's completion segment is too small");
    std::memcpy(&completion, completion_memory_.at, sizeof completion);
    uint64_t room = completion_memory_.bytes;
    if (completion.segment.magic != RIG_PROXY_MAGIC_COMPLETION || completion.words_offset > room ||
        completion.words_offset % RIG_PROXY_CACHE_LINE != 0 ||
        completion.word_count > (room - completion.words_offset) / RIG_PROXY_WORD_BYTES)
      throw HandshakeError("rigd's completion segment is corrupt");
    words_offset_ = completion.words_offset;
    word_count_ = completion.word_count;
    device_memory_.at = map_segment<const std::byte>(connection_.device_segment.get(), PROT_READ, device_memory_.bytes);
    rig_proxy_device_segment devices;
    if (device_memory_.bytes < sizeof devices) throw HandshakeError("rigd's device segment is too small");
    std::memcpy(&devices, device_memory_.at, sizeof devices);
    if (devices.segment.magic != RIG_PROXY_MAGIC_DEVICES || devices.rows_offset > device_memory_.bytes ||
        devices.rows_offset % RIG_PROXY_CACHE_LINE != 0 ||
        devices.row_count > (device_memory_.bytes - devices.rows_offset) / RIG_PROXY_CACHE_LINE)
      throw HandshakeError("rigd's device segment is corrupt");
    rows_offset_ = devices.rows_offset;
    row_count_ = devices.row_count;
  } catch (...) {
    if (rings_memory_.at) munmap(rings_memory_.at, rings_memory_.bytes);
    if (completion_memory_.at) munmap(const_cast<std::byte *>(completion_memory_.at), completion_memory_.bytes);
    if (device_memory_.at) munmap(const_cast<std::byte *>(device_memory_.at), device_memory_.bytes);
    throw;
  }
  RingSegment rings(rings_memory_.at, layout_);
  submissions_ = std::make_unique<RingProducer<rig_proxy_entry>>(rings.submission_producer());
  completions_ = std::make_unique<RingConsumer<rig_proxy_completion>>(rings.completion_consumer());
  payload_ = std::make_unique<PayloadArena>(rings.payload());
  payload_space_ = std::make_unique<PayloadSpace>(layout_.payload_bytes, layout_.submission_entries);
  word_sleepers_ = rings.word_sleepers();
}

RigdLink::~RigdLink() {
  delete why_.load();
  munmap(rings_memory_.at, rings_memory_.bytes);
  munmap(const_cast<std::byte *>(completion_memory_.at), completion_memory_.bytes);
  munmap(const_cast<std::byte *>(device_memory_.at), device_memory_.bytes);
}

void RigdLink::share_handle(uint64_t handle) {
  Guard g(shared_mu_);
  shared_handles_.insert(handle);
  any_shared_.store(true, std::memory_order_release);
}

void RigdLink::forget_handle(uint64_t handle) {
  Guard g(shared_mu_);
  shared_handles_.erase(handle);
  any_shared_.store(!shared_handles_.empty(), std::memory_order_release);
}

bool RigdLink::shares(uint64_t handle) const {
  // The hot path of a process that shares nothing takes no lock.
  if (!any_shared_.load(std::memory_order_acquire)) return false;
  Guard g(shared_mu_);
  return shared_handles_.count(handle) != 0;
}

const rig_proxy_shared_row *RigdLink::shared_row(uint64_t r) const noexcept {
  if (r >= row_count_) return nullptr;
  return reinterpret_cast<const rig_proxy_shared_row *>(device_memory_.at + rows_offset_ + r * RIG_PROXY_CACHE_LINE);
}

int RigdLink::find(const std::string &name) const noexcept {
  for (size_t i = 0; i < devices().size(); ++i)
    if (name == devices()[i].name) return static_cast<int>(i);
  return -1;
}

const rig_proxy_word *RigdLink::word(uint32_t i) const noexcept {
  return reinterpret_cast<const rig_proxy_word *>(completion_memory_.at + words_offset_ +
                                                  uint64_t{i} * RIG_PROXY_WORD_BYTES);
}

uint32_t RigdLink::word_index(const uint64_t *value) const noexcept {
  auto offset = reinterpret_cast<const std::byte *>(value) - (completion_memory_.at + words_offset_);
  return static_cast<uint32_t>(static_cast<uint64_t>(offset) / RIG_PROXY_WORD_BYTES);
}

void RigdLink::mark_lost(const std::string &why) {
  if (why_.load(std::memory_order_acquire)) return;
  auto *first = new std::string(why);
  const std::string *none = nullptr;
  if (!why_.compare_exchange_strong(none, first, std::memory_order_acq_rel)) delete first;
}

void RigdLink::close_connection() {
  mark_lost("the job is closed");
  // The descriptor stays open until the link goes, so that no call racing
  // with the close uses another file's number.
  shutdown(connection_.socket.get(), SHUT_RDWR);
}

bool RigdLink::forked() const noexcept { return forks.load(std::memory_order_relaxed) != forks_seen_; }

bool RigdLink::lost(std::string *why) {
  if (!why_.load(std::memory_order_acquire)) {
    if (forked()) {
      if (why) *why = "the connection to rigd belongs to the process that made it, not to this child";
      return true;
    }
    pollfd p{connection_.socket.get(), POLLRDHUP, 0};
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR))) mark_lost("rigd closed the connection");
  }
  const std::string *reason = why_.load(std::memory_order_acquire);
  if (!reason) return false;
  if (why) *why = *reason;
  return true;
}

void RigdLink::check_live() {
  std::string why;
  if (lost(&why)) throw LinkLost(why);
}

void RigdLink::check_known_live() {
  if (why_.load(std::memory_order_acquire) || forked()) check_live();
}

bool RigdLink::answers_hand_over(const rig_proxy_completion &answer) noexcept {
  // rigd marked the proxy's word lost, with why, before it answered.
  return (answer.tag & handover_tag) != 0;
}

rig_proxy_completion RigdLink::await(uint64_t tag) {
  int spins = 0;
  for (;;) {
    rig_proxy_completion answer;
    RingStatus status = completions_->pop(answer);
    if (status == RingStatus::ok) {
      if (answer.tag == tag) return answer;
      if (answers_hand_over(answer)) continue;
      mark_lost("rigd answered a request the process did not make");
    } else if (status == RingStatus::breach) {
      mark_lost("rigd broke the rings' protocol");
    } else if (++spins < answer_spins) {
      spin_turn(spins);
      continue;
    } else {
      completions_->sleep(answer_sleep_ms);
    }
    check_live();
  }
}

void RigdLink::wait_turn(int turn) {
  // rigd's poller is draining the ring: it runs while the ring has entries.
  if (turn < answer_spins) {
    spin_turn(static_cast<unsigned>(turn));
  } else {
    check_live();
    std::this_thread::sleep_for(full_wait);
  }
}

uint32_t RigdLink::send(rig_proxy_entry &entry, std::span<const std::byte> payload) {
  if (payload.size() > layout_.payload_bytes) throw std::length_error("a request's payload exceeds rigd's arena");
  for (int turn = 0;; turn++) {
    // The first look trusts the head last read, which leaves room nearly
    // always: the line rigd writes as it releases entries stays its own.
    uint32_t next = 0, released = 0;
    RingStatus status = submissions_->look(next, released, turn > 0);
    if (status == RingStatus::breach) {
      mark_lost("rigd broke the rings' protocol");
      check_live();
    }
    std::optional<uint64_t> offset;
    if (status == RingStatus::ok && (payload.empty() || (offset = payload_space_->place(next, payload.size(), released)))) {
      if (offset) {
        payload_->copy_in(*offset, payload);
        entry.payload_offset = static_cast<uint32_t>(*offset);
        entry.payload_bytes = static_cast<uint32_t>(payload.size());
      }
      if (submissions_->push(entry, false) == RingStatus::ok) return next;
      mark_lost("rigd broke the rings' protocol");
      check_live();
    }
    wait_turn(turn);
  }
}

void RigdLink::await_taken(uint32_t n) {
  for (int turn = 0;; turn++) {
    uint32_t next = 0, released = 0;
    if (submissions_->look(next, released) == RingStatus::breach) {
      mark_lost("rigd broke the rings' protocol");
      check_live();
    }
    // Entry n is released once released - n - 1 is below 2^31 (ring.hpp).
    if (static_cast<uint32_t>(released - n - 1) < (uint32_t{1} << 31)) return;
    wait_turn(turn);
  }
}

rig_proxy_completion RigdLink::request(rig_proxy_entry entry, std::span<const std::byte> payload,
                                      std::span<std::byte> reply) {
  Guard g(mu_);
  check_known_live();
  entry.tag = ++tag_;
  send(entry, payload);
  rig_proxy_completion answer = await(entry.tag);
  // No other payload is placed while mu_ is held: the bytes are the request's.
  if (!reply.empty() && reply.size() <= payload.size()) payload_->copy_out(entry.payload_offset, reply);
  return answer;
}

void RigdLink::hand_over(rig_proxy_entry entry, std::span<const std::byte> payload, bool until_taken) {
  Guard g(mu_);
  check_known_live();
  // Answers to refused hand-overs: taken in here, so that they never fill
  // the completion ring.
  rig_proxy_completion answer;
  RingStatus status;
  while ((status = completions_->pop(answer)) == RingStatus::ok)
    if (!answers_hand_over(answer)) mark_lost("rigd answered a request the process did not make");
  if (status == RingStatus::breach) mark_lost("rigd broke the rings' protocol");
  check_known_live();
  entry.tag = handover_tag | entry.device;
  uint32_t n = send(entry, payload);
  if (until_taken) await_taken(n);
}

void RigdLink::ask_socket(std::span<const std::byte> request, int fd, std::span<std::byte> reply, uint32_t magic,
                          int *reply_fd) {
  int received_fd = -1;
  size_t received = 0;
  bool answered =
      send_message(connection_.socket.get(), request, fd >= 0 ? std::span<const int>(&fd, 1) : std::span<const int>()) &&
      receive_message(connection_.socket.get(), reply, std::span(&received_fd, 1), &received);
  uint32_t reply_magic = 0;
  if (answered) std::memcpy(&reply_magic, reply.data(), sizeof reply_magic);
  if (!received) received_fd = -1;
  if (!answered || reply_magic != magic) {
    if (received_fd >= 0) close(received_fd);
    mark_lost("rigd closed the connection");
    check_live();
  }
  if (reply_fd)
    *reply_fd = received_fd;
  else if (received_fd >= 0)
    close(received_fd);
}

namespace {

// A socket reply's reason, where it gives one, into *why.
template <class Reply>
void why_of(const Reply &reply, std::string *why) {
  size_t length = strnlen(reply.why, sizeof reply.why);
  if (why && reply.status != RIG_OK && length) *why = "rigd: " + std::string(reply.why, length);
}

}  // namespace

uint64_t RigdLink::share_arena(int fd, uint64_t bytes, std::string *why) {
  Guard g(mu_);
  check_live();
  rig_proxy_arena_request r{RIG_PROXY_MAGIC_ARENA, 0, bytes};
  rig_proxy_arena_reply reply{};
  ask_socket(std::as_bytes(std::span(&r, 1)), fd, std::as_writable_bytes(std::span(&reply, 1)), RIG_PROXY_MAGIC_ARENA);
  why_of(reply, why);
  return reply.status == RIG_OK ? reply.handle : 0;
}

int RigdLink::export_fd(uint64_t token, std::string *why) {
  Guard g(mu_);
  check_live();
  rig_proxy_fd_request r{RIG_PROXY_MAGIC_EXPORT_FD, RIG_PROXY_FD_OF_EXPORT, token};
  rig_proxy_fd_reply reply{};
  int fd = -1;
  ask_socket(std::as_bytes(std::span(&r, 1)), -1, std::as_writable_bytes(std::span(&reply, 1)),
             RIG_PROXY_MAGIC_EXPORT_FD, &fd);
  why_of(reply, why);
  if (reply.status != RIG_OK && fd >= 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

uint64_t RigdLink::token_of_fd(int fd) {
  Guard g(mu_);
  check_live();
  rig_proxy_fd_request r{RIG_PROXY_MAGIC_EXPORT_FD, RIG_PROXY_EXPORT_OF_FD, 0};
  rig_proxy_fd_reply reply{};
  ask_socket(std::as_bytes(std::span(&r, 1)), fd, std::as_writable_bytes(std::span(&reply, 1)),
             RIG_PROXY_MAGIC_EXPORT_FD);
  return reply.status == RIG_OK ? reply.token : 0;
}

}  // namespace rig::proxy
