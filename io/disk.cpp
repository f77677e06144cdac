// The disk library: files as io device memory (include/rig/disk.h), its
// reads and writes run by the io_uring engine of uring_file.hpp.
#include "page_populator.hpp"
#include "rig_calls.hpp"
#include "uring_file.hpp"

#include "rig_internal/buffers.hpp"
#include "rig_internal/errors.hpp"
#include "rig_internal/options.hpp"
#include "rig_internal/staging.hpp"

#include <rig/disk.h>
#include <rig/edge.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Pages {
  void *address;  // what pages answered
  void *base;     // the mapping, on a page
  size_t bytes;
};

// A file, or a range of one.
struct DiskRegion {
  int fd;
  int64_t offset;
  int64_t length;
  bool writable;
  std::string path;  // as rig_disk_open was given it; empty for scratch
  std::mutex mu;     // pages
  std::vector<Pages> pages;

  rig::io::FileRegion file() {
    std::lock_guard<std::mutex> g(mu);
    // Mapped pages and O_DIRECT do not mix: a mapped file goes through the
    // page cache.
    return rig::io::FileRegion{fd, offset, length, writable, pages.empty(), -1};
  }
};

struct Disk {
  rig::io::UringEngine engine;
};

Disk &disk() {
  static Disk *d = new Disk();
  return *d;
}

std::string scratch_directory() {
  const char *dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/var/tmp";
}

int disk_alloc(void *, int64_t n, void **region) {
  std::string dir = scratch_directory();
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::string path = dir + "/rig-scratch-XXXXXX";
    fd = mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) return -errno;
    unlink(path.c_str());
  }
  if (ftruncate(fd, n) != 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  *region = new DiskRegion{fd, 0, n, true, {}, {}, {}};
  return 0;
}

void disk_free(void *, void *region) {
  auto *r = static_cast<DiskRegion *>(region);
  for (const Pages &p : r->pages) munmap(p.base, p.bytes);
  // The engine's own descriptor of the file (O_DIRECT) goes with it.
  disk().engine.forget(r->fd);
  close(r->fd);
  delete r;
}

int disk_pages(void *, void *region, int64_t n, void **address) {
  auto *r = static_cast<DiskRegion *>(region);
  const int64_t page = sysconf(_SC_PAGESIZE);
  int64_t start = r->offset / page * page;
  int64_t delta = r->offset - start;
  size_t bytes = static_cast<size_t>(delta + std::max<int64_t>(n, 1));
  int prot = PROT_READ | (r->writable ? PROT_WRITE : 0);
  void *base = mmap(nullptr, bytes, prot, MAP_SHARED, r->fd, start);
  if (base == MAP_FAILED) return -errno;
  *address = static_cast<char *>(base) + delta;
  std::lock_guard<std::mutex> g(r->mu);
  r->pages.push_back({*address, base, bytes});
  return 0;
}

void disk_unpages(void *, void *region, void *address, int64_t) {
  auto *r = static_cast<DiskRegion *>(region);
  std::lock_guard<std::mutex> g(r->mu);
  for (auto it = r->pages.begin(); it != r->pages.end(); ++it)
    if (it->address == address) {
      munmap(it->base, it->bytes);
      r->pages.erase(it);
      return;
    }
}

// The count moved, fewer where the file ended or an error stopped the
// transfer after some bytes (the next call then answers the error), or a
// negative errno.
template <class F>
int64_t transfer(F &&f) {
  try {
    return f();
  } catch (const rig::io::IoError &e) {
    return e.errno_value == 0 || e.bytes_done > 0 ? e.bytes_done : -e.errno_value;
  } catch (const std::invalid_argument &) {
    return -EINVAL;
  } catch (const std::bad_alloc &) {
    return -ENOMEM;
  }
}

int64_t disk_read(void *, void *region, int64_t offset, void *dst, int64_t n) {
  auto *r = static_cast<DiskRegion *>(region);
  // Only reads the engine populates ahead of (page_populator.hpp) ask.
  const bool shared = n >= rig::io::PagePopulator::kMinBytes && rig::host_pages_shared(dst, static_cast<size_t>(n));
  return transfer([&] { return disk().engine.read(r->file(), offset, dst, n, shared); });
}

int64_t disk_write(void *, void *region, int64_t offset, const void *src, int64_t n) {
  auto *r = static_cast<DiskRegion *>(region);
  if (!r->writable) return -EBADF;
  return transfer([&] { return disk().engine.write(r->file(), offset, src, n); });
}

// RIG_DISK's budget; an option rig cannot read refuses DISK's open, with
// its reason, rather than leaving DISK unbounded unasked.
int64_t disk_budget() {
  try {
    return rig::Options::of_environment("RIG_DISK", {"budget"}).bytes("budget", INT64_MAX);
  } catch (const std::exception &e) {
    rig::throw_open(std::string("DISK: ") + e.what());
  }
}

