// A small JSON reader (json_reader.hpp).
#include "json_reader.hpp"

#include <cctype>
#include <stdexcept>

namespace {

class Reader {
 public:
  explicit Reader(const std::string &s) : s_(s) {}

  Json value() {
    skip();
    if (at_end()) fail("a value");
    char c = s_[i_];
    Json v;
    if (c == '{') {
      v.kind = Json::Kind::object;
      ++i_;
      if (!take('}')) {
        do {
          skip();
          std::string key = string();
          if (!take(':')) fail("':'");
          v.members.emplace_back(std::move(key), value());
        } while (take(','));
        if (!take('}')) fail("'}'");
      }
    } else if (c == '[') {
      v.kind = Json::Kind::array;
      ++i_;
      if (!take(']')) {
        do v.items.push_back(value());
        while (take(','));
        if (!take(']')) fail("']'");
      }
    } else if (c == '"') {
      v.kind = Json::Kind::string;
      v.text = string();
    } else if (word("null")) {
      v.kind = Json::Kind::null;
    } else if (word("true") || word("false")) {
      v.kind = Json::Kind::boolean;
      v.text = s_[i_ - 1] == 'e' && s_[i_ - 4] == 't' ? "true" : "false";
    } else {
      v.kind = Json::Kind::number;
      size_t start = i_;
      if (s_[i_] == '-') ++i_;
      while (!at_end() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' || s_[i_] == 'e' ||
                           s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-'))
        ++i_;
      v.text = s_.substr(start, i_ - start);
      if (v.text.empty() || v.text == "-") fail("a value");
    }
    skip();
    return v;
  }

  void end() {
    skip();
    if (!at_end()) fail("the end");
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }
  void skip() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool take(char c) {
    skip();
    if (at_end() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  bool word(const char *w) {
    std::string k(w);
    if (s_.compare(i_, k.size(), k) != 0) return false;
    i_ += k.size();
    return true;
  }
  std::string string() {
    if (!take('"')) fail("a string");
    std::string out;
    while (!at_end() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) fail("an escape");
      char e = s_[i_++];
      if (e == 'n') out += '\n';
      else if (e == 't') out += '\t';
      else if (e == 'r') out += '\r';
      else if (e == 'u') {
        if (s_.size() - i_ < 4) fail("four hex digits");
        out += static_cast<char>(std::stoi(s_.substr(i_, 4), nullptr, 16));
        i_ += 4;
      } else out += e;
    }
    if (!take('"')) fail("'\"'");
    return out;
  }
  [[noreturn]] void fail(const char *wanted) const {
    throw std::invalid_argument(std::string("not JSON: wanted ") + wanted + " at byte " + std::to_string(i_));
  }

  const std::string &s_;
  size_t i_ = 0;
};

}  // namespace

const Json &Json::operator[](const std::string &key) const {
  for (const auto &[k, v] : members)
    if (k == key) return v;
  throw std::invalid_argument("no member " + key);
}

Json parse_json(const std::string &text) {
  Reader r(text);
  Json v = r.value();
  r.end();
  return v;
}
