// The log of a rigd a test started (rigd_log.hpp).
#include "rigd_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

void log_to_file(const std::string &directory, bool journal) {
  int fd = open((directory + "/rigd.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) _exit(126);
  dup2(fd, STDERR_FILENO);
  if (journal) {
    struct stat st{};
    fstat(STDERR_FILENO, &st);
    setenv("JOURNAL_STREAM", (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)).c_str(), 1);
  }
}

std::vector<std::string> lines_of(const RigdProcess &rigd) {
  std::ifstream in(rigd.directory + "/rigd.log");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> lines_with(const RigdProcess &rigd, const std::vector<std::string> &words) {
  std::vector<std::string> found;
  for (const std::string &line : lines_of(rigd)) {
    bool all = true;
    for (const std::string &w : words) all = all && line.find(w) != std::string::npos;
    if (all) found.push_back(line);
  }
  return found;
}

std::vector<std::string> await_lines(const RigdProcess &rigd, const std::vector<std::string> &words, size_t n) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::vector<std::string> found;
  while ((found = lines_with(rigd, words)).size() < n && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return found;
}

std::string whole_log(const RigdProcess &rigd) {
  std::ostringstream all;
  for (const std::string &line : lines_of(rigd)) all << line << '\n';
  return all.str();
}
