// Shared segments (segments.hpp).
#include "segments.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace rigd {

namespace {

[[noreturn]] void fail(const char *what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

Segment::Segment(const char *name, uint64_t bytes, ClientAccess access) : bytes_(bytes) {
  fd_ = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd_ < 0) fail("memfd_create");
  try {
    if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0) fail("ftruncate of a segment");
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) fail("mmap of a segment");
    base_ = static_cast<std::byte *>(p);
    // F_SEAL_FUTURE_WRITE keeps the mapping made above writable.
    int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    if (access == ClientAccess::read_only) seals |= F_SEAL_FUTURE_WRITE;
    if (fcntl(fd_, F_ADD_SEALS, seals) != 0) fail("sealing a segment");
  } catch (...) {
    if (base_) munmap(base_, bytes_);
    close(fd_);
    throw;
  }
}

Segment::~Segment() {
  munmap(base_, bytes_);
  close(fd_);
}

}  // namespace rigd
