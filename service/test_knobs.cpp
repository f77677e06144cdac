// Device knobs for tests (test_knobs.hpp).
#include "test_knobs.hpp"

#include <algorithm>
#include <string_view>

namespace rigd {

namespace {

constexpr std::string_view knobs[] = {"latency_us", "hang_ms", "fault_at", "budget"};

std::string_view trimmed(std::string_view s) {
  auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

}  // namespace

std::string test_knob_in(const std::string &config) {
  std::string_view rest = config;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    std::string_view key = trimmed(item.substr(0, item.find('=')));
    if (std::find(std::begin(knobs), std::end(knobs), key) != std::end(knobs)) return std::string(key);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return "";
}

}  // namespace rigd
