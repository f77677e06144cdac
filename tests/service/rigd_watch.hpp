// What a test of rigd under attack watches of the rigd process it started:
// its descriptors, threads and memory from /proc, whether it is up, and a
// connected client's round trips.  Its checks fail the calling Criterion
// test: use it in the test's process only.
#pragma once

#include "raw_client.hpp"

#include <criterion/criterion.h>

#include <sys/types.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace watch {

// How long rigd's counts may take to come back once the attackers go: a
// bound, not a wait (a count that comes back ends it), generous enough
// for a ThreadSanitizer build on a loaded machine, where 5 s once fell
// short of rigd closing 100 peers.
inline constexpr int settle_ms = 20000;

// The entries of /proc/PID/fd.
inline long descriptors_of(pid_t pid) {
  long n = 0;
  for ([[maybe_unused]] const auto &entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
    ++n;
  return n;
}

// The number of pid's /proc status line key (such as "Threads:", or
// "VmSize:" in kB), -1 where it has none.
inline long status_of(pid_t pid, const std::string &key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string word;
  long value = -1;
  while (status >> word) {
    if (word == key) {
      status >> value;
      break;
    }
  }
  return value;
}

inline long threads_of(pid_t pid) { return status_of(pid, "Threads:"); }

// Polls count until it answers expected, for at most settle_ms; answers
// the last seen.
template <class Count>
long settles_at(long expected, Count count) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(settle_ms);
  long seen = count();
  while (seen != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    seen = count();
  }
  return seen;
}

inline bool alive(pid_t pid) {
  int status;
  return waitpid(pid, &status, WNOHANG) == 0;
}

// The median of a few NOP round trips of client, in milliseconds: one
// turn of a loaded host's scheduler does not decide it.
inline double round_trip_ms(raw::Client &client) {
  std::vector<double> took;
  for (uint64_t i = 0; i < 21; ++i) {
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_NOP;
    e.args[0] = i;
    auto start = std::chrono::steady_clock::now();
    rig_proxy_completion c = client.request(e);
    took.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    cr_assert(c.status == raw::rig_ok && c.value == i, "a NOP answers its argument");
  }
  std::nth_element(took.begin(), took.begin() + 10, took.end());
  return took[10];
}

}  // namespace watch
