// The completion threads of a client, one for each served device it uses:
// each waits for the points of the values the client's proxies of that
// device handed over, and raises each proxy's word in the completion
// segment as its values are done.  A slow device holds back no other
// device's values.  A remote client's session (remote_session.hpp) hears
// each raise and loss through hooks: its words are rigd's own memory, and
// its link carries them (REPORT, FAILURE).
#pragma once

#include "client_counters.hpp"
#include "protocol.h"
#include "served.hpp"
#include "shared_rows.hpp"

#include <rig/rig.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rigd {

// Hears a client's words move, beside their memory: raised just before
// the word of proxy, of served device `device`, shows value (each
// device's values in order; a value that waits for another's is raised
// after it), lost once with the why of its proxy's first failure.  Either
// may be empty; each runs on the thread that moves the word, and may
// block it.
struct CompletionHooks {
  std::function<void(uint32_t proxy, size_t device, uint64_t value)> raised;
  std::function<void(uint32_t proxy, const std::string &why)> lost;
};

class Completions {
 public:
  // words: the completion segment's word_count words (rig_proxy_word);
  // proxies index them.
  // sleepers: the client's sleepers word (protocol.h), which says whether a
  // raised word needs a wake.  counters (which must outlive it) count the
  // client's values queued, their time waiting for their work, and its
  // losses; who: the client, as its faults' log lines name it.
  // hooks hear the words move (CompletionHooks), and must outlive the
  // completions' threads.
  Completions(std::byte *words, uint32_t word_count, const uint32_t *sleepers, const ServedDevices &served,
              ClientCounters &counters, std::string who, CompletionHooks hooks = {});
  // Waits for every value handed over, then ends the threads.
  ~Completions();
  Completions(const Completions &) = delete;
  Completions &operator=(const Completions &) = delete;

  // Sets a new proxy's word to value, the value its timeline starts after.
  void start(uint32_t proxy, uint64_t value);

  // Starts the thread that waits for served device `device`'s values,
  // where none runs yet; a proxy's open calls it, so that a system out of
  // threads refuses the open rather than a value already running.  Throws
  // std::system_error, and changes nothing, where no thread starts.
  void open_lane(size_t device);

  // proxy's value is the work of points on served device `device`, after
  // the values `after` of other proxies of the client: once every point is
  // reached, every value handed over earlier on that device is done, and
  // the words of `after` show their values (so that the client never sees
  // a value done before one it waits for, whose device's thread may raise
  // it a moment later), the device's thread (open_lane's) raises the proxy's word to
  // value and wakes its sleepers; where all that is so already, expect
  // raises it itself.  A point a lost device never reaches, or a lost word
  // of `after`, marks the proxy's word lost, and it moves no more.
  // Its work ends, done or failed, in the rows it touched.
  void expect(uint32_t proxy, size_t device, uint64_t value, const std::vector<rig_point_t> &points,
              const std::vector<rig_proxy_wait> &after, const TouchedRows &rows);

  // Marks proxy's word lost now, with why (a proxy's first failure's why
  // stays, and is logged), and wakes its waiters: for work rigd could not
  // hand to its served device (device, the proxy's), and for work that
  // failed there.
  void fail(uint32_t proxy, size_t device, const std::string &why);

  // Whether served device `device`'s lane holds fewer values than
  // RIG_PROXY_VALUES_IN_FLIGHT, so that a hand-over on it may run now:
  // past that many, the client's next hand-over waits (protocol.h), and
  // rigd holds no more of its values.  Called by the thread that calls
  // expect, for a device open_lane opened.
  bool has_room(size_t device) const noexcept;
  // Waits up to wait for has_room of device.
  void await_room(size_t device, std::chrono::milliseconds wait);

  // Appends to points those of proxy's latest value up to value that is
  // not done yet, which say every earlier one's: a value's points, as
  // expect is given them, include those of the values it follows (its
  // proxy's earlier ones and those it waits for, found here), and a lane
  // raises its values in order.  Looks at the lanes' latest values first,
  // so that a proxy that hands over faster than its device completes costs
  // no more per hand-over as its values queue up.  Called by the thread
  // that calls expect, as expect is the only one that queues values.
  void pending(uint32_t proxy, uint64_t value, std::vector<rig_point_t> &points) const;

 private:
  struct Value {
    uint32_t proxy;
    size_t device;
    uint64_t value;
    std::vector<rig_point_t> points;
    std::vector<rig_proxy_wait> after;
    TouchedRows rows;
  };

  // The values handed over on one served device, in order, and the thread
  // that waits for them.
  struct Lane {
    std::deque<Value> values;  // the front is being waited for
    std::atomic<size_t> held{0};  // values.size(), read without the lock
    std::condition_variable changed;
    std::condition_variable drained;  // a full lane has room again
    std::thread thread;
  };

  void run(Lane &lane);
  static bool reached(const std::vector<rig_point_t> &points);
  // Whether every word of after shows its value (shown), or one is lost.
  enum class Shown { yes, not_yet, lost };
  Shown shown(const std::vector<rig_proxy_wait> &after) const noexcept;
  // Raises proxy's word to value, or marks it lost where its work failed
  // (failed says why); publishes the device's progress and wakes the
  // word's waiters.
  void raise(uint32_t proxy, size_t device, uint64_t value, const char *failed);
  rig_proxy_word *word(uint32_t proxy) const noexcept;

  std::byte *words_;
  const uint32_t *sleepers_;
  const ServedDevices &served_;
  ClientCounters &counters_;
  std::string who_;
  CompletionHooks hooks_;
  mutable std::mutex mu_;
  std::mutex lost_mu_;  // marking a word lost: one why each
  // Each word's lost, as rigd stored it, in rigd's own memory: a raise
  // reads this, not the word's line, which the client reads as it waits
  // and which a read of rigd's would fetch back (about 85 ns of a 660 ns
  // round trip on a 2-core virtual machine) before the raise's store.
  std::vector<std::atomic<bool>> lost_;
  std::vector<std::unique_ptr<Lane>> lanes_;  // by served device, made by open_lane
  std::atomic<size_t> queued_{0};             // values in the lanes, for pending
  bool ending_ = false;
};

}  // namespace rigd
