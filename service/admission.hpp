// rigd's admission: one thread and one epoll that accept connections,
// check each peer's credentials as it is accepted, read hellos up to a
// deadline, and make a session (its threads and segments) only for a
// client admitted.  A refused connection costs rigd its socket alone, and
// only until the refusal is sent.
#pragma once

#include "config.hpp"
#include "listener.hpp"
#include "machine_agent.hpp"
#include "served.hpp"

#include <chrono>
#include <functional>
#include <optional>

namespace rigd {

// How long a connection may take to send its hello before rigd closes it.
inline constexpr std::chrono::seconds hello_deadline{5};

// How long rigd stops accepting where it can neither accept nor refuse a
// connection (no descriptor left, even in reserve), rather than spin.
inline constexpr std::chrono::milliseconds accept_pause{100};

// Serves clients on listener until an ending signal (SIGTERM, SIGINT) is
// read from signals (a signalfd), then stops every session and returns once they ended and
// the instances they held went back (served.finish_releases).  Where that
// takes longer than policy.shutdown_deadline_ms (a client's device still
// working), rigd abandons what is still busy: it names those devices on
// stderr, removes its socket and exits 1 at once.  A failure to make what
// one client needs (a thread, a segment, a descriptor) refuses that client
// with the reason and serves the rest.  SIGHUP on signals reloads the
// policy from reread (the config file read again): admission (allow_users,
// allow_groups), the clients' counts (max_clients, max_clients_per_user)
// and limits (limits.hpp) apply from then on, the limits to connected
// clients' next requests too; the rest of a policy (test_knobs, host_code,
// cuda_contexts) to clients that connect from then on, as a change that
// would refuse a connected client does at its next connection.  Where
// reread throws std::invalid_argument, rigd logs why and keeps its policy.
// Where machines is set, rigd also serves other machines' clients
// (machine_agent.hpp) under the same policy, counts and reloads, and ends
// their sessions as it stops.  Throws std::system_error where rigd cannot
// make its epoll at the start, std::runtime_error where it cannot listen
// for machines.
void serve_clients(const Listener &listener, int signals, const ServedDevices &served, const Policy &policy,
                   const std::function<Policy()> &reread, std::optional<MachineListen> machines = std::nullopt);

}  // namespace rigd
