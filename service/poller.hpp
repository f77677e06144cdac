// The poller of a client's rings: it drains the submission ring while there
// is work, spins a while after the last entry (a client that submits again
// finds it awake, with no system call on either side), and sleeps on the
// ring's futex when idle, so that an idle rigd costs no core.
#pragma once

#include "requests.hpp"
#include "ring_segment.hpp"

#include <atomic>

namespace rigd {

enum class PollerEnd { stopped, breach };

// Copies each entry out of the submission ring, runs it (requests) and
// posts its completion, until stopping is set or the client breaks the
// rings' protocol.  A full completion ring waits for the client to consume.
PollerEnd run_poller(const rig::proxy::RingSegment &rings, Requests &requests, const std::atomic<bool> &stopping);

// Wakes a poller that sleeps on rings, after stopping was set.
void wake_poller(const rig::proxy::RingSegment &rings) noexcept;

}  // namespace rigd
