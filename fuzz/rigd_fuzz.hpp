// What the rigd fuzz targets share: their checks and the device they serve.
#pragma once

#include "handshake.hpp"
#include "served.hpp"
#include "socket_messages.hpp"

#include <sanitizer/common_interface_defs.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

// A check of what rigd or its client answered: a failure names the check
// and stops the run, and libFuzzer saves the input.
#define RIGD_FUZZ_CHECK(condition) ((condition) ? void() : rigd_fuzz::failed(#condition, __FILE__, __LINE__))

namespace rigd_fuzz {

// Reported where the sanitizers report, which libFuzzer keeps when it
// closes stderr (-close_fd_mask=2, for rigd's own messages).
[[noreturn]] inline void failed(const char *condition, const char *file, int line) {
  std::string what = std::string(file) + ":" + std::to_string(line) + ": check failed: " + condition;
  __sanitizer_report_error_summary(what.c_str());
  std::abort();
}

// The served device, a memory device opened once: opening is costly, and
// nothing of an input's client stays on it once the client's objects go.
inline const rigd::ServedDevices &served() {
  static const rigd::ServedDevices devices({"MEM:0"});
  return devices;
}

// Waits for the instances an input's clients let go of to go back to the
// served device (its release worker), so that the next input takes them
// again rather than open more.
inline void settle() {
  RIGD_FUZZ_CHECK(served().finish_releases(std::chrono::steady_clock::now() + std::chrono::seconds(5)));
}

// The first bytes of t, as many as the input had (an empty vector's data
// may be NULL, which memcpy may not take).
template <class T, class Byte>
void copy_into(T &t, const std::vector<Byte> &bytes) {
  if (!bytes.empty()) std::memcpy(&t, bytes.data(), bytes.size());
}

template <class T>
std::span<const std::byte> bytes_of(const T &t) {
  return std::as_bytes(std::span(&t, 1));
}

// Receives a T, and the fds that came with it (closed here, their count in
// *fd_count; the first kept in *first where first is given), or nothing at
// the end of the stream.
template <class T>
std::optional<T> receive(int socket, size_t *fd_count = nullptr, rig::proxy::OwnedFd *first = nullptr) {
  T t{};
  int fds[4];
  size_t received = 0;
  if (!rig::proxy::receive_message(socket, std::as_writable_bytes(std::span(&t, 1)), fds, &received))
    return std::nullopt;
  for (size_t i = 0; i < received; ++i)
    if (i == 0 && first)
      *first = rig::proxy::OwnedFd(fds[0]);
    else
      close(fds[i]);
  if (fd_count) *fd_count = received;
  return t;
}

}  // namespace rigd_fuzz
