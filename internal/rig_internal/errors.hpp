// The C boundary: statuses, the thread-local error state, and the one
// try/catch that every exported function runs its body in.
#pragma once

#include <rig/rig.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rig {

// An error a call answers: thrown inside the library, turned into a status
// and a thread-local message at the C boundary.
struct Error : std::exception {
  rig_status_t status;
  std::string message;
  rig_device_t *device = nullptr;  // RIG_ELOST, RIG_ENOMEM
  int64_t bytes = 0;               // RIG_ENOMEM
  int code = 0;                    // RIG_ECALLBACK's value, RIG_EIO's errno
  Error(rig_status_t s, std::string m) : status(s), message(std::move(m)) {}
  const char *what() const noexcept override { return message.c_str(); }
};

[[noreturn]] void throw_invalid(const std::string &why);
[[noreturn]] void throw_lost(rig_device_t *d);
// RIG_ELOST for a device whose record the registry released (rig.h,
// Handles), with retired_reason's message; record_retired records it
// without throwing.
const char *retired_reason();
[[noreturn]] void throw_retired();
void record_retired() noexcept;
[[noreturn]] void throw_no_memory(rig_device_t *d, int64_t bytes, const std::string &detail = "");
[[noreturn]] void throw_open(const std::string &why);
[[noreturn]] void throw_image(const std::string &why);
[[noreturn]] void throw_interrupted();
[[noreturn]] void throw_callback(int value);

// Records e as this thread's last error and returns its status.
rig_status_t record(const Error &e);
// Records the exception in flight (inside a catch) and returns its status.
rig_status_t record_current_exception();
// Throws RIG_EINVAL with why unless condition holds.
void require(bool condition, const char *why);

}  // namespace rig

// Runs an exported function's body: no exception crosses the C boundary.
// The body returns a rig_status_t (RIG_OK on success).
#define RIG_API_CALL(...)                          \
  do {                                             \
    try {                                          \
      __VA_ARGS__                                  \
    } catch (...) {                                \
      return ::rig::record_current_exception();    \
    }                                              \
  } while (0)
