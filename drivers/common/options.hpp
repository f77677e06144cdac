// A driver's option string: "key=value,key=value", as rig_open's config and
// environment variables such as RIG_SIM give it.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace rig {

class Options {
 public:
  // Throws std::runtime_error on a malformed string.
  explicit Options(const std::string &text);
  bool has(const std::string &key) const { return values_.count(key) != 0; }
  // A byte count with an optional K, M, G or T suffix (powers of 1024).
  int64_t bytes(const std::string &key, int64_t fallback) const;
  int64_t integer(const std::string &key, int64_t fallback) const;
  double real(const std::string &key, double fallback) const;
  // The value as written.
  std::string text(const std::string &key, const std::string &fallback) const;

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace rig
