// What a remote client hears of its values (rigd --listen): each device's
// REPORT v once every value up to v is done, after the BYTES of every GET
// of those values (PROXY-03, PROXY-37, PROXY-81).
#pragma once

#include "client_objects.hpp"
#include "machine_channel.hpp"

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace rigd {

class RemoteReports {
 public:
  // objects holds each GET's staging memory; connection carries the
  // messages.  Both must outlive it.
  RemoteReports(ClientObjects &objects, rig::net::AgentConnection &connection, size_t devices)
      : objects_(objects), connection_(connection), gets_(devices) {
    spares_.reserve(kSpares);  // keep_spare never allocates
  }
  ~RemoteReports();
  RemoteReports(const RemoteReports &) = delete;
  RemoteReports &operator=(const RemoteReports &) = delete;

  // A GET of value `value` of account `device`, part `part` of its
  // hand-over: its bytes lie in the client's host memory `staging`, whose
  // handle it takes, once the value is done.  Before the value's hand-over
  // goes to rig, which may report it done at once.
  void expect_get(uint32_t device, uint64_t value, uint32_t part, uint64_t staging);

  // Every value of account `device` up to value is done: sends the BYTES
  // of their GETs, in order, then REPORT.  On the thread that raised the
  // value; false where the link failed.
  bool report(uint32_t device, uint64_t value);

  // A GET's staging memory of exactly bytes bytes whose BYTES went already,
  // taken (the caller's reference), or NULL: the next GET of that size
  // stages in it, its pages mapped already, where new memory of 64 MiB
  // faults in 16,384 pages first.  At most kSpares, from kLeastSpare
  // bytes on, are kept.
  rig_buffer_t *take_spare(uint64_t bytes);

 private:
  static constexpr size_t kSpares = 2;
  static constexpr uint64_t kLeastSpare = uint64_t{1} << 20;

  struct Get {
    uint64_t value;
    uint32_t part;
    uint64_t staging;
  };
  // Sends the staging memory's bytes of get, and lets it go.
  bool send_bytes(uint32_t device, const Get &get);
  // Keeps staging (the caller's reference) as a spare, or lets it go.
  void keep_spare(rig_buffer_t *staging);

  ClientObjects &objects_;
  rig::net::AgentConnection &connection_;
  std::mutex mu_;
  std::vector<std::deque<Get>> gets_;  // by account, in value order
  std::vector<rig_buffer_t *> spares_;   // under mu_
};

}  // namespace rigd
