// What rigd does for each entry of a client's submission ring.
#pragma once

#include "client_counters.hpp"
#include "client_images.hpp"
#include "client_objects.hpp"
#include "completions.hpp"
#include "config.hpp"
#include "contexts.hpp"
#include "exports.hpp"
#include "handover.hpp"
#include "protocol.h"
#include "ring.hpp"
#include "served.hpp"

#include <rig/rig.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rigd {

class Requests {
 public:
  // proxy_limit: the words of the client's completion segment; client:
  // the client's number, which owns its exports; user: the client's user,
  // whose imports of tokens Exports bounds; policy: whether the client's
  // opens may set test knobs (test_knobs.hpp), its quota, whether rigd
  // loads its host code (host_code) and which clients' instances of a CUDA
  // device share a context (cuda_contexts); counters: what the client's
  // requests count (client_counters.hpp), which must outlive them.
  Requests(const ServedDevices &served, Exports &exports, uint64_t client, uid_t user, ClientObjects &objects,
           Completions &completions, rig::proxy::PayloadArena payload, uint32_t proxy_limit,
           const Policy &policy, ClientCounters &counters) noexcept
      : served_(served), exports_(exports), client_(client), user_(user), objects_(objects),
        completions_(completions), payload_(payload), proxy_limit_(proxy_limit), policy_(policy),
        counters_(counters), trust_(user_domain(user)), current_(served.size()),
        images_(objects, policy.host_code) {}

  // The trust domain (contexts.hpp) of the client's CUDA contexts, its
  // user's unless set: a remote client's is its key's.
  void set_trust_domain(std::string domain) { trust_ = std::move(domain); }
  // The client is another machine's (ClientImages::serve_remote_client).
  void serve_remote_client() noexcept { images_.serve_remote_client(); }
  // The payload arena of the entries handle reads from now on: a remote
  // session's own memory, sized to each message.
  void use_payload(rig::proxy::PayloadArena payload) noexcept { payload_ = payload; }

  // Lets go of the allocation that waits, if any, and refunds its bytes.
  ~Requests();
  Requests(const Requests &) = delete;
  Requests &operator=(const Requests &) = delete;

  // Runs the request entry, rigd's own copy of a ring entry, and answers
  // whether it has a completion, which it writes to answer: RIG_EINVAL with
  // nothing done for an entry that breaks protocol.h's format or names what
  // the client does not hold.  A hand-over rigd takes has none, and an
  // allocation that waits (waiting()) has none yet.
  bool handle(const rig_proxy_entry &entry, rig_proxy_completion &answer);

  // Whether entry may run now: not a hand-over of a proxy whose served
  // device holds RIG_PROXY_VALUES_IN_FLIGHT of the client's values not done
  // yet (protocol.h).  One that may not waits, in its slot, for await_room.
  bool has_room(const rig_proxy_entry &entry) const noexcept;
  // Waits up to wait for has_room of entry.
  void await_room(const rig_proxy_entry &entry, std::chrono::milliseconds wait);

  // Whether an allocation waits for room on a waiter thread: one that a
  // full served device's reclamation would make wait for other clients'
  // work (ServedDevices::has_room), which must not hold up the poller.
  bool waiting() const noexcept { return creating_ != nullptr; }
  // Waits up to wait for that allocation; true, its completion in answer,
  // once it is done.
  bool finish_waiting(std::chrono::milliseconds wait, rig_proxy_completion &answer);

  // Returns to their drivers the cached memory of the devices the
  // client's proxies run on, its instances and the served devices whose
  // memory they borrow, as the client goes idle.
  void release_caches() const noexcept;

 private:
  struct Proxy {
    size_t device;        // the served device's index
    uint64_t handed = 0;  // the last value handed over
    bool failed = false;  // its word is lost: it takes no more hand-overs
    std::shared_ptr<Instance> instance;  // the client's instance of the device
  };
  // An OPEN's configuration (its payload) is at most this long.
  static constexpr uint32_t max_config_bytes = 4096;

  // ALLOCATED's count `what` (protocol.h's rig_proxy_count) for served
  // device `device`.
  rig_status_t count(size_t device, uint64_t what, uint64_t *value) const;
  // Logs why rigd refuses the entry (a limit's refusal), writes it into
  // the entry's payload where it has room for a rig_proxy_code, and
  // answers RIG_ENOMEM.
  rig_status_t refuse(const rig_proxy_entry &entry, const std::string &why);
  // Writes why into the rig_proxy_code at the start of the entry's payload.
  void tell(const rig_proxy_entry &entry, const std::string &why);
  rig_status_t open(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  // Logs why rigd refuses an OPEN, writes it into the entry's
  // rig_proxy_code where its flags say it has one, and answers RIG_EOPEN.
  rig_status_t refuse_open(const rig_proxy_entry &entry, const std::string &why);
  // The instance of served device `device` for a new proxy opened with
  // config: the client's current one while it is not lost, else a new one
  // (in the CUDA context of the client's trust domain); NULL, with *why,
  // where it does not open, or the current one has other config.
  std::shared_ptr<Instance> instance_for(size_t device, const std::string &config, std::string *why);
  rig_status_t alloc(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  // The rest of an allocation once its buffer is made (status): zeroed
  // and the client's, or refunded.
  rig_status_t allocated(rig_status_t status, rig_buffer_t *b, bool served_own, int64_t n, uint32_t proxy,
                         rig_proxy_completion &answer);
  rig_status_t map_peer(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  rig_status_t hand_over(const rig_proxy_entry &entry);
  rig_status_t run_hand_over(const rig_proxy_entry &entry, uint32_t proxy);
  rig_status_t export_bytes(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  rig_status_t import_bytes(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  // The image requests (protocol.h); each writes why it refuses into the
  // rig_proxy_code at the start of its payload.
  rig_status_t image_request(const rig_proxy_entry &entry, rig_proxy_completion &answer);
  rig_status_t load_image(const rig_proxy_entry &entry, rig_proxy_completion &answer, std::string *why);
  // Where a load's image is: the payload's bytes after its rig_proxy_code
  // (*memory NULL), or the first args[1] bytes of the memory args[0] names
  // (*memory a new reference to it); *n its bytes.  false where they are
  // not there.
  bool image_source(const rig_proxy_entry &entry, uint64_t *n, rig_buffer_t **memory);
  // Counts a hand-over rigd took: its waits and its parts by kind.
  void count_hand_over() noexcept;

  const ServedDevices &served_;
  Exports &exports_;
  uint64_t client_;
  uid_t user_;
  ClientObjects &objects_;
  Completions &completions_;
  rig::proxy::PayloadArena payload_;
  uint32_t proxy_limit_;
  const Policy &policy_;
  ClientCounters &counters_;
  std::string trust_;
  std::vector<Proxy> proxies_;
  // By served device: the client's instance that its next proxies use.
  std::vector<std::shared_ptr<Instance>> current_;
  // A hand-over's scratch, kept from one to the next.
  Handover work_;
  HeldParts held_;
  std::string refused_;  // why the last hand-over was refused
  std::vector<rig_point_t> waits_, points_;
  TouchedRows touched_;
  ClientImages images_;
  // The allocation that waits (waiting()): its create, and its entry's
  // proxy, bytes and tag.
  std::shared_ptr<ServedDevices::Creating> creating_;
  uint32_t creating_proxy_ = 0;
  int64_t creating_bytes_ = 0;
  uint64_t creating_tag_ = 0;
};

}  // namespace rigd
