#include "ucx_core.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <vector>

#include "ucx_request.hpp"

namespace rig::net::detail {
namespace {

std::string ucx_reason(const std::string &what, ucs_status_t status) {
  return what + ": " + ucs_status_string(status);
}

// A time option in the form UCX parses, at least min_ms.
std::string ucx_time(std::chrono::milliseconds value, int64_t min_ms) {
  return std::to_string(std::max<int64_t>(value.count(), min_ms)) + "ms";
}

// The UCX configuration of options (ucx_link.hpp states the bound).
UcxStatus configure(ucp_config_t *config, const UcxOptions &options) {
  const auto bound = options.failure_bound;
  std::vector<std::pair<std::string, std::string>> values = {{"KEEPALIVE_INTERVAL", ucx_time(bound / 4, 1)}};
  // The TCP transport's fields, by their names in its table (UCX warns of
  // those no transport takes, so only where TCP may be one).
  const std::string &tls = options.transports;
  if (tls.empty() || tls.find("tcp") != std::string::npos || tls == "all" || tls[0] == '^') {
    values.emplace_back("KEEPIDLE", ucx_time(bound / 2, 1000));
    values.emplace_back("KEEPINTVL", ucx_time(bound / 8, 1000));
    values.emplace_back("KEEPCNT", "3");
  }
  if (!tls.empty()) values.emplace_back("TLS", tls);
  for (const auto &[name, value] : values) {
    const ucs_status_t status = ucp_config_modify(config, name.c_str(), value.c_str());
    if (status != UCS_OK) return UcxStatus::failure(ucx_reason("UCX refused " + name + "=" + value, status));
  }
  return UcxStatus::success();
}

// The cores of this process, which its exit tears down.  It lives for the
// process, so that a core destroyed by any static destructor finds it.
struct LiveCores {
  std::mutex mutex;
  std::vector<UcxCore *> cores;
  bool exit_registered = false;
};
LiveCores &live() {
  static auto *cores = new LiveCores();
  return *cores;
}

// Runs at exit, before UCX's libraries run their destructors: a core left
// alive (a machine lives for the process) would still have UCX's async
// thread reading the tables those destructors free.  The process is
// ending: each close gets a moment, not the failure bound.
void tear_down_at_exit() {
  constexpr int64_t kExitCloseNs = 200'000'000;
  std::lock_guard lock(live().mutex);
  for (UcxCore *core : live().cores) core->tear_down(kExitCloseNs);
}

}  // namespace

int64_t ucx_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

UcxResult<std::shared_ptr<UcxCore>> UcxCore::create(const UcxOptions &options) {
  if (options.failure_bound.count() < 100)
    return UcxStatus::failure("a failure bound of " + std::to_string(options.failure_bound.count()) +
                              " ms is under the least, 100 ms");
  ucp_config_t *config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) return UcxStatus::failure(ucx_reason("reading UCX's configuration failed", status));
  UcxStatus configured = configure(config, options);
  if (!configured.ok()) {
    ucp_config_release(config);
    return configured;
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  ucp_context_h context = nullptr;
  status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (status != UCS_OK) return UcxStatus::failure(ucx_reason("ucp_init failed", status));

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_MULTI;
  ucp_worker_h worker = nullptr;
  status = ucp_worker_create(context, &worker_params, &worker);
  if (status != UCS_OK) {
    ucp_cleanup(context);
    return UcxStatus::failure(ucx_reason("ucp_worker_create failed", status));
  }
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE | UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
  status = ucp_worker_query(worker, &attr);
  int event_fd = -1;
  if (status == UCS_OK && attr.thread_mode != UCS_THREAD_MODE_MULTI)
    status = UCS_ERR_UNSUPPORTED;  // a UCX built without --enable-mt
  if (status == UCS_OK) status = ucp_worker_get_efd(worker, &event_fd);
  const int stop_fd = status == UCS_OK ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
  if (status != UCS_OK || stop_fd < 0) {
    const std::string why = status != UCS_OK ? ucx_reason("the UCX worker offers no multi-threaded event fd", status)
                                             : std::string("eventfd failed: ") + std::strerror(errno);
    ucp_worker_destroy(worker);
    ucp_cleanup(context);
    return UcxStatus::failure(why);
  }
  std::shared_ptr<UcxCore> core(new UcxCore(options, context, worker, attr.max_am_header, event_fd, stop_fd));
  {
    LiveCores &l = live();
    std::lock_guard lock(l.mutex);
    l.cores.push_back(core.get());
    if (!l.exit_registered) l.exit_registered = std::atexit(tear_down_at_exit) == 0;
  }
  UcxStatus started = core->start();
  if (!started.ok()) return started;
  return core;
}

UcxCore::UcxCore(const UcxOptions &options, ucp_context_h context, ucp_worker_h worker, size_t largest_am_header,
                 int event_fd, int stop_fd)
    : options_(options),
      context_(context),
      worker_(worker),
      largest_am_header_(largest_am_header),
      event_fd_(event_fd),
      stop_fd_(stop_fd),
      pid_(getpid()) {}

UcxStatus UcxCore::start() {
  for (const auto &[id, callback] : {std::pair{kUcxMessageAm, &UcxCore::on_message},
                                     std::pair{kUcxHeartbeatAm, &UcxCore::on_heartbeat}}) {
    ucp_am_handler_param_t param{};
    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                       UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    param.id = id;
    param.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
    param.cb = callback;
    param.arg = this;
    const ucs_status_t status = ucp_worker_set_am_recv_handler(worker_, &param);
    if (status != UCS_OK) return UcxStatus::failure(ucx_reason("ucp_worker_set_am_recv_handler failed", status));
  }
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error &error) {
    return UcxStatus::failure(std::string("the link's progress thread did not start: ") + error.what());
  }
  return UcxStatus::success();
}

