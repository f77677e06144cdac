#include "options.hpp"

#include <cerrno>
#include <cstdlib>

namespace rig {

Options::Options(const std::string &text) {
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(',', i);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(i, end - i);
    i = end + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw std::runtime_error("bad option \"" + item + "\": expected key=value");
    values_[item.substr(0, eq)] = item.substr(eq + 1);
  }
}

int64_t Options::integer(const std::string &key, int64_t fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (errno || end == it->second.c_str() || *end) throw std::runtime_error("option " + key + " is not an integer");
  return v;
}

int64_t Options::bytes(const std::string &key, int64_t fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string &s = it->second;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || end == s.c_str() || v < 0) throw std::runtime_error("option " + key + " is not a byte count");
  int shift = 0;
  if (*end) {
    switch (*end) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: throw std::runtime_error("option " + key + " has an unknown unit");
    }
    if (end[1]) throw std::runtime_error("option " + key + " has trailing characters");
  }
  if (shift && v > (INT64_MAX >> shift)) throw std::runtime_error("option " + key + " is too large");
  return static_cast<int64_t>(v) << shift;
}

double Options::real(const std::string &key, double fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  char *end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end) throw std::runtime_error("option " + key + " is not a number");
  return v;
}

std::string Options::text(const std::string &key, const std::string &fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

}  // namespace rig
