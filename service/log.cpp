// rigd's log (log.hpp).
#include "log.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace rigd {

namespace {

struct Name {
  const char *name;
  LogLevel level;
};
constexpr Name names[] = {{"error", LogLevel::error},
                          {"warning", LogLevel::warning},
                          {"notice", LogLevel::notice},
                          {"info", LogLevel::info},
                          {"debug", LogLevel::debug}};

std::atomic<int> level_set{static_cast<int>(default_log_level)};

// Whether stderr is the journal's stream: JOURNAL_STREAM is its
// "device:inode", which a stderr redirected elsewhere no longer matches.
bool stderr_is_journal() noexcept {
  const char *stream = std::getenv("JOURNAL_STREAM");
  if (!stream) return false;
  unsigned long long device = 0, inode = 0;
  struct stat st{};
  return std::sscanf(stream, "%llu:%llu", &device, &inode) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
         st.st_dev == device && st.st_ino == inode;
}

}  // namespace

LogLevel parse_log_level(std::string_view name) {
  for (const Name &n : names)
    if (name == n.name) return n.level;
  throw std::invalid_argument("the log level is error, warning, notice, info or debug, not " + std::string(name));
}

void set_log_level(LogLevel level) noexcept { level_set.store(static_cast<int>(level), std::memory_order_relaxed); }

bool logs(LogLevel level) noexcept { return static_cast<int>(level) <= level_set.load(std::memory_order_relaxed); }

void log_line(LogLevel level, std::string_view text) noexcept {
  if (!logs(level)) return;
  static const bool journal = stderr_is_journal();
  // Longer lines are cut: a line never needs a heap here.
  char line[2048];
  int n = journal ? std::snprintf(line, sizeof line, "<%d>%.*s\n", static_cast<int>(level),
                                  static_cast<int>(text.size()), text.data())
                  : std::snprintf(line, sizeof line, "rigd: %.*s\n", static_cast<int>(text.size()), text.data());
  if (n <= 0) return;
  size_t bytes = static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1;
  line[bytes - 1] = '\n';
  for (size_t at = 0; at < bytes;) {
    ssize_t wrote = write(STDERR_FILENO, line + at, bytes - at);
    if (wrote <= 0) return;
    at += static_cast<size_t>(wrote);
  }
}

}  // namespace rigd
