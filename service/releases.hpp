// The worker that takes back the instances nothing holds any more.  The
// last hold of an instance may go on any thread (a client's poller that
// frees an import of another client's memory, rigd's shutdown as the
// exports end), and taking it back waits for the work its client left on
// it, which that client's configuration may make as slow as it likes: the
// worker waits instead, for every instance at once, so that no thread of
// another client's, and no shutdown past its deadline, waits on a client's
// device.
#pragma once

#include <rig/rig.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rigd {

// An instance's device that nothing holds: taken back once its work is done.
struct Release {
  rig_device_t *device;
  size_t served;       // the index of its served device
  std::string config;  // the configuration it was opened with
  bool reusable;
  uint64_t taken_at;   // rig_submitted as its client took it
};

class Releases {
 public:
  // finish takes back a release whose work is done (or whose device is
  // lost): on the worker, one at a time.
  explicit Releases(std::function<void(Release &)> finish);
  // Waits for every release to finish, then ends the worker.
  ~Releases();
  Releases(const Releases &) = delete;
  Releases &operator=(const Releases &) = delete;

  // Hands r to the worker; never waits for its device.  noexcept: an
  // Instance's destructor calls it; where even the worker's list cannot
  // grow, r is finished here, waiting.
  void add(Release r) noexcept;

  // Waits until every release handed over has finished, or deadline;
  // answers whether they all did.  finish_all waits with no deadline.
  bool finish_by(std::chrono::steady_clock::time_point deadline);
  void finish_all();

  // The names of the devices whose release waits for their work now.
  std::vector<std::string> waiting() const;

 private:
  void run();
  bool finished() const noexcept { return waiting_.empty() && finishing_ == 0; }  // under mu_
  // Whether r's device has done its client's work, or is lost.
  static bool done(const Release &r) noexcept;

  std::function<void(Release &)> finish_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Release> waiting_;
  size_t finishing_ = 0;  // taken out of waiting_ and not finished yet
  bool stopping_ = false;
  std::thread worker_;  // last: it starts once the rest is made
};

}  // namespace rigd
