// A test process that names itself (its command, /proc/self/comm, which
// rigd reads as a client connects) for as long as a CommandNamed lasts:
// clients choose their names, control characters included.
#pragma once

#include <criterion/criterion.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>

// This process named name (its command, which rigd reads from /proc) for
// as long as it lasts.
class CommandNamed {
 public:
  explicit CommandNamed(const std::string &name) : was_(command()) { name_as(name); }
  ~CommandNamed() { name_as(was_); }
  CommandNamed(const CommandNamed &) = delete;
  CommandNamed &operator=(const CommandNamed &) = delete;

 private:
  static std::string command() {
    char name[64] = {};
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, name, sizeof name - 1) : -1;
    if (fd >= 0) close(fd);
    std::string command(name, n > 0 ? static_cast<size_t>(n) : 0);
    if (!command.empty() && command.back() == '\n') command.pop_back();
    return command;
  }
  static void name_as(const std::string &name) {
    int fd = open("/proc/self/comm", O_WRONLY | O_CLOEXEC);
    cr_assert(fd >= 0 && write(fd, name.data(), name.size()) == static_cast<ssize_t>(name.size()) && close(fd) == 0,
              "naming this process %s", name.c_str());
  }

  std::string was_;
};
