// Descriptors a client passes rigd on its socket (SCM_RIGHTS).  Calls on a
// file can reach the file system it lies on, and a client may serve that
// file system itself (FUSE): fstat, fstatfs and the flush that every close
// makes would then wait for as long as the client wants.  A memfd's calls
// never leave the kernel, and a memfd is all that rigd's protocol passes:
// rigd asks sealable() of a passed descriptor before anything else, and
// lets go of one with close_passed().
#pragma once

namespace rigd {

// Whether fd's file takes seals (F_GET_SEALS, which only shmem, that is
// tmpfs and memfds, and hugetlbfs files answer, within the kernel).
bool sealable(int fd) noexcept;

// Closes fd, a descriptor a client passed: at once where it is sealable,
// since such a file has no flush; any other on rigd's closer thread, which
// alone waits where the close waits on the client.  Where 64 wait for that
// thread already (or rigd could make no such thread, or has no memory to
// queue fd), the close waits here: on the session of the client that
// passed fd, so that such clients together hold at most 64 of rigd's
// descriptors besides one each.
void close_passed(int fd) noexcept;

}  // namespace rigd
