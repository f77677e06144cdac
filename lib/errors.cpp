#include "rig_internal/errors.hpp"

#include "device.hpp"

#include <new>

namespace rig {
namespace {

struct ThreadError {
  std::string message;
  rig_device_t *device = nullptr;
  int64_t bytes = 0;
  int code = 0;
};

thread_local ThreadError last;

}  // namespace

void throw_invalid(const std::string &why) { throw Error(RIG_EINVAL, why); }

void throw_lost(rig_device_t *d) {
  Error e(RIG_ELOST, d->name + " lost: " + d->lost_reason());
  e.device = d;
  throw e;
}

const char *retired_reason() { return "the device was closed and its record retired"; }

void throw_retired() { throw Error(RIG_ELOST, retired_reason()); }

void record_retired() noexcept {
  try {
    record(Error(RIG_ELOST, retired_reason()));
  } catch (...) {
    last = ThreadError{};
  }
}

void throw_no_memory(rig_device_t *d, int64_t bytes, const std::string &detail) {
  // The budget and what d holds beside the request, so the message says
  // whether the budget or the device's memory refused it.
  int64_t budget = d->budget.load();
  Error e(RIG_ENOMEM, d->name + ": out of memory for " + std::to_string(bytes) + " bytes" +
                          (detail.empty() ? "" : " " + detail) + " (budget " +
                          (budget == INT64_MAX ? std::string("unbounded") : std::to_string(budget) + " bytes") +
                          ", " + std::to_string(d->allocated.load()) + " bytes held)");
  e.device = d;
  e.bytes = bytes;
  throw e;
}

void throw_open(const std::string &why) { throw Error(RIG_EOPEN, why); }
void throw_image(const std::string &why) { throw Error(RIG_EIMAGE, why); }

void throw_interrupted() { throw Error(RIG_EINTR, "the wait was interrupted"); }

void throw_callback(int value) {
  Error e(RIG_ECALLBACK, "the callback returned " + std::to_string(value));
  e.code = value;
  throw e;
}

void require(bool condition, const char *why) {
  if (!condition) throw_invalid(why);
}

rig_status_t record(const Error &e) {
  try {
    last.message = e.message;
  } catch (...) {
    last.message.clear();
  }
  last.device = e.device;
  last.bytes = e.bytes;
  last.code = e.code;
  return e.status;
}

rig_status_t record_current_exception() {
  try {
    throw;
  } catch (const Error &e) {
    return record(e);
  } catch (const std::bad_alloc &) {
    return record(Error(RIG_ENOMEM, "out of memory in the C heap"));
  } catch (const std::exception &e) {
    return record(Error(RIG_EINVAL, std::string("internal error: ") + e.what()));
  } catch (...) {
    return record(Error(RIG_EINVAL, "internal error"));
  }
}

}  // namespace rig

extern "C" {

const char *rig_last_error(void) { return rig::last.message.c_str(); }
rig_device_t *rig_error_device(void) { return rig::last.device; }
int64_t rig_error_bytes(void) { return rig::last.bytes; }
int rig_error_code(void) { return rig::last.code; }

const char *rig_status_name(rig_status_t status) {
  switch (status) {
    case RIG_OK: return "RIG_OK";
    case RIG_EINVAL: return "RIG_EINVAL";
    case RIG_ELOST: return "RIG_ELOST";
    case RIG_ENOMEM: return "RIG_ENOMEM";
    case RIG_EIO: return "RIG_EIO";
    case RIG_EOPEN: return "RIG_EOPEN";
    case RIG_EINTR: return "RIG_EINTR";
    case RIG_ECALLBACK: return "RIG_ECALLBACK";
    case RIG_EIMAGE: return "RIG_EIMAGE";
  }
  return "RIG_UNKNOWN";
}

int rig_version(void) { return RIG_VERSION; }
int rig_word(void) { return RIG_WORD_BYTES; }

}  // extern "C"
