// The inside of a link (ucx_link.hpp): the UCP context, its worker, the
// progress thread and what the thread does between UCX's callbacks.
//
// UCX's callbacks run inside ucp_worker_progress, under the worker's lock,
// while other threads post sends holding an endpoint's send lock and then
// waiting for the worker's lock.  So a callback takes no lock but the leaf
// ones here and only records what happened; the progress thread acts on
// it (handlers, failures, closes, accepts) between calls of
// ucp_worker_progress.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sys/types.h>

#include <ucp/api/ucp.h>

#include "ucx_arrival.hpp"
#include "ucx_endpoint.hpp"
#include "ucx_link.hpp"
#include "ucx_listener.hpp"
#include "ucx_result.hpp"

namespace rig::net::detail {

// The UCX active message ids of the link's frames.
inline constexpr unsigned kUcxMessageAm = 1;
inline constexpr unsigned kUcxHeartbeatAm = 2;

int64_t ucx_now_ns();

class UcxCore : public std::enable_shared_from_this<UcxCore> {
 public:
  static UcxResult<std::shared_ptr<UcxCore>> create(const UcxOptions &options);
  ~UcxCore();  // tear_down within the failure bound

  // Shuts down (closes waiting at most close_ns), then destroys the worker
  // and the context, once: by the destructor, or as the process exits for
  // a core still alive then.  Never in the child of a fork, whose parent's
  // threads it does not have, nor on the progress thread, which cannot
  // join itself: UCX's state then stays as it is.
  void tear_down(int64_t close_ns);

  ucp_context_h context() const { return context_; }
  ucp_worker_h worker() const { return worker_; }
  const UcxOptions &options() const { return options_; }
  int64_t bound_ns() const { return std::chrono::nanoseconds(options_.failure_bound).count(); }
  // UCX's bound on an active message's header, the link's frame included.
  size_t largest_am_header() const { return largest_am_header_; }

  // Closes the endpoints, destroys the listeners, stops the thread; the
  // closes get the failure bound, or close_ns, to finish.
  void shutdown() { shutdown_within(bound_ns()); }
  void shutdown_within(int64_t close_ns);
  bool shut_down() const { return stopping_.load(std::memory_order_acquire); }
  bool on_progress_thread() const { return std::this_thread::get_id() == thread_.get_id(); }
  pid_t progress_thread_id() const { return thread_tid_.load(std::memory_order_acquire); }
  // Wakes the progress thread after a post from another thread.
  void wake() { ucp_worker_signal(worker_); }

  void set_handler(uint16_t id, UcxHandler handler);
  std::shared_ptr<const UcxHandler> handler(uint16_t id) const;

  // Endpoints, by their UCX handle.  Events of a handle not yet added wait
  // while a connect is under way (begin_connect to end_connect): the
  // progress thread may see a new endpoint before connect adds it.
  void begin_connect();
  void end_connect();
  void add_endpoint(const std::shared_ptr<UcxEndpoint> &endpoint, ucp_ep_h ep);
  void remove_endpoint(ucp_ep_h ep);
  // Closes ep later, on the progress thread (an endpoint dropped there).
  void close_later(ucp_ep_h ep);
  // Forces ep closed and waits (off the progress thread).
  void close_now(ucp_ep_h ep);

  // For listeners: keeps their state as long as the core (UCX may call
  // back with it until the worker goes) and queues their connections.
  void keep_listener(std::shared_ptr<UcxListener::State> state);
  void queue_connection(UcxListener::State *listener, ucp_conn_request_h request);

  // Gives UCX back the data it kept for an arrival.
  void release(const UcxArrival &arrival);

  // The progress thread alone, in callbacks: an endpoint's data landed.
  void mark_ready(std::shared_ptr<UcxEndpoint> endpoint) { ready_.push_back(std::move(endpoint)); }

  // UCX's callbacks (arg: the core).
  static void on_error(void *arg, ucp_ep_h ep, ucs_status_t status);
  static ucs_status_t on_message(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                 const ucp_am_recv_param_t *param);
  static ucs_status_t on_heartbeat(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                   const ucp_am_recv_param_t *param);

 private:
  UcxCore(const UcxOptions &options, ucp_context_h context, ucp_worker_h worker, size_t largest_am_header,
          int event_fd, int stop_fd);
  UcxStatus start();
  void run();
  // One round between UCX's progress calls; true if it did anything.
  bool act();
  void beat();
  std::shared_ptr<UcxEndpoint> find(ucp_ep_h ep);
  void accept(UcxListener::State *listener, ucp_conn_request_h request);

  struct Event {
    ucp_ep_h ep;
    bool failure;         // else an arrival
    ucs_status_t status;  // of a failure
    UcxArrival arrival;
  };
  struct Connection {
    UcxListener::State *listener;
    ucp_conn_request_h request;
  };

  const UcxOptions options_;
  ucp_context_h context_;
  ucp_worker_h worker_;
  const size_t largest_am_header_;
  const int event_fd_;
  const int stop_fd_;
  const pid_t pid_;  // the process that made it
  bool torn_down_ = false;
  std::thread thread_;
  std::atomic<pid_t> thread_tid_{0};
  std::atomic<bool> stopping_{false};

  mutable std::mutex handlers_mutex_;
  std::unordered_map<uint16_t, std::shared_ptr<const UcxHandler>> handlers_;

  // Leaf lock of the endpoints' table and of what callbacks record.
  std::mutex mutex_;
  std::unordered_map<ucp_ep_h, std::weak_ptr<UcxEndpoint>> endpoints_;
  int connects_ = 0;
  std::vector<Event> events_;
  std::vector<Connection> connections_;
  std::vector<ucp_ep_h> to_close_;
  std::vector<std::shared_ptr<UcxListener::State>> listeners_;
  std::atomic<int> closing_{0};  // closes posted, not yet done

  // The progress thread's own.
  std::vector<std::shared_ptr<UcxEndpoint>> ready_;
  int64_t next_beat_ns_ = 0;
};

}  // namespace rig::net::detail
