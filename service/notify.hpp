// systemd's readiness protocol (sd_notify(3)): under a unit of Type=notify
// systemd names a datagram socket in NOTIFY_SOCKET, and rigd sends it
// "READY=1" once it accepts connections and "STOPPING=1" as it begins to
// end.  A few lines of its own rather than libsystemd.
#pragma once

namespace rigd {

// Sends state ("READY=1", "STOPPING=1") to NOTIFY_SOCKET's socket, where
// it names one (a path, or an abstract name after '@'); else nothing.  A
// failure is reported on stderr and changes nothing else: systemd's
// timeout is what answers a readiness that never arrives.
void notify_systemd(const char *state);

}  // namespace rigd
