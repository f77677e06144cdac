#include "machine_channel_agent.hpp"

#include "auth_messages.hpp"
#include "wire_words.hpp"

#include <algorithm>

namespace rig::net::channel {

void Router::add(const UcxEndpoint *endpoint, const std::shared_ptr<AgentSide> &side) {
  std::lock_guard lock(mutex_);
  sides_[endpoint] = side;
}

void Router::remove(const UcxEndpoint *endpoint) {
  std::lock_guard lock(mutex_);
  sides_.erase(endpoint);
}

std::shared_ptr<AgentSide> Router::find(const UcxEndpoint *endpoint) {
  std::lock_guard lock(mutex_);
  auto found = sides_.find(endpoint);
  return found == sides_.end() ? nullptr : found->second.lock();
}

AgentSide::AgentSide(std::shared_ptr<UcxEndpoint> endpoint, std::shared_ptr<Router> router, uint64_t queue_max)
    : router_(std::move(router)),
      key_(endpoint.get()),
      peer_(endpoint->peer()),
      queue_max_(queue_max),
      endpoint_(std::move(endpoint)),
      spares_(2, queue_max) {
  // Until ACCEPT the client sends its PROOF alone: the link holds at most
  // one early message for it.
  endpoint_->bound_held(kHandshakeHeld);
}

AgentSide::~AgentSide() { close(); }

std::optional<ReceivedMessage> AgentSide::next(std::chrono::milliseconds wait) {
  Landed landed;
  {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, wait, [&] { return failed_ || !queue_.empty(); });
    // What came before a failure is still the client's, in order.
    if (queue_.empty()) return std::nullopt;
    landed = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= landed.bytes.size();
  }
  // Decoded here, on the owner's thread, one message at a time: decoded,
  // a hand-over's parts take several times their encoding's bytes, which
  // the queue's bound counts.  The header's bytes lead the landing (place).
  ReceivedMessage taken;
  taken.bytes = std::move(landed.bytes);
  auto decoded = decode_message(landed.id, {}, std::as_bytes(std::span(taken.bytes)));
  if (!decoded) {
    fail(decoded.error().message);
    close();
    return std::nullopt;
  }
  taken.message = std::move(decoded.value());
  return taken;
}

UcxStatus AgentSide::send(const wire::Message &message) {
  const std::string wrong = direction_problem(wire::kind_of(message), true);
  if (!wrong.empty()) return UcxStatus::failure(wrong);
  std::shared_ptr<UcxEndpoint> endpoint;
  {
    std::lock_guard lock(mutex_);
    if (failed_) return UcxStatus::failure(failure_);
    endpoint = endpoint_;
  }
  UcxStatus sent = send_message(*endpoint, message);
  if (!sent.ok() && endpoint->failed()) fail(sent.message());
  return sent;
}

UcxStatus AgentSide::send_auth(uint16_t id, std::span<const uint8_t> bytes) {
  std::shared_ptr<UcxEndpoint> endpoint;
  {
    std::lock_guard lock(mutex_);
    if (failed_) return UcxStatus::failure(failure_);
    endpoint = endpoint_;
  }
  return endpoint->send(id, {}, std::as_bytes(bytes));
}

bool AgentSide::failed() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

std::string AgentSide::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void AgentSide::close() {
  std::shared_ptr<UcxEndpoint> endpoint;
  {
    std::lock_guard lock(mutex_);
    fail_locked("the agent closed the connection to " + peer_);
    queue_.clear();
    queued_bytes_ = 0;
    endpoint = std::move(endpoint_);
  }
  if (!endpoint) return;
  router_->remove(key_);
  // Closed now rather than by its last holder: a send blocked on a client
  // that takes nothing, or a landing it never finishes, holds it too.
  endpoint->abort("the agent closed the connection");
}

void AgentSide::fail(const std::string &why) {
  std::lock_guard lock(mutex_);
  fail_locked(why);
}

void AgentSide::fail_locked(const std::string &why) {
  if (failed_) return;
  failed_ = true;
  failure_ = why;
  changed_.notify_all();
}

void AgentSide::fail_here(const std::string &why) {
  fail_locked(why);
  throw ConnectionFailed();
}

AgentSide::Phase AgentSide::phase() const {
  std::lock_guard lock(mutex_);
  return phase_;
}

std::vector<uint8_t> AgentSide::take_proof() {
  std::lock_guard lock(mutex_);
  return std::move(proof_);
}

void AgentSide::open(std::string key_id, std::string hello) {
  std::lock_guard lock(mutex_);
  key_id_ = std::move(key_id);
  hello_ = std::move(hello);
  phase_ = Phase::open;
  if (endpoint_) endpoint_->bound_held({});
}

std::span<std::byte> AgentSide::place(uint16_t id, std::span<const std::byte> header, size_t length) {
  std::lock_guard lock(mutex_);
  if (failed_) throw ConnectionFailed();
  const std::string what = a_message_of(id);
  if (id == kAuthProofId) {
    if (phase_ != Phase::authenticating) fail_here(what + (phase_ == Phase::open ? " after ACCEPT" : ", a second one"));
  } else if (!is_wire_id(id)) {
    fail_here(what + " from the client, which only the agent sends");
  } else {
    if (phase_ != Phase::open) fail_here(what + " before ACCEPT");
    const std::string wrong = direction_problem(static_cast<wire::Kind>(id), false);
    if (!wrong.empty()) fail_here(wrong);
  }
  // A wire message's header is the start of its encoding; a PROOF's
  // carries nothing.
  const size_t head = id == kAuthProofId ? 0 : header.size();
  const uint64_t total = uint64_t{head} + length;
  if (total > largest_data(id))
    fail_here(wire::words(what, " of ", wire::count_of(total, "bytes"), ", past its largest, ", largest_data(id)));
  if (queued_bytes_ + total > queue_max_)
    fail_here(wire::words(what, " of ", wire::count_of(total, "bytes"), " after ", queued_bytes_,
                          " queued, past the connection's bound of ", queue_max_));
  const auto *first = reinterpret_cast<const uint8_t *>(header.data());
  // The data's bytes are all written as it lands: a spare's old ones need
  // no clearing.
  landing_ = spares_.take(total);
  std::copy(first, first + head, landing_.begin());
  queued_bytes_ += total;
  return std::as_writable_bytes(std::span(landing_)).subspan(head);
}

bool AgentSide::deliver(const UcxMessage &message) {
  std::unique_lock lock(mutex_);
  if (failed_) throw ConnectionFailed();
  if (message.id == kAuthProofId) {
    queued_bytes_ -= landing_.size();
    proof_ = std::move(landing_);
    phase_ = Phase::checking;
    return true;
  }
  // Decoded as the owner takes it (next); a CLOSE, its header alone.
  const bool closing = message.id == static_cast<uint16_t>(wire::Kind::Close);
  queue_.push_back({message.id, std::move(landing_)});
  // After CLOSE, nothing: closing the endpoint tells the client its CLOSE
  // arrived.
  if (closing) fail_here("the client closed the connection");
  // Woken after the unlock, the session's thread finds the lock free
  // rather than sleeping again on it at once.
  lock.unlock();
  changed_.notify_all();
  return false;
}

}  // namespace rig::net::channel
