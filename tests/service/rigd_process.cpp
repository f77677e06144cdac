// The built rigd, started by a test (rigd_process.hpp).
#include "rigd_process.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace {

bool accepts(const std::string &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool connected = connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
  close(fd);
  return connected;
}

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
  rigd.pid = fork();
  cr_assert(rigd.pid >= 0);
  if (rigd.pid == 0) {
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
  // Waits until rigd accepts: a readiness check, not a timing.
  while (!accepts(rigd.socket)) {
    int status;
    cr_assert(waitpid(rigd.pid, &status, WNOHANG) == 0, "rigd exited before it accepted: status %#x", status);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
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

int stop_rigd(RigdProcess &rigd) {
  int status = -1;
  kill(rigd.pid, SIGTERM);
  waitpid(rigd.pid, &status, 0);
  rigd.pid = -1;
  return status;
}

RigdProcess::~RigdProcess() {
  if (pid > 0) stop_rigd(*this);
  if (!directory.empty()) std::filesystem::remove_all(directory);
}
