// One end of a connection of a link (ucx_link.hpp): active messages, both
// ways, and the peer's registered memory (ucx_memory.hpp).
//
// Order: on one endpoint, the receiving link calls handlers in the order
// the sender's send() calls posted their messages (sends from several
// threads: the order in which they took the endpoint), and a message's data
// has landed, in the buffer its handler placed, before the next message's
// handler runs.  UCX 1.13 alone does not give the second half: it calls the
// receive callback of a rendezvous message (UCP_AM_RECV_ATTR_FLAG_RNDV)
// when its header arrives and lands its data later (ucp_am_recv_data_nbx),
// after the following messages' callbacks may have run (with four senders
// on one endpoint, 4824 of 10,000 messages arrived so).  The first half
// ucp.h does not promise at all (over TCP, one lane, none of those 10,000
// arrived out of sending order).  So each message carries a sequence
// number (8 bytes, host order: both ends are little-endian) and the
// receiver delivers them one by one from a reorder point, holding those
// that come early or after a rendezvous still landing (stats() counts
// both).
//
// Failure: the first error of the connection (UCX's error callback, a
// silent peer past the failure bound, or a message the link cannot hand
// over: no handler for its id, a placed buffer too small, a handler that
// threw; a peer past the reorder point's bound, UcxHeldBound) fails the
// endpoint once, with the
// message "the link to HOST:PORT failed: <UCX's reason>"; the failure
// handler hears it once, every send, put and get pending then ends with it,
// and every later one fails at once with it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <ucp/api/ucp.h>

#include "ucx_arrival.hpp"
#include "ucx_result.hpp"

namespace rig::net {

class UcxEndpoint;
class UcxRemoteRegion;
struct UcxRegionKey;
namespace detail {
class UcxCore;
}

// A message as its handler sees it: the bytes stay valid during the call.
struct UcxMessage {
  UcxEndpoint &from;
  uint16_t id;
  std::span<const std::byte> header;
  std::span<const std::byte> data;
};

// What the link does with messages of one id.  Both run on the link's
// progress thread, which they must not block, and from which no send, put
// or get can run (those fail there: they would wait on that thread).
struct UcxHandler {
  // Optional: where the data of a message lands, given its header and
  // length; the span must have at least that many bytes and stay valid
  // until deliver runs.  Without it, the data lands in the link's memory
  // (or stays in UCX's receive buffer) for the time of deliver.
  std::function<std::span<std::byte>(UcxEndpoint &from, std::span<const std::byte> header, size_t length)> place;
  std::function<void(const UcxMessage &message)> deliver;
};

// The most the reorder point holds for an endpoint: messages that came
// before one sent earlier, or while an earlier one's data lands, and the
// bytes of their headers and eager data (UCX's memory, or the link's).  A
// peer that passes either fails its endpoint: a sender that skips a
// sequence number would otherwise have every later message held for good.
struct UcxHeldBound {
  size_t messages = 4096;
  uint64_t bytes = uint64_t{64} << 20;
};

// How often the receiver's reorder point held a message.
struct UcxEndpointStats {
  uint64_t delivered = 0;        // messages handed to their handler
  uint64_t out_of_order = 0;     // arrived before a message sent earlier
  uint64_t behind_landing = 0;   // arrived while an earlier one's data landed
};

class UcxEndpoint : public std::enable_shared_from_this<UcxEndpoint> {
 public:
  ~UcxEndpoint();
  UcxEndpoint(const UcxEndpoint &) = delete;
  UcxEndpoint &operator=(const UcxEndpoint &) = delete;

  // "HOST:PORT" of the other end.
  const std::string &peer() const { return peer_; }

  // Sets the handler that hears the endpoint's failure, once, on the
  // progress thread (or at once, here, if it has failed already).
  void on_failure(std::function<void(const std::string &message)> handler);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // Fails the endpoint now, as a peer's error would ("... failed: Request
  // canceled (why)"), closing its connection: its pending
  // sends, puts, gets and landings end with it, so that no thread that
  // holds the endpoint keeps the connection open.  Any thread outside
  // UCX's callbacks.
  void abort(const std::string &why);
  // The failure's message; empty while the endpoint works.
  std::string failure() const;

