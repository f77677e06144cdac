// The link to one machine's agent (remote_link.hpp).
#include "remote_link.hpp"

#include "rig_internal/driver.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace rig::remote {

namespace wire = net::wire;

std::shared_ptr<RemoteLink> RemoteLink::connect(const MakeChannel &make) {
  std::shared_ptr<RemoteLink> link(new RemoteLink());
  link->channel_ = make(link->handlers());
  return link;
}

RemoteLink::~RemoteLink() {
  // The handlers hear nothing once the channel is gone, before the rest.
  channel_.reset();
}

net::ChannelHandlers RemoteLink::handlers() {
  net::ChannelHandlers h;
  h.message = [this](const wire::Message &m) { heard(m); };
  h.place_bytes = [this](const wire::Bytes &head, uint64_t length) { return place(head, length); };
  h.failed = [this](const std::string &why) { fail(why); };
  return h;
}

const net::MachineAccount *RemoteLink::account(const std::string &name) const {
  for (const net::MachineAccount &a : devices())
    if (a.name == name) return &a;
  return nullptr;
}

const net::MachineAccount *RemoteLink::account(uint32_t id) const {
  for (const net::MachineAccount &a : devices())
    if (a.id == id) return &a;
  return nullptr;
}

std::optional<std::string> RemoteLink::failure() const {
  Guard g(mu_);
  return failure_;
}

void RemoteLink::require_working() const {
  if (auto why = failure()) throw Fault(*why);
}

void RemoteLink::close() {
  {
    Guard g(mu_);
    if (failure_) return;
    // Failed first, so that no request made from now waits for an answer
    // the agent, closing, never sends (PROXY-94).
    fail_locked(closed_reason);
  }
  (void)channel_->send(wire::Close{});
}

uint64_t RemoteLink::send_request(uint32_t device, uint64_t object, wire::Operation op, bool answered) {
  uint64_t number = next_request_.fetch_add(1, std::memory_order_relaxed);
  {
    Guard g(mu_);
    if (failure_) throw Fault(*failure_);
    if (answered) answers_[number];
  }
  net::UcxStatus sent = channel_->send(wire::Request{number, device, object, std::move(op)});
  if (!sent.ok()) fail(sent.message());
  return number;
}

Reply RemoteLink::request(uint32_t device, uint64_t object, wire::Operation op) {
  uint64_t number = send_request(device, object, std::move(op), true);
  std::unique_lock<Mutex> lock(mu_);
  moved_.wait(lock, [&] { return failure_ || answers_[number].has_value(); });
  auto it = answers_.find(number);
  std::optional<Reply> reply = std::move(it->second);
  answers_.erase(it);
  // The answer stands where it came before the failure.
  if (!reply) throw Fault(*failure_);
  return std::move(*reply);
}

void RemoteLink::request_unanswered(uint32_t device, uint64_t object, wire::Operation op) {
  if (failure()) return;
  try {
    send_request(device, object, std::move(op), false);
  } catch (const Fault &) {
    // The job failed meanwhile: a prepare reports nothing.
  }
}

void RemoteLink::release(wire::Released what, uint64_t id) {
  if (failure()) return;
  net::UcxStatus sent = channel_->send(wire::Release{what, id});
  if (!sent.ok()) fail(sent.message());
}

std::shared_ptr<Timeline> RemoteLink::enroll(uint32_t account, uint64_t start) {
  Guard g(mu_);
  if (find_locked(account)) throw std::invalid_argument("the link has a proxy of that device already");
  if (retired_.count(account))
    throw std::invalid_argument("an earlier proxy of that device handed work over on this link");
  auto t = std::make_shared<Timeline>(account, start);
  timelines_.push_back(t);
  return t;
}

void RemoteLink::retire(const std::shared_ptr<Timeline> &t) {
  Guard g(mu_);
  if (t->handed_over) retired_.insert(t->account);
  std::erase(timelines_, t);
}

bool RemoteLink::opened(uint32_t account) const {
  Guard g(mu_);
  return opened_.count(account) > 0;
}

void RemoteLink::opened_by_agent(uint32_t account) {
  Guard g(mu_);
  opened_.insert(account);
}

std::shared_ptr<Timeline> RemoteLink::timeline_of(const volatile uint64_t *word) const {
  Guard g(mu_);
  for (const std::shared_ptr<Timeline> &t : timelines_)
    if (static_cast<const volatile void *>(&t->word) == static_cast<const volatile void *>(word)) return t;
  return nullptr;
}

Timeline *RemoteLink::find_locked(uint32_t account) const {
  for (const std::shared_ptr<Timeline> &t : timelines_)
    if (t->account == account) return t.get();
  return nullptr;
}

void RemoteLink::hand_over(Timeline &t, const wire::Handover &h, std::map<uint32_t, Landing> gets) {
  uint64_t bytes = 0;
  for (const auto &[part, landing] : gets) bytes += landing.bytes;
  {
    Guard g(mu_);
    if (failure_) throw Fault(*failure_);
    t.handed_over = true;
    t.handed = h.value;
    if (!gets.empty()) {
      // Registered before the agent can hear of the value.
      t.landings[h.value] = std::move(gets);
      t.pending_bytes += bytes;
    }
  }
  net::UcxStatus sent = channel_->send(h);
  if (!sent.ok()) {
    fail(sent.message());
    require_working();
  }
}

