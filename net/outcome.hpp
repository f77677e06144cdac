// A value or the reason there is none: how the authentication and the wire
// codec of a machine link answer, since no exception leaves their APIs.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace rig::net {

// What went wrong, in words that carry its numbers.
struct Failure {
  std::string message;
};

// What a step that makes nothing answers when it succeeds.
struct Done {};

template <class T, class E = Failure>
class [[nodiscard]] Outcome {
 public:
  Outcome(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Outcome(E error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Only when ok().
  T &value() { return std::get<0>(state_); }
  const T &value() const { return std::get<0>(state_); }
  // Only when !ok().
  const E &error() const { return std::get<1>(state_); }

 private:
  std::variant<T, E> state_;
};

}  // namespace rig::net
