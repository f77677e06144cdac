// Threads that wait on clients' devices off every poller: each runs one
// piece of work that may wait as long as another client's device makes it
// (an allocation whose reclamation waits for that device's work to
// retire), and is counted, so that what the work uses outlives it and
// rigd's shutdown can bound its wait (finish_by).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>

namespace rigd {

class Waiters {
 public:
  Waiters() = default;
  // Waits until every thread has ended.
  ~Waiters();
  Waiters(const Waiters &) = delete;
  Waiters &operator=(const Waiters &) = delete;

  // Runs work on a thread of its own, which ends with it.  Throws
  // std::system_error where no thread can be made, work not run.
  void run(std::function<void()> work);

  // Waits until every thread has ended, or deadline; answers whether all
  // did.
  bool finish_by(std::chrono::steady_clock::time_point deadline);
  // The threads running now.
  size_t running() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable ended_;
  size_t running_ = 0;
};

}  // namespace rigd