UcxCore::~UcxCore() {
  {
    std::lock_guard lock(live().mutex);
    std::erase(live().cores, this);
  }
  tear_down(bound_ns());
}

void UcxCore::tear_down(int64_t close_ns) {
  if (torn_down_ || getpid() != pid_ || on_progress_thread()) return;
  torn_down_ = true;
  shutdown_within(close_ns);
  ucp_worker_destroy(worker_);
  ucp_cleanup(context_);
  close(stop_fd_);
}

void UcxCore::shutdown_within(int64_t close_ns) {
  if (stopping_.load(std::memory_order_acquire) || !thread_.joinable()) return;
  std::vector<std::shared_ptr<UcxEndpoint>> endpoints;
  std::vector<std::shared_ptr<UcxListener::State>> listeners;
  {
    std::lock_guard lock(mutex_);
    for (auto &[ep, weak] : endpoints_)
      if (auto endpoint = weak.lock()) endpoints.push_back(std::move(endpoint));
    listeners = listeners_;
  }
  for (auto &listener : listeners) UcxListener::stop(*listener);
  for (auto &endpoint : endpoints) endpoint->close();
  endpoints.clear();
  // Closes posted from the progress thread finish before it stops.
  const int64_t deadline = ucx_now_ns() + close_ns;
  while (closing_.load(std::memory_order_acquire) > 0 && ucx_now_ns() < deadline) {
    wake();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  stopping_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  while (write(stop_fd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
  thread_.join();
  // Endpoints whose data landed as the thread stopped hold the core.
  std::vector<std::shared_ptr<UcxEndpoint>> ready;
  ready.swap(ready_);
  ready.clear();
  std::vector<Event> events;
  std::vector<Connection> connections;
  {
    std::lock_guard lock(mutex_);
    events.swap(events_);
    connections.swap(connections_);
  }
  for (const Event &event : events)
    if (!event.failure) release(event.arrival);
  for (const Connection &connection : connections) {
    std::lock_guard listener_lock(connection.listener->mutex);
    if (connection.listener->listener) ucp_listener_reject(connection.listener->listener, connection.request);
  }
}

void UcxCore::run() {
  thread_tid_.store(gettid(), std::memory_order_release);
  next_beat_ns_ = ucx_now_ns() + bound_ns() / 4;
  while (!stopping_.load(std::memory_order_acquire)) {
    // One progress call a round: under a flood of messages, progress
    // never runs dry, and the round's beats and handlers must still run.
    const bool progressed = ucp_worker_progress(worker_) != 0;
    int64_t now = ucx_now_ns();
    if (now >= next_beat_ns_) {
      beat();
      next_beat_ns_ = now + bound_ns() / 4;
    }
    if (act() || progressed) continue;
    now = ucx_now_ns();
    if (now >= next_beat_ns_) continue;
    const ucs_status_t armed = ucp_worker_arm(worker_);
    if (armed == UCS_ERR_BUSY) continue;
    pollfd fds[2] = {{event_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int timeout_ms = static_cast<int>((next_beat_ns_ - now) / 1000000 + 1);
    if (poll(fds, 2, armed == UCS_OK ? timeout_ms : 1) > 0 && (fds[1].revents & POLLIN)) {
      uint64_t count;
      [[maybe_unused]] ssize_t got = read(stop_fd_, &count, sizeof count);
    }
  }
}

bool UcxCore::act() {
  std::vector<Event> events;
  std::vector<Connection> connections;
  std::vector<ucp_ep_h> to_close;
  {
    std::lock_guard lock(mutex_);
    events.swap(events_);
    connections.swap(connections_);
    to_close.swap(to_close_);
  }
  bool acted = !connections.empty() || !to_close.empty() || !ready_.empty();
  std::vector<Event> unknown;
  for (Event &event : events) {
    std::shared_ptr<UcxEndpoint> endpoint = find(event.ep);
    if (!endpoint) {
      unknown.push_back(std::move(event));
      continue;
    }
    acted = true;
    if (event.failure) {
      endpoint->fail(event.status, "");
    } else {
      endpoint->arrive(std::move(event.arrival));
      ready_.push_back(std::move(endpoint));
    }
  }
  if (!unknown.empty()) {
    std::unique_lock lock(mutex_);
    if (connects_ > 0) {
      // Perhaps of the endpoint a connect is about to add.
      for (Event &event : unknown) events_.push_back(std::move(event));
    } else {
      lock.unlock();  // UCX's release takes the worker's lock
      for (const Event &event : unknown)
        if (!event.failure) release(event.arrival);
    }
  }
  std::vector<std::shared_ptr<UcxEndpoint>> ready;
  ready.swap(ready_);
  for (auto &endpoint : ready) endpoint->deliver_ready();
  ready.clear();
  for (const Connection &connection : connections) accept(connection.listener, connection.request);
  for (ucp_ep_h ep : to_close) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    param.cb.send = [](void *request, ucs_status_t, void *user_data) {
      static_cast<UcxCore *>(user_data)->closing_.fetch_sub(1, std::memory_order_acq_rel);
      ucp_request_free(request);
    };
    param.user_data = this;
    closing_.fetch_add(1, std::memory_order_acq_rel);
    const ucs_status_ptr_t request = ucp_ep_close_nbx(ep, &param);
    if (!UCS_PTR_IS_PTR(request)) closing_.fetch_sub(1, std::memory_order_acq_rel);
  }
  return acted;
}

void UcxCore::beat() {
  std::vector<std::shared_ptr<UcxEndpoint>> endpoints;
  {
    std::lock_guard lock(mutex_);
    for (auto &[ep, weak] : endpoints_)
      if (auto endpoint = weak.lock()) endpoints.push_back(std::move(endpoint));
  }
  const int64_t now = ucx_now_ns();
  for (auto &endpoint : endpoints) endpoint->beat(now);
}

void UcxCore::release(const UcxArrival &arrival) {
  if (arrival.desc) ucp_am_data_release(worker_, arrival.desc);
}

void UcxCore::set_handler(uint16_t id, UcxHandler handler) {
  auto shared = std::make_shared<const UcxHandler>(std::move(handler));
  std::lock_guard lock(handlers_mutex_);
  handlers_[id] = std::move(shared);
}

std::shared_ptr<const UcxHandler> UcxCore::handler(uint16_t id) const {
  std::lock_guard lock(handlers_mutex_);
  auto found = handlers_.find(id);
  return found == handlers_.end() ? nullptr : found->second;
}

void UcxCore::begin_connect() {
  std::lock_guard lock(mutex_);
  ++connects_;
}

void UcxCore::end_connect() {
  {
    std::lock_guard lock(mutex_);
    --connects_;
  }
  wake();  // the events waiting for the new endpoint
}

void UcxCore::add_endpoint(const std::shared_ptr<UcxEndpoint> &endpoint, ucp_ep_h ep) {
  std::lock_guard lock(mutex_);
  endpoints_[ep] = endpoint;
}

void UcxCore::remove_endpoint(ucp_ep_h ep) {
  std::lock_guard lock(mutex_);
  endpoints_.erase(ep);
}

std::shared_ptr<UcxEndpoint> UcxCore::find(ucp_ep_h ep) {
  std::lock_guard lock(mutex_);
  auto found = endpoints_.find(ep);
  return found == endpoints_.end() ? nullptr : found->second.lock();
}

void UcxCore::close_later(ucp_ep_h ep) {
  {
    std::lock_guard lock(mutex_);
    to_close_.push_back(ep);
  }
  wake();
}

void UcxCore::close_now(ucp_ep_h ep) {
  UcxWaiter waiter;
  const ucp_request_param_t param = waiter.param(UCP_EP_CLOSE_FLAG_FORCE);
  waiter.posted(ucp_ep_close_nbx(ep, &param));
  // Even a close done at once leaves its lanes' discard, and the requests
  // it ends, to the progress thread, which may sleep till its next beat.
  wake();
  // Without the progress thread (stopped), this thread progresses.
  while (!waiter.wait_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(10)))
    if (stopping_.load(std::memory_order_acquire)) ucp_worker_progress(worker_);
  waiter.wait();
}

void UcxCore::keep_listener(std::shared_ptr<UcxListener::State> state) {
  std::lock_guard lock(mutex_);
  listeners_.push_back(std::move(state));
}

void UcxCore::queue_connection(UcxListener::State *listener, ucp_conn_request_h request) {
  std::lock_guard lock(mutex_);
  connections_.push_back({listener, request});
}

void UcxCore::on_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
  auto *core = static_cast<UcxCore *>(arg);
  std::lock_guard lock(core->mutex_);
  core->events_.push_back({ep, true, status, {}});
}

ucs_status_t UcxCore::on_message(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                 const ucp_am_recv_param_t *param) {
  auto *core = static_cast<UcxCore *>(arg);
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)) return UCS_OK;  // not the link's frame
  Event event{param->reply_ep, false, UCS_OK, {}};
  UcxArrival &arrival = event.arrival;
  if (header_length >= kUcxFrameBytes) {
    const auto *bytes = static_cast<const std::byte *>(header);
    std::memcpy(&arrival.seq, bytes, sizeof arrival.seq);
    std::memcpy(&arrival.id, bytes + sizeof arrival.seq, sizeof arrival.id);
    arrival.header.assign(bytes + kUcxFrameBytes, bytes + header_length);
  } else {
    arrival.seq = UINT64_MAX;  // the endpoint fails on it
  }
  arrival.length = length;
  ucs_status_t kept = UCS_OK;
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    arrival.rendezvous = true;
    arrival.desc = data;
    kept = UCS_INPROGRESS;
  } else if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
    arrival.desc = data;
    arrival.data = static_cast<const std::byte *>(data);
    kept = UCS_INPROGRESS;
  } else if (length > 0) {
    const auto *bytes = static_cast<const std::byte *>(data);
    arrival.copy.assign(bytes, bytes + length);
    arrival.data = arrival.copy.data();
  }
  if (auto endpoint = core->find(param->reply_ep)) {
    endpoint->note_arrival();
    core->mark_ready(std::move(endpoint));  // never destroyed in a callback
  }
  std::lock_guard lock(core->mutex_);
  core->events_.push_back(std::move(event));
  return kept;
}

ucs_status_t UcxCore::on_heartbeat(void *arg, const void *, size_t, void *, size_t, const ucp_am_recv_param_t *param) {
  auto *core = static_cast<UcxCore *>(arg);
  if (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
    if (auto endpoint = core->find(param->reply_ep)) {
      endpoint->heard(ucx_now_ns());
      core->mark_ready(std::move(endpoint));  // never destroyed in a callback
    }
  return UCS_OK;
}

}  // namespace rig::net::detail
