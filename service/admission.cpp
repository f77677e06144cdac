// rigd's admission (admission.hpp).
#include "admission.hpp"
#include "notify.hpp"

#include "admin.hpp"
#include "descriptors.hpp"
#include "exports.hpp"
#include "hello.hpp"
#include "log.hpp"
#include "peer.hpp"
#include "refusal.hpp"
#include "refusal_log.hpp"
#include "session.hpp"
#include "user_clients.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace rigd {

namespace {

using Clock = std::chrono::steady_clock;

// Connections accepted in one turn of the loop, before it reads hellos.
constexpr int accepts_per_turn = 64;

[[noreturn]] void fail(const char *what) { throw std::system_error(errno, std::generic_category(), what); }

class Admission {
 public:
  Admission(const Listener &listener, int signals, const ServedDevices &served, const Policy &policy,
            const std::function<Policy()> &reread, Exports &exports, UserClients &users);
  ~Admission();
  Admission(const Admission &) = delete;
  Admission &operator=(const Admission &) = delete;

  // Serves until an ending signal.
  void run();
  // The policy now: the last one reloaded.
  const Policy &policy() const noexcept { return *policy_; }
  std::shared_ptr<const Policy> shared_policy() const noexcept { return policy_; }
  // The machine agent whose clients' policy each reload sets too, or NULL.
  void set_machine_agent(MachineAgent *agent) noexcept { agent_ = agent; }
  // Stops every session and waits until they ended, or deadline; answers
  // whether they all did.
  bool end_sessions(Clock::time_point deadline);

 private:
  // A connection whose credentials rigd admitted (and counted under its
  // user), until its hello comes or its deadline passes.  One the policy
  // does not admit as a client is pending only where it may use the admin
  // channel (admin_refusal), which its hello must then ask for.
  struct Pending {
    int socket;
    Peer peer;
    bool client;  // the policy admits it as a client
    Clock::time_point deadline;
    Hello hello;
  };
  using PendingList = std::list<Pending>;  // in deadline order

  int wait_ms() const;
  void accept_some();
  // Accepts one connection; false where none is waiting or none can be
  // taken now.
  bool accept_one();
  // At EMFILE: accepts the waiting connection with the reserve's
  // descriptor and refuses it.
  bool refuse_past_the_limit();
  void pause_accepting();
  void resume_accepting();
  // A connection just accepted: its credentials checked and counted, or
  // refused.
  void greet(int socket);
  void read_hello(PendingList::iterator p);
  void admit(PendingList::iterator p);
  // Forgets the pending connection, closes it and counts it out.
  void drop(PendingList::iterator p);
  void expire();
  void reap();
  void watch(int fd, uint32_t events);
  // Reads a signal: true for an ending one; SIGHUP reloads the policy.
  bool ends_at_signal();
  void reload();

  const Listener &listener_;
  int signals_;
  const ServedDevices &served_;
  // Each session keeps the policy it was admitted under.
  std::shared_ptr<const Policy> policy_;
  const std::function<Policy()> &reread_;
  Exports &exports_;
  UserClients &users_;
  int epoll_ = -1;
  int ended_ = -1;  // an eventfd each session writes as it ends
  ReserveDescriptor reserve_;
  bool accepting_ = true;
  Clock::time_point resume_at_{};
  PendingList pending_;
  std::unordered_map<int, PendingList::iterator> pending_by_socket_;
  std::list<std::unique_ptr<Session>> sessions_;
  MachineAgent *agent_ = nullptr;
};

Admission::Admission(const Listener &listener, int signals, const ServedDevices &served, const Policy &policy,
                     const std::function<Policy()> &reread, Exports &exports, UserClients &users)
    : listener_(listener),
      signals_(signals),
      served_(served),
      policy_(std::make_shared<const Policy>(policy)),
      reread_(reread),
      exports_(exports),
      users_(users) {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) fail("epoll_create1");
  ended_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (ended_ < 0) {
    close(epoll_);
    fail("eventfd");
  }
  // accept answers EAGAIN, never blocks, once the backlog is empty.
  fcntl(listener_.fd(), F_SETFL, fcntl(listener_.fd(), F_GETFL) | O_NONBLOCK);
  try {
    watch(listener_.fd(), EPOLLIN);
    watch(signals_, EPOLLIN);
    watch(ended_, EPOLLIN);
  } catch (...) {
    close(ended_);
    close(epoll_);
    throw;
  }
}

Admission::~Admission() {
  for (auto &s : sessions_) s->stop();
  sessions_.clear();
  for (const Pending &p : pending_) {
    close(p.socket);
    users_.leave(p.peer.uid);
  }
  close(ended_);
  close(epoll_);
}

void Admission::watch(int fd, uint32_t events) {
  epoll_event e{};
  e.events = events;
  e.data.fd = fd;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e) != 0) fail("epoll_ctl");
}

int Admission::wait_ms() const {
  auto now = Clock::now();
  std::optional<Clock::time_point> next;
  if (!pending_.empty()) next = pending_.front().deadline;
  if (!accepting_) next = next ? std::min(*next, resume_at_) : resume_at_;
  if (!next) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 60000));
}