void RemoteLink::wait_for(const Timeline &t, uint64_t value) {
  std::unique_lock<Mutex> lock(mu_);
  moved_.wait(lock, [&] { return failure_ || t.word.load(std::memory_order_acquire) >= value; });
  if (t.word.load(std::memory_order_acquire) < value) throw Fault(*failure_);
}

void RemoteLink::sleep(const Timeline &t, uint64_t seen, int64_t still_ms) {
  // A sleep may return early (rig sleeps again): a minute at most, so that
  // no deadline overflows the clock.
  constexpr int64_t longest_ms = 60000;
  std::unique_lock<Mutex> lock(mu_);
  auto moved = [&] { return t.word.load(std::memory_order_acquire) != seen; };
  moved_.wait_for(lock, std::chrono::milliseconds(std::clamp<int64_t>(still_ms, 0, longest_ms)),
                  [&] { return failure_ || moved(); });
  if (!moved() && failure_) throw Fault(*failure_);
}

void RemoteLink::stop(Timeline &t, uint64_t last) {
  Guard g(mu_);
  t.stopped = true;
  t.last = last;
  settle_stopped_locked(t);
  // A close ends the proxy for the link (PROXY-14, PROXY-15): one that
  // handed work over keeps its account taken, and stays registered while
  // its GETs' bytes may land; one that handed none frees it.
  if (t.handed_over) {
    retired_.insert(t.account);
  } else {
    std::erase_if(timelines_, [&](const std::shared_ptr<Timeline> &each) { return each.get() == &t; });
  }
}

void RemoteLink::settle_stopped_locked(Timeline &t) {
  // Once the receiving side ended, no byte lands any more.
  if (!t.stopped || (t.pending_bytes > 0 && !failure_)) return;
  if (t.word.load(std::memory_order_relaxed) < t.last) t.word.store(t.last, std::memory_order_release);
  moved_.notify_all();
}

void RemoteLink::raise_locked(Timeline &t, uint64_t v) {
  // A report that the word passed, a stopped proxy's included, is dropped
  // (PROXY-83, PROXY-100).
  if (v <= t.word.load(std::memory_order_relaxed)) return;
  t.word.store(v, std::memory_order_release);
  moved_.notify_all();
}

void RemoteLink::heard(const wire::Message &message) {
  Guard g(mu_);
  if (const auto *r = std::get_if<wire::Report>(&message)) {
    Timeline *t = find_locked(r->device);
    if (!t) return;  // of a proxy that is gone
    if (r->value > t->handed)
      return fail_locked("the agent reported value " + std::to_string(r->value) + " of device " +
                         std::to_string(r->device) + ", past the last handed over, " + std::to_string(t->handed));
    // Every GET up to the value landed before its REPORT (the channel's
    // order): its bytes are in this process's memory (PROXY-81).
    for (auto it = t->landings.begin(); it != t->landings.end() && it->first <= r->value;)
      it = t->landings.erase(it);
    raise_locked(*t, t->start + r->value);
  } else if (const auto *b = std::get_if<wire::Bytes>(&message)) {
    auto it = placed_.find({b->device, b->value, b->part, b->offset});
    if (it == placed_.end()) return;
    uint64_t length = it->second;
    placed_.erase(it);
    if (Timeline *t = find_locked(b->device)) {
      t->pending_bytes -= std::min(t->pending_bytes, length);
      settle_stopped_locked(*t);
    }
  } else if (const auto *a = std::get_if<wire::Answer>(&message)) {
    auto it = answers_.find(a->number);
    if (it == answers_.end()) return;  // a prepare's
    it->second = Reply{a->status, a->value, a->detail, std::string(a->why)};
    moved_.notify_all();
  } else if (const auto *f = std::get_if<wire::Failure>(&message)) {
    fail_locked(std::string(f->root_cause));
  }
}

std::span<std::byte> RemoteLink::place(const wire::Bytes &head, uint64_t length) {
  Guard g(mu_);
  Timeline *t = find_locked(head.device);
  if (!t) return {};
  auto value = t->landings.find(head.value);
  if (value == t->landings.end()) return {};
  auto part = value->second.find(head.part);
  if (part == value->second.end()) return {};
  const Landing &l = part->second;
  if (head.offset > l.bytes || length > l.bytes - head.offset) return {};
  placed_[{head.device, head.value, head.part, head.offset}] = length;
  return {l.at + head.offset, static_cast<size_t>(length)};
}

void RemoteLink::fail(const std::string &why) {
  Guard g(mu_);
  fail_locked(why);
}

void RemoteLink::fail_locked(const std::string &why) {
  // The first reason stands: FAILURE's root cause before the connection's
  // end that follows it.
  if (!failure_) failure_ = why;
  for (const std::shared_ptr<Timeline> &t : timelines_) settle_stopped_locked(*t);
  moved_.notify_all();
}

}  // namespace rig::remote
