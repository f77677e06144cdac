// The workers that take back the instances nothing holds any more.  The
// last hold of an instance may go on any thread (a client's poller that
// frees an import of another client's memory, rigd's shutdown as the
// exports end), and taking it back waits for the work its client left on
// it, which that client's configuration may make as slow as it likes: a
// worker waits instead.  The wait is rig_point_wait's, which watches the
// device's hang clock, its faults and the devices its queues wait on, so
// that work which can never finish loses its device and the instance
// returns; each release under way has a worker of its own, up to
// max_release_workers, so that one device that never finishes holds up no
// other release.
#pragma once

#include <rig/rig.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
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

// The most workers at once; past them, releases wait for a free worker.
// Few: each keeps its stack for the life of rigd, and only a device that
// never finishes (or is slow past its hang bound) holds one for long.
constexpr size_t max_release_workers = 4;

class Releases {
 public:
  // finish waits for a release's work (or its device's loss) and takes it
  // back, on a worker.
  explicit Releases(std::function<void(Release &)> finish);
  // Waits for every release to finish, then ends the worker.
  ~Releases();
  Releases(const Releases &) = delete;
  Releases &operator=(const Releases &) = delete;

  // Hands r to a worker; never waits for its device.  noexcept: an
  // Instance's destructor calls it; where even the list of releases cannot
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
  bool finished() const noexcept { return waiting_.empty() && finishing_.empty(); }  // under mu_

  std::function<void(Release &)> finish_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Release> waiting_;             // for a free worker
  std::vector<rig_device_t *> finishing_;   // a worker's, until taken back
  size_t idle_workers_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // last: they start once the rest is made
};

}  // namespace rigd
