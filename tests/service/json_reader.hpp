// A small JSON reader for tests of the rig tool's output: the whole value
// or a std::invalid_argument saying where it is not JSON.  Numbers keep
// their text, so that a test compares them exactly.
#pragma once

#include <string>
#include <utility>
#include <vector>

struct Json {
  enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
  std::string text;  // a number's digits, a string's value, "true" or "false"
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  // The member key of an object; throws std::invalid_argument where it has none.
  const Json &operator[](const std::string &key) const;
};

Json parse_json(const std::string &text);
