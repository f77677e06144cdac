// What the rigd fuzz targets share: their checks and the device they serve.
#pragma once

#include "served.hpp"

#include <sanitizer/common_interface_defs.h>

#include <chrono>
#include <cstdlib>
#include <string>

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

}  // namespace rigd_fuzz
