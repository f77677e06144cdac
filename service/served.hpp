// The devices rigd serves, the device segment that shows their progress
// to every client, and their instances, which run the clients' work.
#pragma once

#include "config.hpp"
#include "protocol.h"
#include "releases.hpp"
#include "segments.hpp"
#include "waiters.hpp"

#include <rig/rig.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rigd {

class ServedDevices;

// An instance of a served device for one client (rig_open of NAME~TAG): a
// device of its own, with its own timeline, memory and faults, so that a
// fault in the work one client submitted loses that client's proxies only.
// Once nothing holds it (the client's proxies, memory allocated on it, and
// other clients' imports of that memory), it goes back to its served
// device (ServedDevices::open_instance) once its work is done, which
// rigd's release worker waits for (releases.hpp): whatever thread lets go
// last waits for nothing.
class Instance {
 public:
  // reusable: whether it may serve a later client once this one let go.
  Instance(rig_device_t *device, size_t served, std::string config, bool reusable,
           const ServedDevices &owner) noexcept;
  ~Instance();
  Instance(const Instance &) = delete;
  Instance &operator=(const Instance &) = delete;

  rig_device_t *device() const noexcept { return release_.device; }
  // The index of the served device it is an instance of.
  size_t served() const noexcept { return release_.served; }
  // The configuration it was opened with (rig_open's).
  const std::string &config() const noexcept { return release_.config; }

 private:
  Release release_;  // what goes back to the served device
  const ServedDevices &owner_;
};

class ServedDevices {
 public:
  // Opens the devices named, or by default every device of the host's
  // drivers that opens but the host, memory and sim devices, and MEM:0 and
  // MEM:1 where none does; then, last and always, the machine's host,
  // served as CPU, whose work runs on a memory device of rigd's (MEM:host)
  // since rig's host runs launches only.  Each served device and each
  // instance keeps at most cache_limit bytes cached (rig_set_cache_limit),
  // and so do its proxies (their records say so).  The device segment
  // holds shared_rows rows of the shared-buffer table.  Throws
  // std::runtime_error with rig's reason if a named device does not open.
  explicit ServedDevices(const std::vector<std::string> &names, int64_t cache_limit = default_cache_limit_bytes,
                         uint32_t shared_rows = default_shared_rows);
  // Waits for the instances' releases, then closes the idle instances and
  // the served devices; every Instance has gone back before.
  ~ServedDevices();
  ServedDevices(const ServedDevices &) = delete;
  ServedDevices &operator=(const ServedDevices &) = delete;

  size_t size() const noexcept { return devices_.size(); }
  rig_device_t *device(size_t i) const noexcept { return devices_[i].get(); }
  const std::vector<rig_proxy_device_record> &records() const noexcept { return records_; }
  const Segment &segment() const noexcept { return *segment_; }

  // Returns every served device's cached memory to its driver (rig_free_cache).
  void free_caches() const noexcept;

  // An instance of served device i opened with config (rig_open's): an
  // idle one, which an earlier client left with its work done, its memory
  // returned and no fault, else a new one, named NAME~n; NULL where none
  // opens (rig_last_error says why).  Taking idle instances again bounds
  // what rigd keeps of instances by the clients connected at once, not by
  // every client that ever came: rig keeps a device's record for the
  // process's life, even once it is closed.  An instance that is not
  // reusable (a CUDA context of its client's alone) is closed once its
  // client let go, never kept idle.
  std::shared_ptr<Instance> open_instance(size_t i, const std::string &config, bool reusable = true) const;

  // n bytes of memory of kind for a client's work on instance, as *out, a
  // buffer on the instance: the served device's own memory borrowed on the
  // instance where the instance maps it (*served_own), so that the
  // instance's loss poisons only what its unreached work wrote, as for any
  // device's loss (LMEM-10), and not all of the memory it holds, which
  // other clients may import (LMEM-06); else the instance's own memory.
  // The served device's budget bounds the first, the instance's the
  // second.  Answers as rig_buffer_create.
  rig_status_t create(const Instance &instance, int64_t n, rig_memory_t kind, rig_buffer_t **out,
                      bool *served_own) const;

