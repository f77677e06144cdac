// Host arenas (arenas.hpp).
#include "arenas.hpp"

#include "passed_descriptors.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace rigd {

namespace {

struct Mapping {
  void *base;
  size_t bytes;
};

void unmap(void *context) {
  auto *m = static_cast<Mapping *>(context);
  munmap(m->base, m->bytes);
  delete m;
}

// Why fd cannot be an arena of bytes bytes, or "" where it can.
std::string unfit_arena(int fd, uint64_t bytes) {
  if (bytes == 0 || bytes > INT64_MAX) return "an arena of " + std::to_string(bytes) + " bytes";
  // First on fd: every call after it stays within the kernel
  // (passed_descriptors.hpp).
  if (!sealable(fd)) return "the arena's descriptor is not a memfd";
  // A huge-page memfd (hugetlbfs) takes seals too, but its owner can punch
  // holes in it whatever they are, and its length is in huge pages.
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0 || fs.f_type != TMPFS_MAGIC)
    return "the arena's memfd is not on tmpfs (a huge-page memfd, MFD_HUGETLB, is not)";
  if (!(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK)) return "the arena's memfd is not sealed against shrinking";
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < bytes)
    return "the arena's memfd holds fewer bytes than the " + std::to_string(bytes) + " asked";
  return "";
}

}  // namespace

rig_status_t map_arena(int fd, uint64_t bytes, rig_buffer_t **out, std::string *why) {
  *why = unfit_arena(fd, bytes);
  if (!why->empty()) return RIG_EINVAL;
  void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    *why = std::string("rigd cannot map the arena: ") + std::strerror(errno);
    return RIG_EINVAL;
  }
  auto *mapping = new Mapping{base, bytes};
  rig_status_t status = rig_buffer_of_memory(base, static_cast<int64_t>(bytes), unmap, mapping, out);
  if (status != RIG_OK) {
    unmap(mapping);
    *why = std::string("rigd cannot make a buffer of the arena: ") + rig_last_error();
  }
  return status;
}

}  // namespace rigd
