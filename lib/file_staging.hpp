// A file's bytes into memory the host does not address, through staging:
// the read of each part, of kFilePartBytes, is handed to the device as
// soon as it lands, while readers on other threads read the next parts.
#pragma once

#include "rig_internal/staging.hpp"

#include <cstdint>
#include <functional>

namespace rig {

// The bytes a reader reads, and the device copies, at a time.
constexpr int64_t kFilePartBytes = int64_t{8} << 20;

// Reads bytes [0, n) with read(offset, bytes, into), kFilePartBytes at a
// time, into staging memory for node, and hands each part to the device
// with hand_over(lease, offset, bytes), which returns the value of the
// device's work that copies it.  Returns the greatest value handed over.
// It holds one staging allocation, or two in turn for more than 32 MiB
// (COPY-19), and before it reads into one again it waits for the work
// that last read it (COPY-25).  The parts' copies write disjoint bytes,
// in whatever order they run.  A failed read ends it: the parts read
// before it are handed over, and the first exception passes through.
uint64_t read_through_staging(int64_t n, int node,
                              const std::function<void(int64_t offset, int64_t bytes, char *into)> &read,
                              const std::function<uint64_t(const StagingLease &, int64_t offset, int64_t bytes)> &hand_over);

}  // namespace rig
