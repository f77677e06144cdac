// The client's end of a machine connection (machine_channel.hpp): one
// link of its own, whose handlers take the handshake's answers and then
// hand each wire message to the owner's handlers.
#include "machine_channel_frame.hpp"

#include "auth_client.hpp"
#include "wire_words.hpp"

#include <condition_variable>
#include <mutex>

namespace rig::net {

using channel::ConnectionFailed;

namespace {

// A connection's state, which the link's handlers share with the channel.
struct ClientState {
  // What the handshake waits for, in turn.
  enum class Phase { challenge, answer, devices, open };

  ChannelHandlers handlers;
  std::string address;
  std::chrono::milliseconds bound{0};
  std::unique_ptr<UcxLink> link;
  std::shared_ptr<UcxEndpoint> endpoint;
  std::vector<MachineAccount> devices;

  mutable std::mutex mutex;
  std::condition_variable changed;
  Phase phase = Phase::challenge;
  std::vector<uint8_t> challenge, answer;
  bool failed = false;
  std::string failure;
  // The owner's failed() hears of failures only while the channel is its
  // (from connect's return to the destructor).
  bool telling = false;
  // Where a message's data lands but a BYTES': one at a time, since the
  // link places a message only after it delivered the one before.
  std::vector<std::byte> landing;

  ~ClientState() {
    endpoint.reset();
    link.reset();  // joins the progress thread, the handlers' only caller
  }

  void fail(const std::string &why) {
    std::unique_lock lock(mutex);
    if (failed) return;
    failed = true;
    failure = why;
    const bool tell = telling;
    changed.notify_all();
    lock.unlock();
    if (tell && handlers.failed) handlers.failed(why);
  }
  [[noreturn]] void fail_here(const std::string &why) {
    fail(why);
    throw ConnectionFailed();
  }

  Phase current() const {
    std::lock_guard lock(mutex);
    return phase;
  }

  // Waits until done() holds or the connection failed, within the bound.
  template <class Done>
  bool wait(Done done) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, bound, [&] { return failed || done(); }) && !failed;
  }

  std::span<std::byte> place(uint16_t id, std::span<const std::byte> header, size_t length) {
    if (channel::is_wire_id(id)) {
      const std::string wrong = channel::direction_problem(static_cast<wire::Kind>(id), true);
      if (!wrong.empty()) fail_here(wrong);
    }
    if (id == static_cast<uint16_t>(wire::Kind::Bytes)) return place_bytes(header, length);
    if (length > channel::largest_data(id))
      fail_here(wire::words(channel::a_message_of(id), " of ", wire::count_of(length, "bytes"), ", past its largest, ",
                            channel::largest_data(id)));
    landing.assign(length, std::byte{0});
    return landing;
  }

  std::span<std::byte> place_bytes(std::span<const std::byte> header, size_t length) {
    if (current() != Phase::open) fail_here("a BYTES before DEVICES");
    auto head = channel::decode_bytes_head(header, length);
    if (!head) fail_here(head.error().message);
    const wire::Bytes &bytes = head.value();
    std::span<std::byte> span = handlers.place_bytes ? handlers.place_bytes(bytes, length) : std::span<std::byte>();
    if (span.empty())
      fail_here(wire::words("BYTES for no GET (device ", bytes.device, ", value ", bytes.value, ", part ", bytes.part,
                            ", offset ", bytes.offset, ", ", wire::count_of(length, "bytes"), ")"));
    if (span.size() < length)
      fail_here(wire::words("BYTES of ", wire::count_of(length, "bytes"), " placed in a span of ", span.size()));
    return span.first(length);
  }

  void deliver(const UcxMessage &message) {
    const Phase now = current();
    if (!channel::is_wire_id(message.id)) return take_auth(message, now);
    auto decoded = channel::decode_message(message.id, message.header, message.data);
    if (!decoded) fail_here(decoded.error().message);
    const wire::Message &wired = decoded.value();
    const auto kind = wire::kind_of(wired);
    if (now == Phase::challenge || now == Phase::answer) fail_here(wire::a_kind(kind) + " before ACCEPT");
    if (now == Phase::devices) {
      if (kind != wire::Kind::Devices) fail_here(wire::a_kind(kind) + " before DEVICES");
      std::lock_guard lock(mutex);
      devices = channel::owned_accounts(std::get<wire::Devices>(wired));
      phase = Phase::open;
      changed.notify_all();
      return;
    }
    if (kind == wire::Kind::Devices) fail_here("a second DEVICES");
    if (handlers.message) handlers.message(wired);
    if (const auto *failure = std::get_if<wire::Failure>(&wired)) fail_here(std::string(failure->root_cause));
  }

