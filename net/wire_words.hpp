// The words of the codec's errors: messages built from texts and numbers.
#pragma once

#include "wire_messages.hpp"
#include "wire_result.hpp"

#include <concepts>
#include <string>
#include <string_view>

namespace rig::net::wire {

inline void append_word(std::string &to, std::string_view text) { to += text; }
inline void append_word(std::string &to, const char *text) { to += text; }
inline void append_word(std::string &to, const std::string &text) { to += text; }
template <std::integral N>
void append_word(std::string &to, N number) {
  if constexpr (sizeof(N) == 1)
    to += std::to_string(static_cast<int>(number));
  else
    to += std::to_string(number);
}

// The pieces end to end.
template <class... Pieces>
std::string words(const Pieces &...pieces) {
  std::string text;
  (append_word(text, pieces), ...);
  return text;
}

template <class... Pieces>
Error refusal(const Pieces &...pieces) {
  return Error{words(pieces...)};
}

// "1 part", "3 parts": count, then plural (which ends in s), singular for 1.
inline std::string count_of(uint64_t count, std::string_view plural) {
  return words(count, " ", count == 1 ? plural.substr(0, plural.size() - 1) : plural);
}

// "a HANDOVER", "an ANSWER"; likewise for ops and parts.
std::string a_kind(Kind kind);
std::string an_op(uint16_t op);
std::string a_part(uint16_t part);

}  // namespace rig::net::wire
