// What one client does in rigd, counted where the admin channel reads it
// at no cost to the client's hot path: each counter has one writer at a
// time (the thread that serves that part of the client, or one that holds
// the lock of the structure the count belongs to), which stores with a
// relaxed store, never a read-modify-write; a snapshot reads them with
// relaxed loads, from another thread, while the session lives.
#pragma once

#include "user_clients.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace rigd {

// A count that one thread at a time moves.
class Counter {
 public:
  void add(uint64_t n) noexcept { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  void subtract(uint64_t n) noexcept { add(~n + 1); }
  void set(uint64_t n) noexcept { v_.store(n, std::memory_order_relaxed); }
  uint64_t read() const noexcept { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// What the client does with one served device.
struct UseCounters {
  Counter instances;  // opened for the client (the poller's)
  Counter bytes;      // device memory it holds (under ClientObjects' lock)
  Counter queued;     // values not done (under Completions' lock)
  Counter busy_ns;    // its values' time waiting for their work (the device's completion thread)
  Counter faults;     // its proxies lost (under Completions' lost lock)
};

struct ClientCounters {
  // command: the client's /proc/PID/comm as it connected (Peer's).
  ClientCounters(uint64_t id, pid_t pid, uid_t uid, std::string command, size_t devices);

  // Who the client is, fixed as it connects.
  const uint64_t id;
  const pid_t pid;
  const uid_t uid;
  const std::string command;  // /proc/PID/comm, "" where it cannot be read
  const int64_t connected_ns; // CLOCK_REALTIME

  // What the client holds, by kind: its Account's, under UserClients' lock.
  UserClients::Counts held{};

  // The poller's.
  Counter images, submissions, copies, copied_bytes, fills, launches, waits;
  // Under Completions' lost lock.
  Counter faults;
  const size_t devices;
  std::unique_ptr<UseCounters[]> uses;

  // The reason of the client's last loss.
  void lost(const std::string &why);
  std::string last_loss() const;

 private:
  mutable std::mutex loss_mu_;
  std::string last_loss_;
};

}  // namespace rigd