  // Whether create of n bytes on instance finds room in the budget that
  // bounds it now, and so runs no reclamation.  A reclamation of the served
  // device's budget waits for the work of every client whose memory it
  // released there (rig_buffer_create's rounds): as slow as that client's
  // device, which must never hold up a poller.
  bool has_room(const Instance &instance, int64_t n) const noexcept;

  // A create that runs on a waiter thread of its own (create_waiting).
  class Creating {
   public:
    // Waits up to wait for create to return; true, with its answer, once
    // it has (the buffer is then the caller's).
    bool answer(std::chrono::milliseconds wait, rig_status_t *status, rig_buffer_t **out, bool *served_own);
    // The caller no longer waits: the buffer, made or to be made, is let go.
    void abandon() noexcept;

   private:
    friend class ServedDevices;
    // Stores create's answer; where abandoned, lets b go and answers false.
    bool finish(rig_status_t status, rig_buffer_t *b, bool served_own) noexcept;
    std::mutex mu_;
    std::condition_variable done_;
    bool finished_ = false, abandoned_ = false, served_own_ = false;
    rig_status_t status_ = RIG_OK;
    rig_buffer_t *buffer_ = nullptr;
  };
  // create on a waiter thread, which holds instance until it returns: for
  // a create that may reclaim (!has_room).  Throws std::system_error where
  // no thread can be made.
  std::shared_ptr<Creating> create_waiting(std::shared_ptr<Instance> instance, int64_t n, rig_memory_t kind) const;

  // The bytes allocated on served device i and on its instances, live and
  // idle (rig_allocated of each).
  int64_t allocated(size_t i) const;
  // Served device i's instances: held by clients, and idle.
  size_t instances(size_t i) const;

  // Waits until every waiting create has returned, and every instance that
  // went back has finished its release (its work done: idle or closed), or
  // deadline; answers whether all did.
  bool finish_releases(std::chrono::steady_clock::time_point deadline) const {
    return waiters_.finish_by(deadline) && releases_.finish_by(deadline);
  }
  // The names of the instances still held, or whose release waits for
  // their work: what rigd abandons where it ends before they are done.
  std::vector<std::string> busy() const;

  // Counts one more value done on device i in its word of the device
  // segment, release order.  Any thread may call it.
  void publish_progress(size_t i) const noexcept;

  // The rows of the shared-buffer table in the device segment (protocol.h).
  uint32_t shared_rows() const noexcept { return shared_rows_; }
  rig_proxy_shared_row *shared_row(uint32_t r) const noexcept;

 private:
  // Closed as rigd ends (rig_close waits for their work).
  struct Close {
    void operator()(rig_device_t *d) const noexcept { rig_close(d); }
  };
  friend class Instance;
  // Takes back an instance that nothing holds, its work done (releases_):
  // idle with its memory returned, or closed where it is lost, not
  // reusable, or where max_idle_instances of its served device are idle
  // already.
  void take_back(Release &r) const noexcept;

  struct Idle {
    rig_device_t *device;
    std::string config;
  };
  int64_t cache_limit_;
  uint32_t shared_rows_;
  std::vector<std::unique_ptr<rig_device_t, Close>> devices_;
  std::vector<rig_proxy_device_record> records_;
  std::unique_ptr<Segment> segment_;
  mutable std::mutex instances_mu_;
  mutable std::vector<std::vector<std::weak_ptr<Instance>>> instances_;  // by served device
  mutable std::vector<std::vector<Idle>> idle_;                       // by served device
  mutable std::vector<uint64_t> opened_;  // instances opened, by served device: their names
  // The waiting creates' threads; each holds an instance until it ends.
  mutable Waiters waiters_;
  // Last: its worker, which takes instances back, ends first.
  mutable Releases releases_{[this](Release &r) { take_back(r); }};
};

}  // namespace rigd
