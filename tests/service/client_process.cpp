// Client processes of a test of rigd (client_process.hpp).
#include "client_process.hpp"

#include <criterion/criterion.h>

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

// Closes every fd from 3 on but those of keep.
void close_all_but(std::initializer_list<int> keep) {
  std::vector<int> kept(keep);
  std::sort(kept.begin(), kept.end());
  unsigned first = 3;
  for (int fd : kept) {
    if (fd < static_cast<int>(first)) continue;
    if (static_cast<unsigned>(fd) > first) close_range(first, static_cast<unsigned>(fd) - 1, 0);
    first = static_cast<unsigned>(fd) + 1;
  }
  close_range(first, UINT_MAX, 0);
}

}  // namespace

pid_t fork_client(const std::function<int()> &body, std::initializer_list<int> keep) {
  pid_t pid = fork();
  cr_assert(pid >= 0, "fork");
  if (pid > 0) return pid;
  // A client outlives no test, failed or not.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  close_all_but(keep);
  int status = 1;
  try {
    status = body();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "client %d: %s\n", static_cast<int>(getpid()), e.what());
  }
  _exit(status);
}

int await_client(pid_t pid, int timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    cr_assert(done == 0, "waitpid");
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      cr_assert_fail("client %d did not end within %d s", static_cast<int>(pid), timeout_s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool ended_cleanly(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

void run_beside_steady(const std::function<int(int)> &steady, const std::function<int()> &disturbing,
                       const char *disturbing_checks, const char *steady_checks) {
  Channel link;
  pid_t steady_pid = fork_client([&] { return steady(link.ends[1]); }, {link.ends[1]});
  link.close_end(1);
  uint64_t ready = 0;
  cr_assert(receive_value(link.ends[0], ready, client_start_ms), "the steady client started");
  cr_assert(ended_cleanly(await_client(fork_client(disturbing), client_end_s)), "%s", disturbing_checks);
  // The steady client runs on past the other one.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  cr_assert(!readable(link.ends[0]), "the steady client runs on");
  cr_assert(send_value(link.ends[0], 0));
  uint64_t rounds = 0;
  cr_assert(receive_value(link.ends[0], rounds, client_start_ms) && rounds > 0, "the steady client ran");
  cr_assert(ended_cleanly(await_client(steady_pid, client_end_s)), "%s", steady_checks);
}

void run_linked_pair(const std::function<int(int)> &first, const char *first_checks,
                     const std::function<int(int)> &second, const char *second_checks) {
  Channel link;
  pid_t one = fork_client([&] { return first(link.ends[0]); }, {link.ends[0]});
  pid_t two = fork_client([&] { return second(link.ends[1]); }, {link.ends[1]});
  link.close_end(0);
  link.close_end(1);
  cr_assert(ended_cleanly(await_client(one, client_end_s)), "%s", first_checks);
  cr_assert(ended_cleanly(await_client(two, client_end_s)), "%s", second_checks);
}

pid_t start_on_link(Channel &link, const std::function<int(int)> &body, const char *started) {
  int end = link.ends[1];
  pid_t pid = fork_client([&] { return body(end); }, {end});
  link.close_end(1);
  uint64_t v;
  cr_assert(receive_value(link.ends[0], v, client_start_ms), "%s", started);
  return pid;
}

void require(bool condition, const char *format, ...) {
  if (condition) return;
  char why[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(why, sizeof why, format, args);
  va_end(args);
  throw std::runtime_error(why);
}

Channel::Channel() { cr_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0); }

Channel::~Channel() {
  close_end(0);
  close_end(1);
}

void Channel::close_end(int i) {
  if (ends[i] >= 0) close(ends[i]);
  ends[i] = -1;
}

bool send_value(int fd, uint64_t v) {
  ssize_t n;
  while ((n = send(fd, &v, sizeof v, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(sizeof v);
}

bool receive_value(int fd, uint64_t &v, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto *bytes = reinterpret_cast<char *>(&v);
  size_t got = 0;
  while (got < sizeof v) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) return false;
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t n = read(fd, bytes + got, sizeof v - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

uint64_t exchange(int link, uint64_t v, const char *gone) {
  uint64_t answer = 0;
  require(send_value(link, v) && receive_value(link, answer, client_start_ms), "%s", gone);
  return answer;
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

int64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}
