// One remote client's session (remote_session.hpp).
#include "remote_session.hpp"

#include "account.hpp"
#include "client_objects.hpp"
#include "completions.hpp"
#include "log.hpp"
#include "remote_accounts.hpp"
#include "remote_client.hpp"
#include "remote_reports.hpp"
#include "requests.hpp"
#include "session.hpp"
#include "wire_bounds.hpp"
#include "contexts.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <string_view>
#include <variant>
#include <vector>

namespace rigd {

namespace wire = rig::net::wire;

namespace {

// How long the session waits for a message before it looks whether it
// stops.
constexpr std::chrono::milliseconds message_wait{200};
// How long a failed job's connection stays open for the client to close it:
// the link's failure bound (UcxOptions'), past which it would fail anyway.
const std::chrono::milliseconds linger_bound = rig::net::UcxOptions{}.failure_bound;

// A text cut to the wire's bound on its field (wire_bounds.hpp), which a
// device's reason may pass: a message past it would not be sent at all.
std::string_view at_most(std::string_view text, size_t bound) { return text.substr(0, bound); }

}  // namespace

RemoteSession::RemoteSession(std::shared_ptr<rig::net::AgentConnection> connection, const ServedDevices &served,
                             std::shared_ptr<const Policy> policy, Exports &exports, UserClients &users,
                             std::function<void()> on_end)
    : connection_(std::move(connection)),
      served_(served),
      policy_(std::move(policy)),
      exports_(exports),
      users_(users),
      client_(next_client_number()),
      who_("remote client " + std::to_string(client_) + " (key " + connection_->key_id() + ", " +
           connection_->peer() + ")"),
      counters_(client_, 0, remote_user, connection_->hello(), served.size()),
      on_end_(std::move(on_end)),
      thread_([this] {
        auto since = std::chrono::steady_clock::now();
        std::string ended;
        try {
          ended = serve_job();
        } catch (const std::exception &e) {
          ended = std::string("rigd ended its session: ") + e.what();
          fail_job(ended);
        }
        // Once what the client held went back.
        char after[64];
        std::snprintf(after, sizeof after, " after %.1f s",
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count());
        log_line(LogLevel::info, who_ + " left (" + ended + ")" + after);
        linger();
        connection_->close();
        users_.leave(remote_user);
        ended_.store(true, std::memory_order_release);
        on_end_();
      }) {}

RemoteSession::~RemoteSession() {
  stop();
  thread_.join();
}

void RemoteSession::stop() noexcept {
  stopping_.store(true, std::memory_order_release);
  closing_.store(true, std::memory_order_release);
  connection_->close();
}

bool RemoteSession::drop() noexcept {
  if (ended() || stopping_.load(std::memory_order_acquire)) return false;
  stop();
  return true;
}

void RemoteSession::fail_job(const std::string &why) noexcept {
  bool first = false;
  std::call_once(failed_, [&] { first = true; });
  if (!first) return;
  job_failed_.store(true, std::memory_order_release);
  closing_.store(true, std::memory_order_release);
  // Out of memory for the line or the message, the client still hears of
  // the failure as its link closes.
  try {
    log_line(LogLevel::warning, who_ + ": its job failed: " + why);
    // The link may have failed first: the client then hears its own reason.
    std::string_view cause = why.empty() ? std::string_view("rigd failed the job") : at_most(why, wire::kRootCauseMax);
    [[maybe_unused]] rig::net::UcxStatus sent = connection_->send(wire::Failure{cause});
  } catch (const std::exception &) {
    job_failed_.store(false, std::memory_order_release);
  }
}

void RemoteSession::linger() noexcept {
  if (!job_failed_.load(std::memory_order_acquire)) return;
  auto deadline = std::chrono::steady_clock::now() + linger_bound;
  while (!stopping_.load(std::memory_order_acquire) && !connection_->failed() &&
         std::chrono::steady_clock::now() < deadline)
    connection_->next(message_wait);
}

std::shared_ptr<const std::vector<uint8_t>> RemoteSession::kept_bytes(std::vector<uint8_t> bytes) {
  // The message's views keep pointing into the bytes as they move; once
  // rig is done with them (a PUT's copy reads them in place), the next
  // message lands in them, where the connection is still there.
  std::weak_ptr<rig::net::AgentConnection> connection = connection_;
  return std::shared_ptr<const std::vector<uint8_t>>(
      new std::vector<uint8_t>(std::move(bytes)), [connection](const std::vector<uint8_t> *kept) {
        std::unique_ptr<std::vector<uint8_t>> owned(const_cast<std::vector<uint8_t> *>(kept));
        if (auto c = connection.lock()) c->give_back(std::move(*owned));
      });
}

std::string RemoteSession::serve_job() {
  // Declared in the order a local session's are: what the client holds is
  // counted out last, its values are waited for before its memory goes.
  Account account(users_, remote_user, counters_.held);
  ClientObjects objects(account, &counters_);
  RemoteReports reports(objects, *connection_, served_.size());
  // The client's words are rigd's own memory: the link carries them.
  std::vector<uint64_t> words(served_.size() * RIG_PROXY_WORD_BYTES / sizeof(uint64_t));
  uint32_t sleepers = 0;
  size_t devices = served_.size();
  // On the completion threads: nothing may leave them but the job's end.
  CompletionHooks hooks{
      [this, &reports, devices](uint32_t, size_t device, uint64_t value) {
        try {
          reports.report(account_of_served(device, devices), value);
        } catch (const std::exception &e) {
          fail_job(std::string("rigd cannot send the bytes of a GET: ") + e.what());
        }
      },
      [this](uint32_t, const std::string &why) { fail_job(why); }};
  Completions completions(reinterpret_cast<std::byte *>(words.data()), static_cast<uint32_t>(served_.size()),
                          &sleepers, served_, counters_, who_, std::move(hooks));
  Requests requests(served_, exports_, client_, remote_user, objects, completions, {nullptr, 0},
                    static_cast<uint32_t>(served_.size()), *policy_, counters_);
  requests.set_trust_domain(key_domain(connection_->key_id()));
  requests.serve_remote_client();
  RemoteClient client(served_, requests, objects, reports);
  log_line(LogLevel::info, who_ + " connected");
  std::string ended = "closed";
  while (!closing_.load(std::memory_order_acquire)) {
    std::optional<rig::net::ReceivedMessage> received = connection_->next(message_wait);
    if (!received) {
      if (!connection_->failed()) continue;
      ended = "its link failed: " + connection_->failure();
      break;
    }
    std::optional<std::string> breach = std::visit(
        [&](const auto &m) -> std::optional<std::string> {
          using M = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<M, wire::Request>) {
            RemoteAnswer a;
            std::optional<std::string> b = client.request(m, a);
            if (!b)
              (void)connection_->send(wire::Answer{m.number, a.status, a.value, a.detail, at_most(a.why, wire::kWhyMax)});
            return b;
          } else if constexpr (std::is_same_v<M, wire::Release>) {
            return client.release(m);
          } else if constexpr (std::is_same_v<M, wire::Handover>) {
            return client.hand_over(m, kept_bytes(std::move(received->bytes)));
          } else if constexpr (std::is_same_v<M, wire::Close>) {
            closing_.store(true, std::memory_order_release);
          } else if constexpr (std::is_same_v<M, wire::Failure>) {
            ended = "it gave up: " + std::string(m.root_cause);
            closing_.store(true, std::memory_order_release);
          } else {
            return std::string("a client sends no ") + wire::kind_name(static_cast<uint16_t>(wire::kind_of(m)));
          }
          return std::nullopt;
        },
        received->message);
    if (breach) fail_job(*breach);
  }
  if (job_failed_.load(std::memory_order_acquire)) ended = "its job failed";
  return ended;
}

}  // namespace rigd
