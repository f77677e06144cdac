// rigd's log: one line a call, to the journal where systemd runs rigd
// (stderr carries sd-daemon's "<N>" priority prefixes, which journald
// reads, when JOURNAL_STREAM names rigd's stderr), else plain lines on
// stderr; lines below the level set (--log-level, log_level) are dropped.
#pragma once

#include <string>
#include <string_view>

namespace rigd {

// syslog's priorities, as sd-daemon's prefixes number them.
enum class LogLevel : int { error = 3, warning = 4, notice = 5, info = 6, debug = 7 };

inline constexpr LogLevel default_log_level = LogLevel::info;

// The level name names: error, warning, notice, info or debug.  Throws
// std::invalid_argument saying which names are.
LogLevel parse_log_level(std::string_view name);

// Lines of level and above (more severe) are written from now on.
// Thread-safe.
void set_log_level(LogLevel level) noexcept;
// Whether a line of level would be written.
bool logs(LogLevel level) noexcept;

// Writes text as one line of level where the level set admits it, in one
// write, so that lines of threads never interleave.  Its control
// characters (bytes below 0x20, and 0x7f) are written as \xNN: no text,
// a client's included, makes more than one line.  Thread-safe; never
// throws.
void log_line(LogLevel level, std::string_view text) noexcept;

}  // namespace rigd
