// rigd's log lines of refusals, bounded: a hostile client that is refused
// again and again must not fill the journal.
#pragma once

#include <string>

namespace rigd {

// Logs line at level notice (log.hpp) where the bound allows: a burst of
// refusal_log_burst lines, then refusal_log_per_second a second.  A line
// past it is dropped and counted, and the next line written first says how
// many were.  Thread-safe.
void log_refusal(const std::string &line);

inline constexpr double refusal_log_burst = 20;
inline constexpr double refusal_log_per_second = 1;

}  // namespace rigd