void Admission::run() {
  constexpr int most_events = 64;
  epoll_event events[most_events];
  for (;;) {
    int n = epoll_wait(epoll_, events, most_events, wait_ms());
    if (n < 0 && errno != EINTR) fail("epoll_wait");
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      // No exception escapes the loop: what failed is one client's.
      try {
        if (fd == signals_) {
          if (ends_at_signal()) return;
        } else if (fd == listener_.fd()) {
          accept_some();
        } else if (fd == ended_) {
          reap();
        } else if (auto p = pending_by_socket_.find(fd); p != pending_by_socket_.end()) {
          read_hello(p->second);
        }
      } catch (const std::exception &e) {
        log_line(LogLevel::error, std::string("admission: ") + e.what());
      }
    }
    expire();
    if (!accepting_ && Clock::now() >= resume_at_) resume_accepting();
  }
}

bool Admission::ends_at_signal() {
  signalfd_siginfo signal{};
  if (read(signals_, &signal, sizeof signal) != static_cast<ssize_t>(sizeof signal)) return false;
  if (signal.ssi_signo != SIGHUP) {
    log_line(LogLevel::notice, std::string("stopping at SIG") + sigabbrev_np(static_cast<int>(signal.ssi_signo)) +
                                   " (from pid " + std::to_string(signal.ssi_pid) + ")");
    return true;
  }
  reload();
  return false;
}

void Admission::reload() {
  Policy reloaded;
  try {
    reloaded = reread_();
  } catch (const std::invalid_argument &e) {
    log_line(LogLevel::error, std::string("SIGHUP: the policy is kept: ") + e.what());
    return;
  }
  users_.set_bounds(reloaded.max_clients_per_user, reloaded.limits, reloaded.max_clients);
  policy_ = std::make_shared<const Policy>(std::move(reloaded));
  if (agent_) agent_->set_policy(policy_);
  log_line(LogLevel::notice, "SIGHUP: reloaded the policy");
}

bool Admission::end_sessions(Clock::time_point deadline) {
  for (auto &s : sessions_) s->stop();
  for (;;) {
    reap();
    if (sessions_.empty()) return true;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd ended{ended_, POLLIN, 0};
    poll(&ended, 1, static_cast<int>(std::min<long long>(left, 60000)));
  }
}

void Admission::accept_some() {
  for (int i = 0; i < accepts_per_turn && accepting_ && accept_one(); ++i) {
  }
}

bool Admission::accept_one() {
  int socket = accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (socket >= 0) {
    greet(socket);
    return true;
  }
  switch (errno) {
    case EINTR:
    case ECONNABORTED:
      return true;
    case EAGAIN:
      return false;
    case EMFILE:
    case ENFILE:
      return refuse_past_the_limit();
    default:  // ENOBUFS, ENOMEM: the kernel's memory, for a moment
      pause_accepting();
      return false;
  }
}

bool Admission::refuse_past_the_limit() {
  if (!reserve_.release()) {
    pause_accepting();
    return false;
  }
  int socket = accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (socket >= 0) {
    refuse(socket, "rigd has no file descriptor left for another client: its " + std::to_string(descriptor_limit()) +
                       " (RLIMIT_NOFILE) are open",
           "");
    close(socket);
  }
  // Another thread may take the descriptor first: rigd then pauses at the
  // next EMFILE, and takes the reserve again as descriptors come back.
  reserve_.take();
  return socket >= 0;
}

void Admission::pause_accepting() {
  if (!accepting_) return;
  epoll_event e{};
  e.data.fd = listener_.fd();
  epoll_ctl(epoll_, EPOLL_CTL_MOD, listener_.fd(), &e);
  accepting_ = false;
  resume_at_ = Clock::now() + accept_pause;
}

void Admission::resume_accepting() {
  reserve_.take();
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.fd = listener_.fd();
  epoll_ctl(epoll_, EPOLL_CTL_MOD, listener_.fd(), &e);
  accepting_ = true;
}

void Admission::greet(int socket) {
  std::string why;
  auto peer = peer_of(socket);
  bool client = peer && admits(*policy_, peer->uid, peer->gid, peer->groups);
  if (!peer)
    why = "rigd cannot read the client's credentials";
  else if (!client && !admin_refusal(*policy_, peer->uid, peer->gid, peer->groups).empty())
    why = "user " + std::to_string(peer->uid) + " is not admitted by rigd's policy";
  else if (!users_.join(peer->uid))
    why = users_.clients() >= users_.most_clients() && users_.most_clients() > 0
              ? "rigd has " + std::to_string(users_.most_clients()) +
                    " clients connected, the most its policy admits (max_clients)"
              : "user " + std::to_string(peer->uid) + " has " + std::to_string(users_.most()) +
                    " clients connected, the most rigd's policy admits (max_clients_per_user)";
  if (!why.empty()) {
    refuse(socket, why, peer ? describe(*peer) : "");
    close(socket);
    return;
  }
  try {
    pending_.push_back({socket, *peer, client, Clock::now() + hello_deadline, {}});
  } catch (...) {
    users_.leave(peer->uid);
    close(socket);
    throw;
  }
  auto p = std::prev(pending_.end());
  try {
    pending_by_socket_[socket] = p;
    watch(socket, EPOLLIN | EPOLLRDHUP);
  } catch (...) {
    drop(p);
    throw;
  }
}

