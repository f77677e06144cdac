// A process's connection to rigd, as its proxy driver uses it: the
// handshake's socket and segments mapped, and requests through the rings
// (protocol.h).  Every proxy of the connection shares it.
#pragma once

#include "handshake.hpp"
#include "payload_space.hpp"
#include "protocol.h"
#include "rig_internal/locks.hpp"
#include "ring_segment.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace rig::proxy {

// The connection is lost: rigd closed it, broke the rings' protocol, or
// this is a child of the process that connected.  what() says which.
struct LinkLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RigdLink {
 public:
  // Connects to the rigd listening at path; throws HandshakeError with the
  // reason it cannot.
  explicit RigdLink(const std::string &path);
  ~RigdLink();
  RigdLink(const RigdLink &) = delete;
  RigdLink &operator=(const RigdLink &) = delete;

  const std::string &path() const noexcept { return path_; }
  const std::vector<rig_proxy_device_record> &devices() const noexcept { return connection_.devices; }
  // The served device rigd names name, or -1.
  int find(const std::string &name) const noexcept;

  // Sends the request, its payload copied into the payload arena, and
  // answers rigd's completion; reply, where not empty, gets the payload's
  // first bytes as they are once rigd has answered (what rigd wrote back,
  // protocol.h's rig_proxy_code).  One request runs at a time.  Throws
  // LinkLost once the connection is lost.
  rig_proxy_completion request(rig_proxy_entry entry, std::span<const std::byte> payload = {},
                               std::span<std::byte> reply = {});

  // Sends the hand-over of value entry.args[0] of proxy entry.device, its
  // payload copied into the payload arena, and returns once it is in the
  // ring, or with until_taken once rigd has taken it (released its entry):
  // rigd answers only a hand-over it cannot run, once it has marked the
  // proxy's word lost with why.  Waits otherwise only while the ring or the
  // arena is full.  Throws LinkLost once the connection is lost.
  void hand_over(rig_proxy_entry entry, std::span<const std::byte> payload, bool until_taken);

  // The most bytes a request's payload may have.
  uint64_t payload_bytes() const noexcept { return layout_.payload_bytes; }

  // Passes rigd the bytes bytes of the memfd fd as a host arena and answers
  // its handle, or 0 where rigd refuses it, with rigd's reason in *why
  // where it gives one (a limit's: rigd(8)).  Throws LinkLost.
  uint64_t share_arena(int fd, uint64_t bytes, std::string *why = nullptr);

  // A new descriptor (close-on-exec, the caller's) naming token, an export
  // of this client's, or -1 where rigd refuses, its reason in *why where it
  // gives one.  Throws LinkLost.
  int export_fd(uint64_t token, std::string *why = nullptr);
  // The token of the export fd names (one export_fd made, in any client of
  // this rigd), or 0 where it names none.  Throws LinkLost.
  uint64_t token_of_fd(int fd);

  // Row r of the shared-buffer table (protocol.h), or NULL past the table.
  const rig_proxy_shared_row *shared_row(uint64_t r) const noexcept;

  // The handles of memory other processes share (exported or imported),
  // whose hand-overs wait until rigd takes them.
  void share_handle(uint64_t handle);
  void forget_handle(uint64_t handle);
  bool shares(uint64_t handle) const;

  // The timeline word of the client's proxy i (i below words()).
  const rig_proxy_word *word(uint32_t i) const noexcept;
  uint32_t words() const noexcept { return word_count_; }
  // The client's sleepers word in the ring segment (protocol.h).
  uint32_t *word_sleepers() const noexcept { return word_sleepers_; }
  // The index of the proxy whose word's value lies at value.
  uint32_t word_index(const uint64_t *value) const noexcept;

  // Whether the connection is lost: rigd closed its end or broke the
  // rings' protocol, or this process is not the one that connected.  Reads
  // the socket's state without blocking; why gets the reason.
  bool lost(std::string *why = nullptr);
  // Closes the connection (rig_machine_close): the link is lost with "the
  // job is closed", unless it was lost before, and rigd sees the client
  // gone.
  void close_connection();

  // Whether this process is a child of the one that connected (after
  // fork), which the link does not serve.
  bool forked() const noexcept;

 private:
  template <class T>
  struct Mapped {
    T *at = nullptr;
    size_t bytes = 0;
  };
  void mark_lost(const std::string &why);
  // Throws LinkLost once the link is known lost, reading memory only: the
  // hot path's check.  lost() also asks the socket.
  void check_known_live();
  void check_live();  // throws LinkLost; asks the socket
  // Sends a request of the socket's (protocol.h), fd attached where it is
  // not -1, and receives rigd's reply with its magic, *reply_fd (where not
  // NULL) the descriptor attached to it or -1.  Throws LinkLost, marking
  // the link lost, where the socket fails or the reply is not of magic.
  void ask_socket(std::span<const std::byte> request, int fd, std::span<std::byte> reply, uint32_t magic,
                  int *reply_fd = nullptr);
  rig_proxy_completion await(uint64_t tag);  // with mu_ held
  // Whether a completion answers a hand-over: nothing to take from it, since
  // the proxy's word says the rest.
  static bool answers_hand_over(const rig_proxy_completion &answer) noexcept;
  // With mu_ held: puts entry and its payload into the ring, waiting while
  // either has no room, and answers the entry's number.
  uint32_t send(rig_proxy_entry &entry, std::span<const std::byte> payload);
  // With mu_ held: waits until rigd has released entry number n.
  void await_taken(uint32_t n);
  // With mu_ held: one turn of a wait for rigd (spins a while, then sleeps
  // a little, and checks the link).
  void wait_turn(int turn);

  std::string path_;
  unsigned forks_seen_;  // the process's forks when it connected (a child counts one more)
  ServiceConnection connection_;
  Mapped<std::byte> rings_memory_;
  Mapped<const std::byte> completion_memory_;
  Mapped<const std::byte> device_memory_;
  uint64_t rows_offset_ = 0;
  uint32_t row_count_ = 0;
  rig_proxy_ring_segment layout_{};
  uint64_t words_offset_ = 0;
  uint32_t word_count_ = 0;
  std::unique_ptr<RingProducer<rig_proxy_entry>> submissions_;
  std::unique_ptr<RingConsumer<rig_proxy_completion>> completions_;
  std::unique_ptr<PayloadArena> payload_;
  std::unique_ptr<PayloadSpace> payload_space_;
  uint32_t *word_sleepers_ = nullptr;
  // The link's locks are counted (locks.hpp): a handler that runs while
  // one is held and calls rig is refused, so the proxy's queue calls need
  // no signal mask.
  mutable Mutex shared_mu_;
  std::unordered_set<uint64_t> shared_handles_;  // under shared_mu_
  std::atomic<bool> any_shared_{false};          // shared_handles_ is not empty
  Mutex mu_;  // one request at a time, and the socket's messages
  uint64_t tag_ = 0;
  // Why the link is lost, set once (the first reason stays) and freed with
  // the link; none while it is not known lost.  No lock: a wait reads it.
  std::atomic<const std::string *> why_{nullptr};
};

}  // namespace rig::proxy