  void take_auth(const UcxMessage &message, Phase now) {
    const bool expected = (message.id == kAuthChallengeId && now == Phase::challenge) ||
                          (message.id == kAuthAnswerId && now == Phase::answer);
    if (!expected) fail_here(channel::a_message_of(message.id) + (now == Phase::open ? " after DEVICES" : " out of turn"));
    std::lock_guard lock(mutex);
    const auto *first = reinterpret_cast<const uint8_t *>(message.data.data());
    std::vector<uint8_t> &to = message.id == kAuthChallengeId ? challenge : answer;
    to.assign(first, first + message.data.size());
    phase = message.id == kAuthChallengeId ? Phase::answer : Phase::devices;
    changed.notify_all();
  }

  // The handshake after the connect, or why it failed.
  std::optional<std::string> authenticate(const ClientKey &key, const std::string &hello) {
    const std::string ms = std::to_string(bound.count()) + " ms";
    if (!wait([&] { return phase != Phase::challenge; }))
      return failed ? failure : "no CHALLENGE from " + address + " in " + ms;
    auto proof = make_proof(challenge, key, std::span(reinterpret_cast<const uint8_t *>(hello.data()), hello.size()));
    if (!proof) return proof.error().message;
    UcxStatus sent = endpoint->send(kAuthProofId, {}, std::as_bytes(std::span(proof.value().bytes())));
    if (!sent.ok()) return sent.message();
    if (!wait([&] { return phase != Phase::answer; }))
      return failed ? failure : "no ACCEPT or REFUSE from " + address + " in " + ms;
    auto answered = check_answer(proof.value(), answer);
    if (!answered) return answered.error().message;
    if (!wait([&] { return phase == Phase::open; }))
      return failed ? failure : "no DEVICES from " + address + " in " + ms;
    return std::nullopt;
  }
};

// The channel over a connection that authenticated.
class UcxClientChannel final : public ClientChannel {
 public:
  explicit UcxClientChannel(std::unique_ptr<ClientState> state) : state_(std::move(state)) {}
  ~UcxClientChannel() override;
  const std::vector<MachineAccount> &devices() const override { return state_->devices; }
  const std::string &address() const override { return state_->address; }
  UcxStatus send(const wire::Message &message) override;
  bool failed() const override;
  std::string failure() const override;

 private:
  std::unique_ptr<ClientState> state_;
};

}  // namespace

Outcome<std::unique_ptr<ClientChannel>> ClientChannel::connect(const std::string &address, const ClientKey &key,
                                                              const Options &options, ChannelHandlers handlers) {
  if (options.hello.size() > kHelloMax)
    return Failure{wire::words("a hello of ", wire::count_of(options.hello.size(), "bytes"), ", at most ", kHelloMax)};
  auto state = std::make_unique<ClientState>();
  state->handlers = std::move(handlers);
  state->address = address;
  state->bound = options.ucx.failure_bound;
  ClientState *raw = state.get();
  auto link = channel::make_link(
      options.ucx,
      [raw](UcxEndpoint &, uint16_t id, std::span<const std::byte> header, size_t length) {
        return raw->place(id, header, length);
      },
      [raw](const UcxMessage &message) { raw->deliver(message); });
  if (!link.ok()) return Failure{link.message()};
  state->link = std::move(link.value());
  auto endpoint = state->link->connect(address);
  if (!endpoint.ok()) return Failure{endpoint.message()};
  state->endpoint = endpoint.value();
  state->endpoint->on_failure([raw](const std::string &why) { raw->fail(why); });
  if (auto why = state->authenticate(key, options.hello)) return Failure{*why};
  {
    // A FAILURE may follow DEVICES at once (an agent with no room for
    // another client) and arrive before the owner's failed() listens: it
    // is then connect's answer, or the owner would never hear of it.
    std::lock_guard lock(state->mutex);
    if (state->failed) return Failure{state->failure};
    state->telling = true;
  }
  return std::unique_ptr<ClientChannel>(new UcxClientChannel(std::move(state)));
}

UcxClientChannel::~UcxClientChannel() {
  {
    std::lock_guard lock(state_->mutex);
    state_->telling = false;
  }
  // The agent closes the connection on CLOSE; until it has, the CLOSE may
  // still be in flight, which closing here would drop.
  if (!failed() && send(wire::Close{}).ok()) (void)state_->wait([] { return false; });
}

UcxStatus UcxClientChannel::send(const wire::Message &message) {
  const std::string wrong = channel::direction_problem(wire::kind_of(message), false);
  if (!wrong.empty()) return UcxStatus::failure(wrong);
  if (failed()) return UcxStatus::failure(failure());
  UcxStatus sent = channel::send_message(*state_->endpoint, message);
  if (!sent.ok() && state_->endpoint->failed()) state_->fail(sent.message());
  return sent;
}

bool UcxClientChannel::failed() const {
  std::lock_guard lock(state_->mutex);
  return state_->failed;
}

std::string UcxClientChannel::failure() const {
  std::lock_guard lock(state_->mutex);
  return state_->failure;
}

}  // namespace rig::net
