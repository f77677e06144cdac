// safetensors files read into device memory (include/rig/safetensors.h):
// the header read with pread and checked (safetensors_header.hpp), the
// tensors' bytes read from a buffer of the io device DISK over the data,
// all of them in one rig_disk_read_ranges.
#include "safetensors_header.hpp"

#include "rig_calls.hpp"

#include <rig/disk.h>
#include <rig/safetensors.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

struct rig_safetensors {
  std::string path;
  int64_t data_start = 0;  // the header's end
  int64_t data_bytes = 0;
  std::vector<rig::io::TensorHeader> tensors;
  std::vector<rig_tensor_info_t> infos;  // pointing into tensors
};

namespace {

using rig::Error;

[[noreturn]] void throw_io(const std::string &path, const std::string &why, int code = 0) {
  Error e(RIG_EIO, path + ": " + why);
  e.code = code;
  throw e;
}

// An open descriptor, closed with the scope.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// n bytes at offset of fd into out, all of them, or throws naming path.
void read_exactly(int fd, const std::string &path, int64_t offset, void *out, int64_t n) {
  auto *at = static_cast<char *>(out);
  while (n > 0) {
    ssize_t r = pread(fd, at, static_cast<size_t>(n), offset);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_io(path, std::string("read failed: ") + std::strerror(errno), errno);
    if (r == 0) throw_io(path, "the file ends before its header does");
    at += r;
    offset += r;
    n -= r;
  }
}

std::unique_ptr<rig_safetensors> open_file(const std::string &path) {
  // O_NONBLOCK: an open of a FIFO must not wait for a writer.
  Fd f{open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0) throw_io(path, std::string("cannot be opened: ") + std::strerror(errno), errno);
  struct stat st;
  if (fstat(f.fd, &st) != 0) throw_io(path, std::string("fstat failed: ") + std::strerror(errno), errno);
  if (!S_ISREG(st.st_mode)) throw_io(path, "is not a regular file");
  int64_t size = st.st_size;
  if (size < 8) throw_io(path, "holds " + std::to_string(size) + " bytes, less than a header's count");
  unsigned char count[8];
  read_exactly(f.fd, path, 0, count, 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = (n << 8) | count[i];  // little-endian
  if (n < 2 || n > static_cast<uint64_t>(rig::io::kSafetensorsHeaderMax) || static_cast<int64_t>(n) > size - 8)
    throw_io(path, "its header count " + std::to_string(n) + " does not fit a header in its " + std::to_string(size) +
                       " bytes (2 to " + std::to_string(rig::io::kSafetensorsHeaderMax) + " bytes)");
  std::string header(static_cast<size_t>(n), '\0');
  read_exactly(f.fd, path, 8, header.data(), static_cast<int64_t>(n));
  auto file = std::make_unique<rig_safetensors>();
  file->path = path;
  file->data_start = 8 + static_cast<int64_t>(n);
  file->data_bytes = size - file->data_start;
  try {
    file->tensors = rig::io::parse_safetensors_header(header, file->data_bytes);
  } catch (const std::runtime_error &e) {
    throw_io(path, e.what());
  }
  for (const rig::io::TensorHeader &t : file->tensors)
    file->infos.push_back({t.name.c_str(), t.dtype.c_str(), t.shape.data(), t.shape.size(),
                           file->data_start + t.begin, t.end - t.begin});
  return file;
}

// Releases the buffers of a load that failed, leaving NULLs.
struct Made {
  rig_buffer_t **buffers;
  size_t n;
  bool kept = false;
  ~Made() {
    if (kept) return;
    for (size_t i = 0; i < n; i++) {
      rig_buffer_unref(buffers[i]);
      buffers[i] = nullptr;
    }
  }
};

using rig::io::check;
using rig::io::Held;

// A buffer over the file's data on DISK.
rig_buffer_t *data_of(const rig_safetensors *st) {
  rig_buffer_t *data = nullptr;
  check(rig_disk_open(st->path.c_str(), RIG_DISK_READ, st->data_start, st->data_bytes, &data));
  return data;
}

}  // namespace

extern "C" {

rig_status_t rig_safetensors_open(const char *path, rig_safetensors_t **out) {
  RIG_API_CALL({
    rig::require(out != nullptr, "out is NULL");
    *out = nullptr;
    rig::require(path != nullptr, "the path is NULL");
    *out = open_file(path).release();
    return RIG_OK;
  });
}

void rig_safetensors_close(rig_safetensors_t *st) { delete st; }

size_t rig_safetensors_count(const rig_safetensors_t *st) { return st ? st->infos.size() : 0; }

const rig_tensor_info_t *rig_safetensors_tensor(const rig_safetensors_t *st, size_t i) {
  return st && i < st->infos.size() ? &st->infos[i] : nullptr;
}

int64_t rig_safetensors_data_bytes(const rig_safetensors_t *st) { return st ? st->data_bytes : 0; }

rig_status_t rig_safetensors_load(rig_safetensors_t *st, rig_device_t *d, rig_memory_t m, rig_buffer_t **buffers) {
  RIG_API_CALL({
    rig::require(st != nullptr && d != nullptr && buffers != nullptr, "the file, the device or buffers is NULL");
    size_t n = st->infos.size();
    for (size_t i = 0; i < n; i++) buffers[i] = nullptr;
    Made made{buffers, n};
    Held data{data_of(st)};
    std::vector<rig_disk_range_t> ranges;
    for (size_t i = 0; i < n; i++) {
      const rig_tensor_info_t &t = st->infos[i];
      check(rig_buffer_create(d, t.bytes, m, &buffers[i]));
      if (t.bytes > 0) ranges.push_back({data.b, t.offset - st->data_start, buffers[i], 0, t.bytes});
    }
    if (!ranges.empty()) check(rig_disk_read_ranges(ranges.data(), ranges.size()));
    made.kept = true;
    return RIG_OK;
  });
}

rig_status_t rig_safetensors_load_arena(rig_safetensors_t *st, rig_device_t *d, rig_memory_t m, rig_buffer_t **arena,
                                        rig_buffer_t **views) {
  RIG_API_CALL({
    rig::require(st != nullptr && d != nullptr && arena != nullptr && views != nullptr,
                 "the file, the device, arena or views is NULL");
    *arena = nullptr;
    size_t n = st->infos.size();
    for (size_t i = 0; i < n; i++) views[i] = nullptr;
    Made made_views{views, n};
    Made made_arena{arena, 1};
    Held data{data_of(st)};
    check(rig_buffer_create(d, st->data_bytes, m, arena));
    if (st->data_bytes > 0) check(rig_buffer_copy(data.b, *arena));
    for (size_t i = 0; i < n; i++)
      check(rig_buffer_view(*arena, st->infos[i].offset - st->data_start, st->infos[i].bytes, &views[i]));
    made_views.kept = made_arena.kept = true;
    return RIG_OK;
  });
}

}  // extern "C"
