// The transport of the link to other machines (rig-remote-proxy.txt,
// rigd --listen), over UCX's libucp: a link is a UCP context and one worker
// with a progress thread of its own; it listens on and connects to
// "HOST:PORT" (ucx_listener.hpp), carries active messages on its endpoints
// (ucx_endpoint.hpp) and moves bytes by RMA between registered memory
// (ucx_memory.hpp).  Every call of this API is thread-safe and returns its
// failure as a value (ucx_result.hpp); nothing in it throws.
//
// Teardown: destroying the UcxLink closes its endpoints (their sends then
// fail at once), destroys its listeners and stops its progress thread; the
// worker and the context go when the last endpoint, region or registered
// memory the owner still holds goes.
//
// Failure bound (UcxOptions::failure_bound, B): UCX 1.13 over TCP does not
// see a peer that stops answering while its kernel still does (a process
// SIGSTOPped or wedged): its keepalive over TCP (uct_tcp_ep_check) is a
// one-way message, and the kernel acknowledges the stopped process's TCP
// keepalive probes.  A cut cable is seen by TCP's keepalive only while no
// data is in flight, and UCX 1.13 sets no TCP_USER_TIMEOUT for the rest.
// So the link keeps its own: each endpoint sends a heartbeat every B/4 and
// fails, with UCS_ERR_ENDPOINT_TIMEOUT's reason, when nothing (heartbeat,
// message or landed rendezvous) has come from its peer for B.  A peer that
// stops answering is therefore reported between B and B + B/4 after the
// last thing it sent.  A peer that dies (its process killed, its host
// answering with a reset) is reported as soon as its kernel closes the
// connection, in milliseconds (UCX 1.13 over TCP gives the reason
// UCS_ERR_ENDPOINT_TIMEOUT for that too; a refused connect, at once,
// UCS_ERR_NOT_CONNECTED).  The link also sets UCX's own detection
// inside the bound through ucp_config_modify: KEEPALIVE_INTERVAL = B/4 and
// the TCP transport's TCP_KEEPIDLE = B/2, TCP_KEEPINTVL = B/8 and
// TCP_KEEPCNT = 3 (at least 1 s each: the kernel counts seconds), which
// catch a silent host on an idle connection by themselves.  B must exceed
// the time the link's largest message takes on the wire, and the owner's
// handlers must not block for B.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <sys/types.h>

#include "ucx_result.hpp"

namespace rig::net {

class UcxEndpoint;
class UcxListener;
class UcxMemory;
struct UcxHandler;
namespace detail {
class UcxCore;
}

struct UcxOptions {
  // UCX's transports, as a UCX_TLS value ("tcp", "rc,sm"); empty leaves
  // UCX's own choice (or the UCX_TLS of the environment).
  std::string transports;
  // B above: how long a silent peer may take to be reported as failed.
  std::chrono::milliseconds failure_bound{10000};
};

// Called on the link's progress thread with each endpoint a listener
// accepts; the owner keeps the endpoint (dropping it closes it).
using UcxAcceptHandler = std::function<void(std::shared_ptr<UcxEndpoint>)>;

class UcxLink {
 public:
  // A context (UCP_FEATURE_AM, RMA and WAKEUP), a worker that any thread
  // may use (UCS_THREAD_MODE_MULTI) and its progress thread.
  static UcxResult<std::unique_ptr<UcxLink>> create(const UcxOptions &options);
  // Not from the link's own handlers (it joins their thread).
  ~UcxLink();
  UcxLink(const UcxLink &) = delete;
  UcxLink &operator=(const UcxLink &) = delete;

  // Registers the handler of messages of id on every endpoint of the link,
  // replacing an earlier one.  Register before connecting or listening: a
  // message for an id with no handler fails its endpoint.
  void on_message(uint16_t id, UcxHandler handler);

  // Listens on "HOST:PORT" (port 0: one the system picks, which the
  // listener tells); accept runs with each connection.
  UcxResult<std::unique_ptr<UcxListener>> listen(const std::string &address, UcxAcceptHandler accept);
  // Connects to a listener at "HOST:PORT", waiting until the connection is
  // up; a refused, unreachable or silent address (no answer within the
  // failure bound) fails with the address and UCX's reason.
  UcxResult<std::shared_ptr<UcxEndpoint>> connect(const std::string &address);
  // Registers [base, base + length) for the peers' puts and gets.
  UcxResult<std::unique_ptr<UcxMemory>> map(void *base, size_t length);

  // The kernel's id of the progress thread (for /proc/self/task/TID).
  pid_t progress_thread_id() const;

 private:
  explicit UcxLink(std::shared_ptr<detail::UcxCore> core);
  std::shared_ptr<detail::UcxCore> core_;
};

}  // namespace rig::net
