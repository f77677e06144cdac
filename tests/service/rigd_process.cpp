// The built rigd, started by a test (rigd_process.hpp).
#include "rigd_process.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace {

// A datagram socket bound at an abstract name of its own, standing for
// systemd's NOTIFY_SOCKET; its name goes in the socket's address, "@..."
// as NOTIFY_SOCKET spells an abstract name.  Abstract names need no
// permission, so a rigd that in_child runs as another user reaches it.
int notify_socket(std::string &name) {
  static int made = 0;
  name = "@rigd-test-notify-" + std::to_string(getpid()) + "-" + std::to_string(made++);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.c_str() + 1, name.size() - 1);
  auto bytes = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  cr_assert(fd >= 0 && bind(fd, reinterpret_cast<sockaddr *>(&address), bytes) == 0, "a notify socket: %s",
            std::strerror(errno));
  return fd;
}

// The next datagram on fd within ms, "" if none came.
std::string datagram_within(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) return "";
  char text[256];
  ssize_t n = recv(fd, text, sizeof text, 0);
  return n > 0 ? std::string(text, static_cast<size_t>(n)) : "";
}

// How long a rigd may take to say READY=1: generous for a sanitized build
// on a loaded machine.
constexpr auto ready_bound = std::chrono::seconds(60);

}  // namespace

std::string make_temporary_directory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "rigd-test-XXXXXX").string();
  cr_assert(mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

RigdProcess start_rigd(const std::vector<std::string> &arguments, int listen_fd, std::string directory,
                       const std::function<void()> &in_child) {
  RigdProcess rigd{-1, directory, directory + "/rigd.sock"};
  std::vector<std::string> words = {"rigd", "--socket", rigd.socket, "--foreground"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char *> argv;
  for (auto &w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::string notify_name;
  rigd.notify = notify_socket(notify_name);
  rigd.pid = fork();
  cr_assert(rigd.pid >= 0);
  if (rigd.pid == 0) {
    setenv("NOTIFY_SOCKET", notify_name.c_str(), 1);
    if (listen_fd >= 0) {
      // dup2 clears close-on-exec, but not of an fd that is already 3.
      if (listen_fd == 3) fcntl(3, F_SETFD, 0);
      dup2(listen_fd, 3);
      setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
      setenv("LISTEN_FDS", "1", 1);
    }
    if (in_child) in_child();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    execv(RIGD_PATH, argv.data());
    _exit(127);
  }
  // Waits for READY=1: a readiness check, not a timing.
  auto deadline = std::chrono::steady_clock::now() + ready_bound;
  std::string said;
  while (said != "READY=1") {
    int status;
    cr_assert(waitpid(rigd.pid, &status, WNOHANG) == 0, "rigd exited before it was ready: status %#x", status);
    cr_assert(std::chrono::steady_clock::now() < deadline, "rigd said no READY=1 in %lld s (last: \"%s\")",
              static_cast<long long>(ready_bound.count()), said.c_str());
    if (std::string next = datagram_within(rigd.notify, 50); !next.empty()) said = next;
  }
  return rigd;
}

RigdProcess start_rigd_with_config(std::vector<std::string> arguments, const std::string &config_text,
                                   const std::function<void(const std::string &directory)> &in_child) {
  std::string directory = make_temporary_directory();
  std::string config = directory + "/rigd.conf";
  std::ofstream(config) << config_text;
  arguments.insert(arguments.end(), {"--config", config});
  return start_rigd(arguments, -1, directory, in_child ? [&] { in_child(directory); } : std::function<void()>());
}

std::string next_notification(const RigdProcess &rigd) { return datagram_within(rigd.notify, 10000); }

int stop_rigd(RigdProcess &rigd) {
  int status = -1;
  kill(rigd.pid, SIGTERM);
  waitpid(rigd.pid, &status, 0);
  rigd.pid = -1;
  return status;
}

RigdProcess::~RigdProcess() {
  if (pid > 0) stop_rigd(*this);
  if (notify >= 0) close(notify);
  if (!directory.empty()) std::filesystem::remove_all(directory);
}
