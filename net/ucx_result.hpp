// Outcomes of the UCX transport's calls (ucx_link.hpp): nothing in its API
// throws; a call that fails returns a message that names what failed, with
// its numbers and UCX's reason.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace rig::net {

// Success, or the message of a failure.
class [[nodiscard]] UcxStatus {
 public:
  static UcxStatus success() { return UcxStatus(); }
  static UcxStatus failure(std::string message) { return UcxStatus(std::move(message)); }

  bool ok() const { return !message_; }
  // The failure's message; empty on success.
  const std::string &message() const {
    static const std::string none;
    return message_ ? *message_ : none;
  }

 private:
  UcxStatus() = default;
  explicit UcxStatus(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

// A value, or the message of a failure.
template <class T>
class [[nodiscard]] UcxResult {
 public:
  UcxResult(T value) : value_(std::move(value)) {}
  UcxResult(UcxStatus failed) : status_(std::move(failed)) {}

  bool ok() const { return value_.has_value(); }
  T &value() { return *value_; }
  const std::string &message() const { return status_.message(); }
  UcxStatus status() const { return status_; }

 private:
  std::optional<T> value_;
  UcxStatus status_ = UcxStatus::success();
};

}  // namespace rig::net
