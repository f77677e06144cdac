#include "wire_messages.hpp"

#include "wire_words.hpp"

#include <cstring>
#include <iterator>

namespace rig::net::wire {

bool operator==(const Data &a, const Data &b) {
  // An empty span's data may be null, which memcmp must not see.
  return a.size() == b.size() && (a.size() == 0 || std::memcmp(a.bytes.data(), b.bytes.data(), a.size()) == 0);
}

Kind kind_of(const Message &message) { return static_cast<Kind>(message.index() + 1); }

const char *kind_name(uint16_t kind) {
  static constexpr const char *names[] = {"DEVICES", "REQUEST", "ANSWER",  "RELEASE", "HANDOVER",
                                          "REPORT",  "BYTES",   "FAILURE", "CLOSE"};
  return kind >= 1 && kind <= std::size(names) ? names[kind - 1] : nullptr;
}

const char *op_name(uint16_t op) {
  static constexpr const char *names[] = {"OPEN", "ALLOC", "MAP_PEER", "IMAGE", "PREPARE", "ENTRY"};
  return op >= 1 && op <= std::size(names) ? names[op - 1] : nullptr;
}

const char *part_name(uint16_t part) {
  static constexpr const char *names[] = {"COPY", "PUT", "GET", "FILL", "LAUNCH", "WORDS"};
  return part >= 1 && part <= std::size(names) ? names[part - 1] : nullptr;
}

namespace {
std::string with_article(const char *name) {
  std::string_view vowels = "AEIOU";
  return words(vowels.find(name[0]) == std::string_view::npos ? "a " : "an ", name);
}
}  // namespace

std::string a_kind(Kind kind) { return with_article(kind_name(static_cast<uint16_t>(kind))); }
std::string an_op(uint16_t op) { return with_article(op_name(op)); }
std::string a_part(uint16_t part) { return with_article(part_name(part)); }

}  // namespace rig::net::wire
