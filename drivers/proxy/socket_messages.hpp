// Whole messages on rigd's Unix stream socket, with file descriptors
// attached (SCM_RIGHTS), for rigd and its clients alike.
#pragma once

#include <cstddef>
#include <span>

namespace rig::proxy {

// Sends the bytes of message on the stream socket fd, with fds attached to
// its first byte.  false, errno set, if the socket fails or closes; never
// raises SIGPIPE.
bool send_message(int fd, std::span<const std::byte> message, std::span<const int> fds = {});

// Closes fd: receive_message's way to let go of a descriptor, unless told
// another.
void close_received(int fd);

// Receives exactly message.size() bytes into message.  The fds attached to
// them (close-on-exec) fill fds from its start, their count in *received;
// any beyond fds.size() are let go of with discard.  false, errno set (0
// at end of file), if the socket fails or closes first; the fds received
// are then let go of too.
bool receive_message(int fd, std::span<std::byte> message, std::span<int> fds = {},
                     size_t *received = nullptr, void (*discard)(int fd) = close_received);

}  // namespace rig::proxy
