// rigd's bounded log of refusals (refusal_log.hpp).
#include "refusal_log.hpp"

#include "log.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace rigd {

void log_refusal(const std::string &line) {
  if (!logs(LogLevel::notice)) return;
  using Clock = std::chrono::steady_clock;
  static std::mutex mu;
  static double left = refusal_log_burst;
  static Clock::time_point at = Clock::now();
  static uint64_t dropped = 0;
  std::lock_guard g(mu);
  Clock::time_point now = Clock::now();
  left = std::min(refusal_log_burst, left + std::chrono::duration<double>(now - at).count() * refusal_log_per_second);
  at = now;
  if (left < 1) {
    ++dropped;
    return;
  }
  left -= 1;
  if (dropped) {
    char said[128];
    std::snprintf(said, sizeof said, "%llu refusal lines dropped (at most %g a second past %g)",
                  static_cast<unsigned long long>(dropped), refusal_log_per_second, refusal_log_burst);
    log_line(LogLevel::notice, said);
  }
  dropped = 0;
  log_line(LogLevel::notice, line);
}

}  // namespace rigd
