// The io library's own calls of rig's C API (safetensors.cpp,
// disk_ranges.cpp): an answer other than RIG_OK becomes the rig::Error it
// describes, so that it passes through to the caller's RIG_API_CALL.
#pragma once

#include "rig_internal/errors.hpp"

#include <rig/rig.h>

#include <utility>

namespace rig::io {

// Throws the error a call of rig's answered, with its message, device,
// bytes and code, read on the thread that made the call.
inline void check(rig_status_t s) {
  if (s == RIG_OK) return;
  Error e(s, rig_last_error());
  e.device = rig_error_device();
  e.bytes = rig_error_bytes();
  e.code = rig_error_code();
  throw e;
}

// A buffer reference, released with the scope.
struct Held {
  rig_buffer_t *b = nullptr;
  Held() = default;
  explicit Held(rig_buffer_t *held) : b(held) {}
  Held(const Held &) = delete;
  Held &operator=(const Held &) = delete;
  Held(Held &&o) noexcept : b(o.b) { o.b = nullptr; }
  Held &operator=(Held &&o) noexcept {
    std::swap(b, o.b);
    return *this;
  }
  ~Held() { rig_buffer_unref(b); }
};

}  // namespace rig::io
