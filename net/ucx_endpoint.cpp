#include "ucx_endpoint.hpp"

#include <cstring>

#include "ucx_core.hpp"
#include "ucx_memory.hpp"
#include "ucx_request.hpp"

namespace rig::net {

using detail::ucx_now_ns;
using detail::UcxArrival;

// A rendezvous message whose data UCX is landing; it keeps its endpoint
// until UCX calls back.
struct UcxEndpoint::Landing {
  std::shared_ptr<const void> keep;  // first: it goes last
  std::shared_ptr<UcxEndpoint> self;
  UcxArrival arrival;
  std::shared_ptr<const UcxHandler> handler;
  std::span<std::byte> buffer;
  std::vector<std::byte> own;  // the buffer, where the handler places none
  void *request = nullptr;
  bool done = false;
  ucs_status_t status = UCS_OK;
};

UcxEndpoint::UcxEndpoint(Passkey, std::shared_ptr<detail::UcxCore> core, ucp_ep_h ep, std::string peer)
    : core_(std::move(core)), peer_(std::move(peer)), ep_(ep), last_heard_ns_(ucx_now_ns()) {}

UcxEndpoint::~UcxEndpoint() {
  close();
  drop_held();
}

void UcxEndpoint::on_failure(std::function<void(const std::string &)> handler) {
  std::unique_lock lock(failure_mutex_);
  if (!failed_.load(std::memory_order_acquire)) {
    failure_handler_ = std::move(handler);
    return;
  }
  const std::string message = failure_;
  lock.unlock();
  if (handler) handler(message);
}

std::string UcxEndpoint::failure() const {
  std::lock_guard lock(failure_mutex_);
  return failure_;
}

UcxEndpointStats UcxEndpoint::stats() const {
  return {delivered_.load(std::memory_order_relaxed), out_of_order_.load(std::memory_order_relaxed),
          behind_landing_.load(std::memory_order_relaxed)};
}

void UcxEndpoint::bound_held(UcxHeldBound bound) noexcept {
  held_messages_max_.store(bound.messages, std::memory_order_relaxed);
  held_bytes_max_.store(bound.bytes, std::memory_order_relaxed);
}

uint64_t UcxEndpoint::held_bytes(const UcxArrival &arrival) noexcept {
  // A rendezvous' data is still the peer's: its header alone is held.
  return arrival.header.size() + (arrival.rendezvous ? 0 : arrival.length);
}

UcxStatus UcxEndpoint::send(uint16_t id, std::span<const std::byte> header, std::span<const std::byte> data) {
  std::vector<std::byte> frame(detail::kUcxFrameBytes + header.size());
  std::memcpy(frame.data() + sizeof(uint64_t), &id, sizeof id);
  if (!header.empty()) std::memcpy(frame.data() + detail::kUcxFrameBytes, header.data(), header.size());
  return run_blocking("a message of " + std::to_string(data.size()) + " bytes",
                      [&](ucp_ep_h ep, ucp_request_param_t param) {
                        param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
                        param.flags = UCP_AM_SEND_FLAG_REPLY;
                        std::memcpy(frame.data(), &next_send_seq_, sizeof next_send_seq_);
                        const ucs_status_ptr_t posted = ucp_am_send_nbx(
                            ep, detail::kUcxMessageAm, frame.data(), frame.size(), data.data(), data.size(), &param);
                        if (!UCS_PTR_IS_ERR(posted)) ++next_send_seq_;
                        return posted;
                      });
}

size_t UcxEndpoint::largest_header() const {
  const size_t most = core_->largest_am_header();
  return most > detail::kUcxFrameBytes ? most - detail::kUcxFrameBytes : 0;
}

UcxStatus UcxEndpoint::run_blocking(
    const std::string &what, const std::function<ucs_status_ptr_t(ucp_ep_h, ucp_request_param_t)> &post) {
  if (core_->on_progress_thread())
    return UcxStatus::failure(what + " to " + peer_ + " cannot wait on the link's progress thread, which completes it");
  detail::UcxWaiter waiter;
  {
    std::lock_guard lock(send_mutex_);
    if (failed()) return UcxStatus::failure(failure());
    if (!ep_) return UcxStatus::failure("the link to " + peer_ + " is closed");
    waiter.posted(post(ep_, waiter.param()));
  }
  if (waiter.pending()) core_->wake();
  const ucs_status_t status = waiter.wait();
  if (status == UCS_OK) return UcxStatus::success();
  if (failed()) return UcxStatus::failure(failure());
  return UcxStatus::failure("the link to " + peer_ + " failed: " + ucs_status_string(status) + " (" + what + ")");
}

void UcxEndpoint::fail(ucs_status_t status, const std::string &details) {
  std::function<void(const std::string &)> handler;
  std::string message;
  {
    std::lock_guard lock(failure_mutex_);
    if (failed_.load(std::memory_order_acquire)) return;
    failure_ = "the link to " + peer_ + " failed: " + ucs_status_string(status) + (details.empty() ? "" : " " + details);
    message = failure_;
    handler = std::move(failure_handler_);
    failed_.store(true, std::memory_order_release);
  }
  close();  // the pending operations end with UCX's error
  if (!handler) return;
  try {
    handler(message);
  } catch (...) {
    // The owner's handler; the failure stands either way.
  }
}

void UcxEndpoint::abort(const std::string &why) { fail(UCS_ERR_CANCELED, "(" + why + ")"); }

void UcxEndpoint::close() {
  ucp_ep_h ep;
  {
    std::lock_guard lock(send_mutex_);
    ep = ep_;
    ep_ = nullptr;
  }
  if (!ep) return;
  core_->remove_endpoint(ep);
  if (core_->on_progress_thread())
    core_->close_later(ep);
  else
    core_->close_now(ep);
}

void UcxEndpoint::beat(int64_t now_ns) {
  if (failed()) return;
  const int64_t silent_ns = now_ns - last_heard_ns_.load(std::memory_order_relaxed);
  if (silent_ns > core_->bound_ns()) {
    fail(UCS_ERR_ENDPOINT_TIMEOUT, "(nothing heard in " + std::to_string(silent_ns / 1000000) + " ms, over the bound of " +
                                       std::to_string(core_->options().failure_bound.count()) + " ms)");
    return;
  }
  std::lock_guard lock(send_mutex_);
  if (!ep_) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  param.cb.send = [](void *request, ucs_status_t, void *) { ucp_request_free(request); };
  // A failed post is the connection's error, which UCX's callback reports.
  (void)ucp_am_send_nbx(ep_, detail::kUcxHeartbeatAm, nullptr, 0, nullptr, 0, &param);
}

void UcxEndpoint::arrive(UcxArrival arrival) {
  heard(ucx_now_ns());
  // A message landing is one the reorder point no longer holds, but not
  // yet one it delivered: its number again is a repeat too.
  const bool landing = landing_ && arrival.seq == landing_->arrival.seq;
  if (arrival.seq == UINT64_MAX || arrival.seq < next_deliver_seq_ || landing || arrived_.count(arrival.seq) != 0) {
    const std::string details = arrival.seq == UINT64_MAX
                                    ? "(a message without the link's frame)"
                                    : "(message " + std::to_string(arrival.seq) + " came twice)";
    core_->release(arrival);
    fail(UCS_ERR_INVALID_PARAM, details);
    return;
  }
  const uint64_t bytes = held_bytes(arrival);
  const size_t messages_max = held_messages_max_.load(std::memory_order_relaxed);
  const uint64_t bytes_max = held_bytes_max_.load(std::memory_order_relaxed);
  // The message awaited is taken whatever is held: it delivers them.
  if (arrival.seq != next_deliver_seq_ && (arrived_.size() >= messages_max || held_bytes_ + bytes > bytes_max)) {
    const std::string details = "(message " + std::to_string(arrival.seq) + " of " + std::to_string(bytes) +
                                " bytes came with " + std::to_string(arrived_.size()) + " messages of " +
                                std::to_string(held_bytes_) + " bytes held, waiting for message " +
                                std::to_string(next_deliver_seq_) + ": past the bound of " +
                                std::to_string(messages_max) + " messages and " + std::to_string(bytes_max) +
                                " bytes held)";
    core_->release(arrival);
    fail(UCS_ERR_EXCEEDS_LIMIT, details);
    return;
  }
  if (arrival.seq < highest_arrived_)
    out_of_order_.fetch_add(1, std::memory_order_relaxed);
  if (arrival.seq > highest_arrived_) highest_arrived_ = arrival.seq;
  held_bytes_ += bytes;
  arrived_.emplace(arrival.seq, std::move(arrival));
}

void UcxEndpoint::note_arrival() {
  if (landing_ && !landing_->done) behind_landing_.fetch_add(1, std::memory_order_relaxed);
}

void UcxEndpoint::deliver_ready() {
  if (failed()) {
    drop_held();
    // A landing that ended (UCX failed it with the connection) lets go of
    // the endpoint; the caller holds it still.
    if (landing_ && landing_->done) {
      if (landing_->request) ucp_request_free(landing_->request);
      landing_.reset();
    }
    return;
  }
  while (!failed()) {
    if (landing_) {
      if (!landing_->done) return;
      std::unique_ptr<Landing> landed = std::move(landing_);
      if (landed->request) ucp_request_free(landed->request);
      if (landed->status != UCS_OK) {
        fail(landed->status, "(landing the " + std::to_string(landed->arrival.length) + " bytes of message " +
                                 std::to_string(landed->arrival.seq) + ")");
        return;
      }
      heard(ucx_now_ns());
      const UcxMessage message{*this, landed->arrival.id, landed->arrival.header, landed->buffer};
      ++next_deliver_seq_;
      delivered_.fetch_add(1, std::memory_order_relaxed);
      try {
        landed->handler->deliver(message);
      } catch (const std::exception &error) {
        fail(UCS_ERR_CANCELED, std::string("(the handler of id ") + std::to_string(message.id) + " threw: " + error.what() + ")");
        return;
      }
      continue;
    }
    auto next = arrived_.find(next_deliver_seq_);
    if (next == arrived_.end()) return;
    UcxArrival arrival = std::move(next->second);
    arrived_.erase(next);
    held_bytes_ -= held_bytes(arrival);
    std::shared_ptr<const UcxHandler> handler = core_->handler(arrival.id);
    if (!handler || !handler->deliver) {
      core_->release(arrival);
      fail(UCS_ERR_NO_ELEM, "(a message for id " + std::to_string(arrival.id) + ", which has no handler)");
      return;
    }
    std::span<std::byte> placed;
    // What place asks to keep lives till the message is delivered: past
    // this iteration where its data lands later (a rendezvous).
    std::shared_ptr<const void> keep;
    try {
      keep_.reset();
      if (handler->place) placed = handler->place(*this, arrival.header, arrival.length);
      keep = std::move(keep_);
    } catch (const std::exception &error) {
      keep_.reset();
      core_->release(arrival);
      fail(UCS_ERR_CANCELED, std::string("(the placing of id ") + std::to_string(arrival.id) + " threw: " + error.what() + ")");
      return;
    }
    if (handler->place && placed.size() < arrival.length) {
      core_->release(arrival);
      fail(UCS_ERR_MESSAGE_TRUNCATED, "(the handler of id " + std::to_string(arrival.id) + " placed " +
                                          std::to_string(placed.size()) + " bytes for a message of " +
                                          std::to_string(arrival.length) + ")");
      return;
    }
    if (arrival.rendezvous) {
      auto landing = std::make_unique<Landing>();
      landing->keep = std::move(keep);
      landing->self = shared_from_this();
      landing->handler = std::move(handler);
      if (placed.empty() && arrival.length > 0) {
        // The peer chose the length: where this process has no room for
        // it, the endpoint fails, and the process goes on.
        try {
          landing->own.resize(arrival.length);
        } catch (const std::exception &) {
          core_->release(arrival);
          fail(UCS_ERR_NO_MEMORY, "(no memory for the " + std::to_string(arrival.length) + " bytes of message " +
                                      std::to_string(arrival.seq) + ")");
          return;
        }
        placed = landing->own;
      }
      landing->buffer = placed.first(arrival.length);
      void *desc = arrival.desc;
      landing->arrival = std::move(arrival);
      landing->arrival.desc = nullptr;  // UCX owns it from the receive on
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
      param.cb.recv_am = [](void *, ucs_status_t status, size_t, void *user_data) {
        auto *landing = static_cast<Landing *>(user_data);
        landing->status = status;
        landing->done = true;
        landing->self->core_->mark_ready(landing->self);
      };
      param.user_data = landing.get();
      Landing *raw = landing.get();
      landing_ = std::move(landing);
      const ucs_status_ptr_t request =
          ucp_am_recv_data_nbx(core_->worker(), desc, raw->buffer.data(), raw->buffer.size(), &param);
      if (UCS_PTR_IS_PTR(request)) {
        raw->request = request;
      } else {
        raw->status = UCS_PTR_STATUS(request);
        raw->done = true;
      }
      continue;
    }
    std::span<const std::byte> data(arrival.data, arrival.length);
    if (handler->place && arrival.length > 0) {
      std::memcpy(placed.data(), arrival.data, arrival.length);
      data = placed.first(arrival.length);
    }
    ++next_deliver_seq_;
    delivered_.fetch_add(1, std::memory_order_relaxed);
    try {
      handler->deliver(UcxMessage{*this, arrival.id, arrival.header, data});
    } catch (const std::exception &error) {
      core_->release(arrival);
      fail(UCS_ERR_CANCELED, std::string("(the handler of id ") + std::to_string(arrival.id) + " threw: " + error.what() + ")");
      return;
    }
    core_->release(arrival);
  }
}

void UcxEndpoint::drop_held() {
  for (auto &[seq, arrival] : arrived_) core_->release(arrival);
  arrived_.clear();
  held_bytes_ = 0;
}

UcxResult<std::unique_ptr<UcxRemoteRegion>> UcxEndpoint::open_region(const UcxRegionKey &key) {
  std::lock_guard lock(send_mutex_);
  if (failed()) return UcxStatus::failure(failure());
  if (!ep_) return UcxStatus::failure("the link to " + peer_ + " is closed");
  ucp_rkey_h rkey = nullptr;
  const ucs_status_t status = ucp_ep_rkey_unpack(ep_, key.rkey.data(), &rkey);
  if (status != UCS_OK)
    return UcxStatus::failure("the key of the region of " + std::to_string(key.length) + " bytes from " + peer_ +
                              " does not unpack: " + ucs_status_string(status));
  return std::unique_ptr<UcxRemoteRegion>(new UcxRemoteRegion(shared_from_this(), rkey, key.address, key.length));
}

}  // namespace rig::net
