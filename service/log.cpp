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

bool utf8_continuation(char c) noexcept { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// Copies text into out, of room bytes at most, each control character (a
// byte below 0x20, and 0x7f) and backslash as \xNN, and answers the bytes
// written.  A line holds clients' text (a configuration rigd refuses, a
// peer's command): a newline of theirs must not end the line and begin one
// that the journal would take as rigd's, at a priority of their choosing,
// and a backslash of theirs must not pass for one of rigd's escapes.
// Other bytes, UTF-8's included, pass as they are; text that does not fit
// is cut before a character, never inside one.
size_t escape(std::string_view text, char *out, size_t room) noexcept {
  constexpr char hex[] = "0123456789abcdef";
  size_t n = 0, i = 0;
  for (; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    bool control = c < 0x20 || c == 0x7f || c == '\\';
    if (n + (control ? 4 : 1) > room) break;
    if (control) {
      out[n++] = '\\';
      out[n++] = 'x';
      out[n++] = hex[c >> 4];
      out[n++] = hex[c & 0xf];
    } else {
      out[n++] = text[i];
    }
  }
  // Cut inside a character: the bytes of it written go too (each past
  // 0x7f, so written as it is); a character has 3 after its first at most.
  size_t start = i;
  while (start < text.size() && start > 0 && i - start < 3 && utf8_continuation(text[start])) --start;
  if (start < i && static_cast<unsigned char>(text[start]) >= 0xc0) n -= i - start;
  return n;
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
  int n = journal ? std::snprintf(line, sizeof line, "<%d>", static_cast<int>(level))
                  : std::snprintf(line, sizeof line, "rigd: ");
  if (n <= 0) return;
  size_t bytes = static_cast<size_t>(n);
  bytes += escape(text, line + bytes, sizeof line - 1 - bytes);
  line[bytes++] = '\n';
  for (size_t at = 0; at < bytes;) {
    ssize_t wrote = write(STDERR_FILENO, line + at, bytes - at);
    if (wrote <= 0) return;
    at += static_cast<size_t>(wrote);
  }
}

}  // namespace rigd
