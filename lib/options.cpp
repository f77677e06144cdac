#include "rig_internal/options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace rig {

Options::Options(const std::string &text, std::initializer_list<const char *> keys)
    : Options(text, "the configuration", false, keys) {}

Options Options::of_environment(const char *variable, std::initializer_list<const char *> keys) {
  const char *text = std::getenv(variable);
  return Options(text ? text : "", variable, true, keys);
}

void Options::fail(const std::string &why) const {
  if (environment_) throw std::runtime_error(why);
  throw std::invalid_argument(why);
}

Options::Options(const std::string &text, std::string source, bool environment,
                 std::initializer_list<const char *> keys)
    : source_(std::move(source)), environment_(environment) {
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(',', i);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(i, end - i);
    i = end + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      fail("bad option \"" + item + "\" in " + source_ + ": expected key=value");
    std::string key = item.substr(0, eq);
    bool known = false;
    std::string names;
    for (const char *k : keys) {
      known = known || key == k;
      names += std::string(names.empty() ? "" : ", ") + k;
    }
    if (!known)
      fail("unknown key \"" + key + "\" in " + source_ + " (its keys: " + (names.empty() ? "none" : names) + ")");
    values_[key] = item.substr(eq + 1);
  }
}

void Options::refuse(const std::string &key, const std::string &why) const {
  auto it = values_.find(key);
  fail(source_ + "'s " + key + "=" + (it == values_.end() ? "" : it->second) + " is " + why);
}

int64_t Options::integer(const std::string &key, int64_t fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (errno || end == it->second.c_str() || *end) refuse(key, "not an integer");
  return v;
}

int64_t Options::bytes(const std::string &key, int64_t fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string &s = it->second;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || end == s.c_str() || v < 0) refuse(key, "not a byte count");
  int shift = 0;
  if (*end) {
    switch (*end) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: refuse(key, "of an unknown unit");
    }
    if (end[1]) refuse(key, "followed by other characters");
  }
  if (shift && v > (INT64_MAX >> shift)) refuse(key, "too large");
  return static_cast<int64_t>(v) << shift;
}

double Options::real(const std::string &key, double fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  char *end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end || !std::isfinite(v)) refuse(key, "not a finite number");
  return v;
}

std::string Options::text(const std::string &key, const std::string &fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

}  // namespace rig
