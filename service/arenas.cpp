// Host arenas (arenas.hpp).
#include "arenas.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cstddef>

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

}  // namespace

rig_status_t map_arena(int fd, uint64_t bytes, rig_buffer_t **out) {
  int seals = fcntl(fd, F_GET_SEALS);
  struct stat st;
  if (bytes == 0 || bytes > INT64_MAX || seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) != 0 ||
      static_cast<uint64_t>(st.st_size) < bytes)
    return RIG_EINVAL;
  void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return RIG_EINVAL;
  auto *mapping = new Mapping{base, bytes};
  rig_status_t status = rig_buffer_of_memory(base, static_cast<int64_t>(bytes), unmap, mapping, out);
  if (status != RIG_OK) unmap(mapping);
  return status;
}

}  // namespace rigd
