// A parser of Prometheus' text exposition format (version 0.0.4), for
// tests of rigd's metrics: each line a comment (# HELP NAME TEXT, # TYPE
// NAME TYPE, or another), a sample NAME{LABELS} VALUE [TIMESTAMP], or
// blank; names and label names as the format's grammar has them, label
// values quoted with its escapes, values numbers; a family's TYPE before
// its samples and at most once, a family's samples together, no two
// samples with one name and label set.  Anything else is a std::invalid_argument naming the line.
#pragma once

#include <map>
#include <string>

struct PrometheusText {
  std::map<std::string, std::string> types;    // by family
  std::map<std::string, std::string> samples;  // "NAME{LABELS}" (as written) -> value
};

PrometheusText parse_prometheus_text(const std::string &text);