  // Sends (id, header, data) and waits until UCX has completed it: both
  // buffers may be reused; a rendezvous (large data) completes once the
  // peer has fetched the data, an eager message once UCX has copied it
  // out.  Other threads' sends on the endpoint proceed meanwhile.
  UcxStatus send(uint16_t id, std::span<const std::byte> header, std::span<const std::byte> data);
  // The largest header send takes: UCX's bound on an active message's
  // header, less the link's frame.
  size_t largest_header() const;

  // The peer's registered memory that key describes (UcxMemory::key()).
  UcxResult<std::unique_ptr<UcxRemoteRegion>> open_region(const UcxRegionKey &key);

  UcxEndpointStats stats() const;

  // Sets the reorder point's bound (UcxHeldBound's defaults until then),
  // from any thread; it applies to messages that arrive from then on.
  void bound_held(UcxHeldBound bound) noexcept;

  // From a handler's place, on the progress thread: owner stays alive until
  // the message placed has landed and been delivered (or failed), so that
  // the span place gave stays valid where the handler's owner lets go of
  // the memory meanwhile.
  void keep_while_landing(std::shared_ptr<const void> owner) { keep_ = std::move(owner); }

 private:
  friend class detail::UcxCore;
  friend class UcxLink;
  friend class UcxRemoteRegion;
  struct Passkey {};

 public:
  // The link's own (a connect or an accept).
  UcxEndpoint(Passkey, std::shared_ptr<detail::UcxCore> core, ucp_ep_h ep, std::string peer);

 private:
  struct Landing;

  // What the other parts run on the endpoint, on the progress thread
  // alone: the first three outside UCX's callbacks, note_arrival in one.
  void arrive(detail::UcxArrival arrival);
  void deliver_ready();
  void beat(int64_t now_ns);
  // Counts a message that arrives while a rendezvous still lands.
  void note_arrival();
  // Gives UCX back the data of messages held (also in the destructor).
  void drop_held();
  // What arrival holds of the reorder point's bytes while it waits there.
  static uint64_t held_bytes(const detail::UcxArrival &arrival) noexcept;
  // Any thread: something came from the peer.
  void heard(int64_t now_ns) { last_heard_ns_.store(now_ns, std::memory_order_relaxed); }
  // Fails the endpoint with UCX's reason (and details after it); any thread
  // outside UCX's callbacks.
  void fail(ucs_status_t status, const std::string &details);
  void close();
  // Posts one operation under the send lock and waits for it: post returns
  // what UCX's *_nbx call did.  what names the operation in messages.
  UcxStatus run_blocking(const std::string &what,
                         const std::function<ucs_status_ptr_t(ucp_ep_h, ucp_request_param_t)> &post);

  std::shared_ptr<detail::UcxCore> core_;
  const std::string peer_;

  // The UCX endpoint, null once closed; the lock orders posts (sequence
  // numbers with them) against the close.
  std::mutex send_mutex_;
  ucp_ep_h ep_;
  uint64_t next_send_seq_ = 0;

  std::atomic<bool> failed_{false};
  mutable std::mutex failure_mutex_;
  std::string failure_;
  std::function<void(const std::string &)> failure_handler_;

  std::atomic<int64_t> last_heard_ns_;

  // The reorder point (progress thread only).
  std::map<uint64_t, detail::UcxArrival> arrived_;
  uint64_t next_deliver_seq_ = 0;
  uint64_t highest_arrived_ = 0;
  uint64_t held_bytes_ = 0;  // of arrived_'s messages
  std::atomic<size_t> held_messages_max_{UcxHeldBound{}.messages};
  std::atomic<uint64_t> held_bytes_max_{UcxHeldBound{}.bytes};
  std::unique_ptr<Landing> landing_;
  std::shared_ptr<const void> keep_;  // keep_while_landing's, until the placing ends

  std::atomic<uint64_t> delivered_{0};
  std::atomic<uint64_t> out_of_order_{0};
  std::atomic<uint64_t> behind_landing_{0};
};

}  // namespace rig::net
