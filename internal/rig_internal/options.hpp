// A driver's option string: "key=value,key=value", as rig_open's config and
// environment variables such as RIG_SIM give it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rig {

class Options {
 public:
  // The options of rig_open's configuration text; keys are the only keys
  // it may hold.  Its errors are std::invalid_argument, which a driver's
  // open answers as RIG_EINVAL: the caller's configuration is wrong.
  Options(const std::string &text, std::initializer_list<const char *> keys);
  // The options of the environment variable variable (none where unset).
  // Its errors are std::runtime_error (RIG_EOPEN: the device cannot be
  // opened in this environment).
  static Options of_environment(const char *variable, std::initializer_list<const char *> keys);
  // Each error names its source ("the configuration", or the variable):
  // the constructors' a malformed item or a key not among keys, with the
  // keys; the readers' the key and value where it is not of its kind.
  bool has(const std::string &key) const { return values_.count(key) != 0; }
  // A byte count with an optional K, M, G or T suffix (powers of 1024).
  int64_t bytes(const std::string &key, int64_t fallback) const;
  int64_t integer(const std::string &key, int64_t fallback) const;
  double real(const std::string &key, double fallback) const;
  // The value as written.
  std::string text(const std::string &key, const std::string &fallback) const;
  // Throws "SOURCE's KEY=VALUE is WHY".
  [[noreturn]] void refuse(const std::string &key, const std::string &why) const;

 private:
  Options(const std::string &text, std::string source, bool environment, std::initializer_list<const char *> keys);
  [[noreturn]] void fail(const std::string &why) const;
  std::string source_;
  bool environment_;
  std::map<std::string, std::string> values_;
};

}  // namespace rig
