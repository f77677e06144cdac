// The link of this process to one machine's agent (rig-remote-proxy.txt's
// Link): one ClientChannel, the numbers of its requests and their
// answers, the objects it names, and the registry of its proxies, whose
// timeline words its receiving side raises as the agent reports
// (PROXY-03, PROXY-81) and whose GETs' bytes it lands where their copies
// name (PROXY-37).  The job's failure, FAILURE's root cause or the
// connection's reason, loses every proxy of the link (PROXY-07).
#pragma once

#include "machine_channel.hpp"
#include "rig_internal/locks.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace rig::remote {

// Where a GET's bytes land in this process's memory.
struct Landing {
  std::byte *at = nullptr;
  uint64_t bytes = 0;
};

// What the link keeps of one proxy: its timeline word, which lives here so
// that signaled() reads it for as long as the proxy lives, and the GETs of
// its values in flight.  The fields after word are the link's, under its
// lock.
struct Timeline {
  Timeline(uint32_t account, uint64_t start) : account(account), start(start), word(start) {}
  const uint32_t account;
  // The proxy's values start after start (PROXY-10): the agent's value n
  // of this proxy's device is the proxy's value start + n.
  const uint64_t start;
  std::atomic<uint64_t> word;
  // The GETs of each value not reported, by the agent's value, in the
  // order of the hand-over's parts (a BYTES names a part by its index).
  std::map<uint64_t, std::map<uint32_t, Landing>> landings;
  uint64_t pending_bytes = 0;  // of those GETs, not landed yet
  uint64_t handed = 0;         // the agent's value last handed over
  bool handed_over = false;
  bool stopped = false;
  uint64_t last = 0;  // stop's last value
};

// An answer of the agent's, owned.
struct Reply {
  int32_t status = 0;
  uint64_t value = 0;
  uint64_t detail = 0;
  std::string why;
};

class RemoteLink {
 public:
  // Makes the channel to the agent: given the link's handlers, the
  // connected channel, or throws std::runtime_error with why not (the
  // address and UCX's reason, the agent's refusal).
  using MakeChannel = std::function<std::unique_ptr<net::ClientChannel>(net::ChannelHandlers)>;
  // The link over the channel make makes; throws as make.
  static std::shared_ptr<RemoteLink> connect(const MakeChannel &make);
  ~RemoteLink();
  RemoteLink(const RemoteLink &) = delete;
  RemoteLink &operator=(const RemoteLink &) = delete;

  const std::vector<net::MachineAccount> &devices() const { return channel_->devices(); }
  const std::string &address() const { return channel_->address(); }
  // The account named name, or nullptr.
  const net::MachineAccount *account(const std::string &name) const;
  const net::MachineAccount *account(uint32_t id) const;

  // Why the job failed (its root cause, the connection's reason), or
  // nullopt while it works.
  std::optional<std::string> failure() const;
  // Throws Fault with the failure once the job failed.
  void require_working() const;
  // Begins the job's close (Link.close): sends CLOSE, after which the
  // agent ends the connection, and fails the job with closed_reason unless
  // it failed before.  Nothing once the job failed.
  void close();
  static constexpr const char *closed_reason = "the job is closed";

  // A fresh id of the job for an object a request makes.
  uint64_t fresh() { return next_object_.fetch_add(1, std::memory_order_relaxed); }
  // The agent's answer to the request; throws Fault once the job fails.
  // Holds no lock of rig's while it waits (PROXY-06).
  Reply request(uint32_t device, uint64_t object, net::wire::Operation op);
  // Sends the request and forgets its answer (a prepare, which reports
  // nothing); nothing once the job failed.
  void request_unanswered(uint32_t device, uint64_t object, net::wire::Operation op);
  // Sends the release of id after every message sent before it; nothing
  // once the job failed (PROXY-92).
  void release(net::wire::Released what, uint64_t id);

  // Registers a proxy of account whose values start after start; throws
  // std::invalid_argument where the link has a proxy of it, or had one
  // that handed work over (PROXY-13, PROXY-14).
  std::shared_ptr<Timeline> enroll(uint32_t account, uint64_t start);
  // Forgets t's proxy: another of its account may enroll unless it
  // handed work over (PROXY-15).
  void retire(const std::shared_ptr<Timeline> &t);
  // Whether the agent opened account for this connection (an OPEN it
  // answered RIG_OK, which opened_by_agent records): a refused OPEN leaves
  // it unopened, so that the next open asks again (PROXY-16).
  bool opened(uint32_t account) const;
  void opened_by_agent(uint32_t account);
  // The timeline whose word is at word, or nullptr: a proxy of this link.
  std::shared_ptr<Timeline> timeline_of(const volatile uint64_t *word) const;

  // Sends the hand-over of t's value, whose GETs land at gets (by part
  // index); throws Fault with the failure once the job failed.
  void hand_over(Timeline &t, const net::wire::Handover &h, std::map<uint32_t, Landing> gets);
  // Waits until t's word reaches value; throws Fault once the job fails.
  void wait_for(const Timeline &t, uint64_t value);
  // Blocks until t's word differs from seen, at most still_ms; throws
  // Fault once the job failed and the word still reads seen.
  void sleep(const Timeline &t, uint64_t seen, int64_t still_ms);
  // Stops t's proxy: writes last into its word once no GET's bytes may
  // still land (PROXY-95..97), and from then on nothing writes it; its
  // account is free for another proxy unless it handed work over.
  void stop(Timeline &t, uint64_t last);

 private:
  RemoteLink() = default;
  net::ChannelHandlers handlers();
  void heard(const net::wire::Message &message);
  std::span<std::byte> place(const net::wire::Bytes &head, uint64_t length);
  void fail(const std::string &why);
  void fail_locked(const std::string &why);
  // With mu_ held: t's word raised to v (never lowered), and a stopped
  // proxy's last once nothing may land.
  void raise_locked(Timeline &t, uint64_t v);
  void settle_stopped_locked(Timeline &t);
  Timeline *find_locked(uint32_t account) const;
  uint64_t send_request(uint32_t device, uint64_t object, net::wire::Operation op, bool answered);

  std::unique_ptr<net::ClientChannel> channel_;
  std::atomic<uint64_t> next_object_{1};
  std::atomic<uint64_t> next_request_{1};

  mutable Mutex mu_;
  std::condition_variable_any moved_;  // a word, an answer or the failure
  std::optional<std::string> failure_;
  std::map<uint64_t, std::optional<Reply>> answers_;  // requests waited for
  std::vector<std::shared_ptr<Timeline>> timelines_;
  std::set<uint32_t> retired_;  // accounts whose proxy handed work over
  std::set<uint32_t> opened_;
  // The BYTES whose span place() answered and whose message the link has
  // not heard yet, by device, value, part and offset, and their lengths.
  std::map<std::tuple<uint32_t, uint64_t, uint32_t, uint64_t>, uint64_t> placed_;
};

}  // namespace rig::remote
