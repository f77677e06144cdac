// Checked handles (rig.h, Handles): the records of the handles rig.h gives
// out (buffers, exported arrays, images, functions, submissions, runs,
// devices) and of service.h's snapshots come from pools whose memory
// stays valid after a record's release, with a header before each record
// that says whether it is live.  A use of a released handle reads that
// header and answers RIG_EINVAL: a load of a word beside the record the
// call reads anyway, which keeps the hot path (a submit, a copy, a host
// access) at the cost it had, where a table would add a look-up and a
// generation in the handle would change every handle's bits.  A released
// record is reused only once kQuarantine later records of its type were
// released (first in, first out), which bounds the memory a pool keeps;
// the pool never returns a record's memory to malloc, so a stale pointer
// always reads a header.  Drivers' handles (the proxy's snapshots) take
// their records from these pools too, through this header.
#pragma once

#include "rig_internal/errors.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace rig {

enum class HandleType : uint32_t { Buffer = 1, Export, Image, Function, Submission, Run, Device, ServiceStats, Count };

// The records of one type a pool keeps released before it reuses one.
constexpr size_t kQuarantine = 16384;
// A device's: its record is about 1 KB, and the registry keeps 4096
// retired ones answering as closed devices before it releases the oldest.
constexpr size_t kDeviceQuarantine = 4096;
constexpr size_t quarantine_of(HandleType t) { return t == HandleType::Device ? kDeviceQuarantine : kQuarantine; }

void *handle_allocate(HandleType t, size_t bytes);
void handle_release(HandleType t, void *record);
// True iff record, a record handle_allocate gave for t, is live; false for
// NULL and for a pointer off a record's alignment.  Takes no lock.
bool handle_live(const void *record, HandleType t);

// A base of a handle's record: its new and delete go through t's pool.
template <HandleType t>
struct HandleRecord {
  static void *operator new(size_t bytes) { return handle_allocate(t, bytes); }
  static void operator delete(void *record) { handle_release(t, record); }
};

// Throws RIG_EINVAL, naming what, unless h is a live handle: NULL, or
// released.  Each handle's header declares its live_handle().
template <class T>
void require_handle(const T *h, const std::string &what) {
  if (!h) throw_invalid(what + " is NULL");
  if (!live_handle(h)) throw_invalid(what + " was released");
}

}  // namespace rig