const char *disk_describe(void *, void *region) {
  auto *r = static_cast<DiskRegion *>(region);
  return r->path.empty() ? "a scratch file" : r->path.c_str();
}

const rig_io_ops_t *disk_ops() {
  static const rig_io_ops_t ops = {sizeof(rig_io_ops_t), RIG_DISK_KEY, disk_budget(), disk_alloc,
                                   disk_free,            disk_pages,   disk_unpages,  disk_read,
                                   disk_write,           disk_describe};
  return &ops;
}

[[noreturn]] void throw_io(const char *path, const std::string &why, int code) {
  rig::Error e(RIG_EIO, std::string(path) + ": " + why);
  e.code = code;
  throw e;
}

// What a file that is not a regular file is, for the message that refuses it.
const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// Closes fd, then throws as throw_io.
[[noreturn]] void close_and_throw(int fd, const char *path, const std::string &why, int code) {
  close(fd);
  throw_io(path, why, code);
}

// Opens path as a regular file, never blocking, and fills st: O_NONBLOCK
// lets the open of a FIFO return, fstat then refuses it, and the flag is
// cleared again (so that reads wait for the disk instead of answering
// EAGAIN).  DISK serves no block device: its size is no file's size.
int open_regular(const char *path, bool writable, struct stat &st) {
  int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw_io(path, std::strerror(errno), errno);
  if (fstat(fd, &st) != 0) close_and_throw(fd, path, std::strerror(errno), errno);
  if (!S_ISREG(st.st_mode))
    close_and_throw(fd, path, std::string("is ") + kind_of(st.st_mode) + ", not a regular file",
                    S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) close_and_throw(fd, path, std::strerror(errno), errno);
  return fd;
}

}  // namespace

extern "C" {

rig_status_t rig_disk_device(rig_device_t **out) {
  RIG_API_CALL({
    if (out) *out = nullptr;
    const rig_io_ops_t *ops = disk_ops();
    return rig_open_io("DISK", ops, nullptr, out);
  });
}

rig_status_t rig_disk_open(const char *path, rig_disk_mode_t mode, int64_t offset, int64_t length,
                           rig_buffer_t **out) {
  RIG_API_CALL({
    rig::require(out != nullptr, "out is NULL");
    *out = nullptr;
    rig::require(path != nullptr, "the path is NULL");
    rig::require(mode == RIG_DISK_READ || mode == RIG_DISK_READ_WRITE, "unknown mode");
    rig::require(offset >= 0 && length >= -1, "the offset and length must not be negative");
    rig_device_t *d = nullptr;
    if (rig_disk_device(&d) != RIG_OK) throw rig::Error(RIG_EOPEN, rig_last_error());
    struct stat st;
    int fd = open_regular(path, mode == RIG_DISK_READ_WRITE, st);
    if (length == -1) length = st.st_size > offset ? st.st_size - offset : 0;
    if (offset > st.st_size || length > st.st_size - offset) {
      close(fd);
      rig::throw_invalid(std::string(path) + ": the range lies past the file's end");
    }
    auto *r = new DiskRegion{fd, offset, length, mode == RIG_DISK_READ_WRITE, path, {}, {}};
    rig_status_t s = rig_buffer_of_io(d, RIG_DISK_KEY, r, mode == RIG_DISK_READ ? RIG_ACCESS_READ : RIG_ACCESS_READ_WRITE,
                                      length, out);
    if (s != RIG_OK) disk_free(nullptr, r);
    return s;
  });
}

rig_status_t rig_disk_sync(rig_buffer_t *file) {
  RIG_API_CALL({
    rig::require_buffer(file, "file");
    void *region = nullptr;
    rig::io::check(rig_buffer_io(file, RIG_DISK_KEY, &region));
    if (!region)
      rig::throw_invalid(std::string("the buffer is memory of ") + rig_device_name(rig_buffer_device(file)) +
                         ", not a file of DISK");
    auto *r = static_cast<DiskRegion *>(region);
    const char *name = disk_describe(nullptr, r);
    if (!r->writable) rig::throw_invalid(std::string(name) + " is open RIG_DISK_READ: nothing writes it through rig");
    // The copies into the file are done, their bytes in its pages or on the
    // disk (O_DIRECT); the flush makes both durable.
    rig::io::check(rig_buffer_wait(file, RIG_ACCESS_READ));
    while (fdatasync(r->fd) != 0)
      if (errno != EINTR) throw_io(name, std::string("fdatasync: ") + std::strerror(errno), errno);
    return RIG_OK;
  });
}

}  // extern "C"
