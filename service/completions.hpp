// The completion thread of a client: it waits for the points of the values
// the client's proxies handed over and raises each proxy's word in the
// completion segment as its values are done.
#pragma once

#include "protocol.h"
#include "served.hpp"

#include <rig/rig.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace rigd {

class Completions {
 public:
  // words: the completion segment's words, a line each; proxies index them.
  Completions(std::byte *words, const ServedDevices &served);
  // Waits for every value handed over, then ends the thread.
  ~Completions();
  Completions(const Completions &) = delete;
  Completions &operator=(const Completions &) = delete;

  // Sets a new proxy's word to value, the value its timeline starts after.
  void start(uint32_t proxy, uint64_t value);

  // proxy's value is the work of points on served device `device`: once
  // every point is reached, and every earlier value of any proxy is done,
  // the thread raises the proxy's word to value (release order) and wakes
  // its futex waiters.  A point a lost device never reaches marks the
  // proxy's word lost, and it moves no more.
  void expect(uint32_t proxy, size_t device, uint64_t value, std::vector<rig_point_t> points);

  // Marks proxy's word lost now, for work rigd could not hand to its
  // served device, and wakes its waiters.
  void fail(uint32_t proxy);

  // The points of proxy's values up to value that are not done yet.
  std::vector<rig_point_t> pending(uint32_t proxy, uint64_t value) const;

 private:
  struct Value {
    uint32_t proxy;
    size_t device;
    uint64_t value;
    std::vector<rig_point_t> points;
  };

  void run();
  static bool reached(const std::vector<rig_point_t> &points);
  // Raises proxy's word to value where its points were reached (done), else marks
  // it lost; publishes the device's progress and wakes the word's waiters.
  void raise(uint32_t proxy, size_t device, uint64_t value, bool done);
  rig_proxy_word *word(uint32_t proxy) const noexcept;

  std::byte *words_;
  const ServedDevices &served_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Value> values_;  // in the order handed over; the front is being waited for
  bool ending_ = false;
  std::thread thread_;
};

}  // namespace rigd
