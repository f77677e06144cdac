// The built rigd, started by a test on a socket of its own.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

// A running rigd; its end stops it (stop_rigd) and removes its directory.
struct RigdProcess {
  pid_t pid = -1;
  std::string directory;  // a temporary directory of the test's
  std::string socket;     // directory/rigd.sock
  int notify = -1;        // rigd's NOTIFY_SOCKET, the test's end: what rigd tells systemd

  RigdProcess(pid_t p, std::string d, std::string s) : pid(p), directory(std::move(d)), socket(std::move(s)) {}
  RigdProcess(RigdProcess &&other) noexcept
      : pid(std::exchange(other.pid, -1)),
        directory(std::move(other.directory)),
        socket(std::move(other.socket)),
        notify(std::exchange(other.notify, -1)) {}
  RigdProcess &operator=(RigdProcess &&) = delete;
  ~RigdProcess();
};

// A temporary directory for a rigd's socket and files.
std::string make_temporary_directory();

// Starts rigd (RIGD_PATH) with --socket directory/rigd.sock --foreground and
// arguments, and returns once rigd has said READY=1 on its NOTIFY_SOCKET
// (an abstract socket of the test's, rigd.notify), as systemd learns that
// rigd serves: its admission loop runs, its start-up's descriptors are open.  With listen_fd >= 0
// rigd gets that socket by activation (LISTEN_FDS) instead.  in_child runs
// in rigd's process before it execs (a test's limits on rigd: setrlimit,
// setuid).  Fails the test if rigd exits first.
RigdProcess start_rigd(const std::vector<std::string> &arguments, int listen_fd = -1,
                       std::string directory = make_temporary_directory(),
                       const std::function<void()> &in_child = {});

// start_rigd with --config, a file of config_text in rigd's directory.
RigdProcess start_rigd_with_config(std::vector<std::string> arguments, const std::string &config_text,
                                   const std::function<void(const std::string &directory)> &in_child = {});

// The next datagram rigd sends its NOTIFY_SOCKET within 10 s, "" if none.
std::string next_notification(const RigdProcess &rigd);

// Sends rigd SIGTERM and returns its wait status.  rigd also gets SIGTERM
// if the test process dies first.
int stop_rigd(RigdProcess &rigd);
