// The built rig tool, run by a test (tool_run.hpp).
#include "tool_run.hpp"

#include "client_process.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

ToolRun run_rig(const std::vector<std::string> &arguments, const std::function<void()> &in_child) {
  int out[2], err[2];
  cr_assert(pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0);
  std::vector<std::string> words = {"rig"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char *> argv;
  for (auto &w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  cr_assert(pid >= 0, "fork");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (in_child) in_child();
    execv(RIG_TOOL_PATH, argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  ToolRun run;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string *into[2] = {&run.out, &run.err};
  for (int open = 2; open > 0;) {
    int n = poll(fds, 2, 60000);
    cr_assert(n > 0, "rig %s ran past 60 s", arguments.empty() ? "" : arguments[0].c_str());
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      char buffer[4096];
      ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
      if (got > 0) {
        into[i]->append(buffer, static_cast<size_t>(got));
        continue;
      }
      close(fds[i].fd);
      fds[i].fd = -1;
      --open;
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}
