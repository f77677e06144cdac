// The admin conversation of fuzz_rigd_handshake, from both sides
// (protocol.h's admin request and reply, and the STATS snapshot).
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <string>

namespace rigd_fuzz {

// rigd's side (admin_rigd_side.cpp): admin peers of the input's, of
// several credentials, beside an innocent admin and a client of rigd's.
void rigd_admin_side(FuzzedDataProvider &in);

// The client's side (admin_client_side.cpp): a fake rigd answers the
// input's reply and snapshot to ask_rigd and read_stats_snapshot.
void client_admin_side(FuzzedDataProvider &in);

// What each side keeps for the process's life, made at the first call:
// the socket of rigd's admission loop (its thread's), and the fake
// rigd's listening socket.  Made before the fds an input leaves are
// counted.
const std::string &admin_rigd_socket();
const std::string &fake_rigd_socket();

}  // namespace rigd_fuzz