void Admission::read_hello(PendingList::iterator p) {
  switch (p->hello.read(p->socket)) {
    case Hello::Read::partial:
      return;
    case Hello::Read::closed:
      return drop(p);
    case Hello::Read::complete:
      break;
  }
  if (std::string why = p->hello.refusal(); !why.empty()) {
    refuse(p->socket, why, describe(p->peer));
    return drop(p);
  }
  if (p->hello.admin()) {
    const Peer &peer = p->peer;
    if (std::string why = admin_refusal(*policy_, peer.uid, peer.gid, peer.groups); !why.empty())
      refuse_admin(p->socket, why);
    else
      answer_admin(p->socket, p->hello.admin_request(), {sessions_, served_, exports_, *policy_, agent_});
    return drop(p);
  }
  if (!p->client) {
    refuse(p->socket, "user " + std::to_string(p->peer.uid) + " is not admitted by rigd's policy",
           describe(p->peer));
    return drop(p);
  }
  admit(p);
}

void Admission::admit(PendingList::iterator p) {
  int socket = p->socket;
  Peer peer = std::move(p->peer);
  epoll_ctl(epoll_, EPOLL_CTL_DEL, socket, nullptr);
  pending_by_socket_.erase(socket);
  pending_.erase(p);
  // The session's socket blocks: its thread waits on it.
  fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) & ~O_NONBLOCK);
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(socket, peer, served_, policy_, exports_, users_, [this] {
      uint64_t one = 1;
      [[maybe_unused]] ssize_t n = write(ended_, &one, sizeof one);
    });
  } catch (const std::exception &e) {
    refuse(socket, std::string("rigd cannot make the client's thread: ") + e.what(), describe(peer));
    close(socket);
    users_.leave(peer.uid);
    return;
  }
  sessions_.push_back(std::move(session));
}

void Admission::drop(PendingList::iterator p) {
  epoll_ctl(epoll_, EPOLL_CTL_DEL, p->socket, nullptr);
  close(p->socket);
  users_.leave(p->peer.uid);
  pending_by_socket_.erase(p->socket);
  pending_.erase(p);
}

void Admission::expire() {
  auto now = Clock::now();
  while (!pending_.empty() && pending_.front().deadline <= now) {
    log_refusal("closed a connection (" + describe(pending_.front().peer) + ") that sent no hello in " +
                std::to_string(hello_deadline.count()) + " s");
    drop(pending_.begin());
  }
}

void Admission::reap() {
  uint64_t count;
  [[maybe_unused]] ssize_t n = read(ended_, &count, sizeof count);
  // An ended session's socket closes here, as it ends, not at the next
  // connection.
  sessions_.remove_if([](const auto &s) { return s->ended(); });
  if (!reserve_.held()) reserve_.take();
}

// Past the shutdown deadline: what still runs waits on clients' devices,
// which rigd leaves as they are (their threads, its devices unclosed).
[[noreturn]] void abandon(const ServedDevices &served, const Listener &listener, int64_t deadline_ms) {
  std::string names;
  for (const std::string &name : served.busy()) names += " " + name;
  if (names.empty()) names = " (none held)";
  log_line(LogLevel::error, "shutdown_deadline_ms (" + std::to_string(deadline_ms) +
                                " ms) passed: abandoned the devices still busy:" + names);
  listener.remove_socket();
  _exit(1);
}

}  // namespace

void serve_clients(const Listener &listener, int signals, const ServedDevices &served, const Policy &policy,
                   const std::function<Policy()> &reread, std::optional<MachineListen> machines) {
  Clock::time_point deadline;
  int64_t deadline_ms;
  {
    // Declared first: the sessions end, and let go of their exports, before
    // the table goes.
    Exports exports(served);
    UserClients users(policy.max_clients_per_user, policy.limits, policy.max_clients);
    Admission admission(listener, signals, served, policy, reread, exports, users);
    // Its sessions end before the local ones' table and counts go.
    std::optional<MachineAgent> agent;
    if (machines) {
      agent.emplace(std::move(*machines), served, admission.shared_policy(), exports, users);
      admission.set_machine_agent(&*agent);
    }
    notify_systemd("READY=1");
    admission.run();
    notify_systemd("STOPPING=1");
    deadline_ms = admission.policy().shutdown_deadline_ms;
    deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
    if (!admission.end_sessions(deadline) || (agent && !agent->end_sessions(deadline)))
      abandon(served, listener, deadline_ms);
  }
  if (!served.finish_releases(deadline)) abandon(served, listener, deadline_ms);
}

}  // namespace rigd
