// A result of the wire codec: the value, or the reason it was refused.
// The codec reports errors as values; no exception leaves it.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace rig::net::wire {

// Why a message was refused: its kind, the field and the numbers.
struct Error {
  std::string message;
};

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // Only where ok().
  T &value() { return std::get<0>(state_); }
  const T &value() const { return std::get<0>(state_); }
  // Only where !ok().
  const Error &error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

}  // namespace rig::net::wire
