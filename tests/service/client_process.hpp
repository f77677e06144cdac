// Client processes of a test of rigd.  The test's own process never calls
// librig: it forks each client first, so that no rig device or connection
// crosses a fork, and learns each client's outcome from its exit status
// (a client's failed check prints why on stderr).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <initializer_list>

// What a client may take to connect and set up, and to end, on a loaded
// host: bounds that only a hang reaches.
inline constexpr int client_start_ms = 30000;
inline constexpr int client_end_s = 30;

// Forks a client that runs body and exits (_exit) with what it returns, or
// 1 where it throws.  The client keeps only stdin, stdout, stderr and the
// fds of keep open, so that it holds no other end of the test's pipes or
// sockets.
pid_t fork_client(const std::function<int()> &body, std::initializer_list<int> keep = {});

// Waits up to timeout_s for pid to end and answers its wait status; kills
// it (SIGKILL) and fails the test where it does not end in time.
int await_client(pid_t pid, int timeout_s);

// Whether a wait status is an exit with status 0.
bool ended_cleanly(int status);

// In a client: throws, so that the client exits 1 having printed why,
// unless condition holds.
void require(bool condition, const char *format, ...) __attribute__((format(printf, 2, 3)));

// A connected pair of sockets between two processes: each keeps one end,
// and closes the other, so that a side that goes shows as end of file.
struct Channel {
  int ends[2] = {-1, -1};
  Channel();
  Channel(const Channel &) = delete;
  Channel &operator=(const Channel &) = delete;
  ~Channel();
  void close_end(int i);
};

// Runs two clients linked by a Channel, each body given its end, waits for
// both and fails the test with first_checks or second_checks (what each
// client's clean exit means) where one does not end cleanly.
void run_linked_pair(const std::function<int(int)> &first, const char *first_checks,
                     const std::function<int(int)> &second, const char *second_checks);

// Forks a client that runs body with its end of link (ends[1], which the
// test's process then closes) and returns once the client has sent a
// value on it, failing the test with started where it does not within
// client_start_ms.  The test keeps ends[0]: closing it tells the client
// to end, where body waits for that.
pid_t start_on_link(Channel &link, const std::function<int(int)> &body, const char *started);

// Runs steady as a client, given its end of a link: it sends a value once
// it runs, runs until the test sends on the link, then sends how many
// rounds it ran.  Once it runs, runs disturbing as another client and
// waits for it, failing the test with disturbing_checks unless it ends
// cleanly; then fails it with steady_checks unless the steady client ran
// on through it and after, and ended cleanly.
void run_beside_steady(const std::function<int(int)> &steady, const std::function<int()> &disturbing,
                       const char *disturbing_checks, const char *steady_checks);

// Sends v whole; false if the peer is gone.
bool send_value(int fd, uint64_t v);
// Reads a whole value within timeout_ms; false at end of file, on an error
// or once the time is up.
bool receive_value(int fd, uint64_t &v, int timeout_ms);
// In a client: sends v on link and answers the value the peer sends back
// within client_start_ms; throws (require) with gone where the peer goes.
uint64_t exchange(int link, uint64_t v, const char *gone);
// Whether fd has something to read (or its peer is gone), now.
bool readable(int fd);

// CLOCK_MONOTONIC in nanoseconds: one clock for every process of the host.
int64_t monotonic_ns();
