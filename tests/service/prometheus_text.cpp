// A parser of Prometheus' text format (prometheus_text.hpp).
#include "prometheus_text.hpp"

#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>

namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

// The metric or label name at line[i], i moved past it; "" where none.
std::string name_at(const std::string &line, size_t &i, bool label) {
  size_t start = i;
  if (i < line.size() && name_start(line[i]) && !(label && line[i] == ':')) ++i;
  while (i > start && i < line.size() && name_char(line[i]) && !(label && line[i] == ':')) ++i;
  return line.substr(start, i - start);
}

bool is_number(const std::string &s) {
  if (s == "NaN" || s == "+Inf" || s == "-Inf") return true;
  char *end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

// The family a sample's name belongs to: a summary's or histogram's
// suffixes name their family's samples.
std::string family_of(const std::string &name, const std::map<std::string, std::string> &types) {
  for (const char *suffix : {"_bucket", "_sum", "_count"}) {
    std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      std::string base = name.substr(0, name.size() - s.size());
      if (types.count(base)) return base;
    }
  }
  return name;
}

}  // namespace

PrometheusText parse_prometheus_text(const std::string &text) {
  PrometheusText out;
  std::set<std::string> sampled;  // families with samples so far
  std::string current;            // the family of the last sample
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto fail = [&](const std::string &why) {
      throw std::invalid_argument("line " + std::to_string(number) + ": " + why + ": " + line);
    };
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream words(line.substr(1));
      std::string keyword, name, rest;
      words >> keyword >> name;
      if (keyword != "HELP" && keyword != "TYPE") continue;
      size_t i = 0;
      if (name_at(name, i, false) != name || name.empty()) fail("not a metric name");
      if (keyword == "TYPE") {
        words >> rest;
        static const std::set<std::string> kinds = {"counter", "gauge", "histogram", "summary", "untyped"};
        if (!kinds.count(rest)) fail("no such type");
        if (out.types.count(name)) fail("a second TYPE");
        if (sampled.count(name)) fail("TYPE after the family's samples");
        out.types[name] = rest;
      }
      continue;
    }
    size_t i = 0;
    std::string name = name_at(line, i, false);
    if (name.empty()) fail("no metric name");
    std::set<std::string> labels;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::string label = name_at(line, i, true);
        if (label.empty() || !labels.insert(label).second) fail("a bad or repeated label name");
        if (line.compare(i, 2, "=\"") != 0) fail("no '=\"' after label " + label);
        i += 2;
        while (i < line.size() && line[i] != '"') {
          if (line[i] == '\\') {
            if (i + 1 >= line.size() || (line[i + 1] != '\\' && line[i + 1] != '"' && line[i + 1] != 'n'))
              fail("a bad escape");
            ++i;
          }
          ++i;
        }
        if (i >= line.size()) fail("an unterminated label value");
        ++i;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) fail("no '}'");
      ++i;
    }
    std::string series = line.substr(0, i);
    std::istringstream rest(line.substr(i));
    std::string value, timestamp, extra;
    if (!(rest >> value) || !is_number(value)) fail("no value");
    if (rest >> timestamp && (timestamp.find_first_not_of("-0123456789") != std::string::npos || rest >> extra))
      fail("more than a value and a timestamp");
    if (!out.samples.emplace(series, value).second) fail("a second sample of " + series);
    std::string family = family_of(name, out.types);
    if (family != current && sampled.count(family)) fail("a sample apart from its family's others");
    current = family;
    sampled.insert(family);
  }
  return out;
}
