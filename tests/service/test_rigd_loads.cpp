/* Files loaded into a served device's memory through rigd (MEM:0@rigd).
 *
 * The host does not address a proxy's memory, so a copy from a file (an io
 * device's memory) into it passes through staging (COPY-15): the io device
 * reads the file into staging, which the process shares with rigd, 8 MiB
 * at a time on several threads, and rigd's device copies each part out as
 * soon as it is read; the copy holds one staging allocation, or two in
 * turn, and reads into one again only once the work that last read it is
 * done (COPY-19, COPY-25).  Each test checks every byte, on files whose
 * length is no multiple of staging's allocations, of the parts, of the io
 * engine's 1 MiB chunks or of a page, so that the last part is short and
 * the readers' turns end unevenly.
 *
 * Each test runs in a process of its own (Criterion's), connected to a
 * rigd it starts. */
#include "rigd_process.hpp"

#include <rig/disk.h>
#include <rig/rig.h>
#include <rig/safetensors.h>
#include <rig/service.h>

#include <criterion/criterion.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr int64_t kPiece = int64_t{32} << 20;  // a staging allocation
constexpr int64_t kPart = int64_t{8} << 20;    // what a reader reads at a time

void check(rig_status_t status, const char *what) {
  cr_assert(status == RIG_OK, "%s: %s: %s", what, rig_status_name(status), rig_last_error());
}

rig_device_t *connect_and_open(const RigdProcess &rigd) {
  rig_service_options_t options{sizeof options, rigd.socket.c_str()};
  check(rig_service_connect(&options, nullptr), "connect");
  rig_device_t *d = nullptr;
  check(rig_open("MEM:0@rigd", nullptr, &d), "MEM:0@rigd");
  return d;
}

// Bytes that differ from their neighbours and from one piece to the next,
// so that a misplaced or repeated piece shows.
std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; i++) bytes[i] = static_cast<uint8_t>(i * 131 + (i >> 9) + (i >> 25) * 7);
  return bytes;
}

std::string write_file(const RigdProcess &rigd, const char *name, const std::vector<uint8_t> &bytes) {
  std::string path = rigd.directory + "/" + name;
  FILE *f = std::fopen(path.c_str(), "wb");
  cr_assert(f != nullptr, "cannot create %s", path.c_str());
  cr_assert(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size(), "cannot write %s", path.c_str());
  cr_assert(std::fclose(f) == 0);
  return path;
}

// Every byte of b, read back into host memory.
std::vector<uint8_t> read_back(rig_buffer_t *b) {
  int64_t n = rig_buffer_bytes(b);
  std::vector<uint8_t> bytes(static_cast<size_t>(n));
  if (n > 0) check(rig_buffer_blit_to_bytes(b, 0, bytes.data(), n, 0, n), "read back");
  return bytes;
}

// Asserts got == want, naming the first byte that differs.
void assert_same(const std::vector<uint8_t> &got, const uint8_t *want, size_t n, const char *what) {
  cr_assert_eq(got.size(), n, "%s: %zu bytes, not %zu", what, got.size(), n);
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) cr_assert_fail("%s: byte %zu is %u, the file's is %u", what, i, got[i], want[i]);
}

// Loads [offset, offset + length) of path into a new MEM:0@rigd buffer as
// rig load does, and checks every byte against want.
void load_and_check(rig_device_t *d, const std::string &path, int64_t offset, int64_t length,
                    const std::vector<uint8_t> &want, const char *what) {
  rig_buffer_t *file = nullptr, *into = nullptr;
  check(rig_disk_open(path.c_str(), RIG_DISK_READ, offset, length, &file), "open the file");
  cr_assert_eq(rig_buffer_bytes(file), length);
  check(rig_buffer_create(d, length, RIG_MEMORY_DEVICE, &into), "create on MEM:0@rigd");
  check(rig_buffer_copy(file, into), "copy the file into MEM:0@rigd");
  assert_same(read_back(into), want.data() + offset, static_cast<size_t>(length), what);
  rig_buffer_unref(into);
  rig_buffer_unref(file);
}

}  // namespace

Test(rigd_loads, COPY_15_COPY_19_a_file_loads_into_MEM0_at_rigd_byte_for_byte, .timeout = 120) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  rig_device_t *d = connect_and_open(rigd);
  // Three pieces, the last 12411 bytes: no multiple of 32 MiB, 1 MiB or a page.
  const std::vector<uint8_t> bytes = pattern(static_cast<size_t>(2 * kPiece + 3 * 4096 + 123));
  std::string path = write_file(rigd, "load.bin", bytes);
  const auto n = static_cast<int64_t>(bytes.size());
  load_and_check(d, path, 0, n, bytes, "the whole file");
  // A range that starts off any page: the reads cannot all be O_DIRECT.
  load_and_check(d, path, 4097, n - 4097 - 5, bytes, "a range from byte 4097");
  // One allocation and a byte: two allocations, the second one byte.
  load_and_check(d, path, 1, kPiece + 1, bytes, "a piece and a byte");
  // Less than an allocation, a part and a half: one allocation, two readers.
  load_and_check(d, path, 3, kPart + kPart / 2, bytes, "a part and a half");
  // Less than a part: one reader.
  load_and_check(d, path, 0, 1000, bytes, "1000 bytes");
  unlink(path.c_str());
  rig_close(d);
}

Test(rigd_loads, COPY_25_loads_one_after_another_reuse_staging_after_its_work, .timeout = 120) {
  // Each load's readers reuse the staging of the load before; a reuse that
  // did not wait for rigd's copy out of it would leave the next load's bytes
  // in the earlier buffer's place.
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  rig_device_t *d = connect_and_open(rigd);
  const std::vector<uint8_t> bytes = pattern(static_cast<size_t>(3 * kPiece + 77));
  std::string path = write_file(rigd, "again.bin", bytes);
  const auto n = static_cast<int64_t>(bytes.size());
  rig_buffer_t *file = nullptr;
  check(rig_disk_open(path.c_str(), RIG_DISK_READ, 0, -1, &file), "open the file");
  rig_buffer_t *into[3] = {};
  rig_point_t done[3] = {};
  for (int k = 0; k < 3; k++) {
    check(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &into[k]), "create on MEM:0@rigd");
    rig_box_t row = rig_row(0, 0, n);
    check(rig_buffer_submit_copy(file, into[k], &row, 1, nullptr, 0, &done[k]), "submit the load");
  }
  for (int k = 0; k < 3; k++) {
    check(rig_point_wait(done[k]), "wait for the load");
    assert_same(read_back(into[k]), bytes.data(), bytes.size(), "a load after another");
    rig_buffer_unref(into[k]);
  }
  rig_buffer_unref(file);
  unlink(path.c_str());
  rig_close(d);
}

Test(rigd_loads, COPY_15_a_safetensors_file_loads_into_MEM0_at_rigd, .timeout = 120) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  rig_device_t *d = connect_and_open(rigd);
  // "big" spans two pieces; "odd" starts at an odd byte; "none" is empty.
  const int64_t big = kPiece + 5, odd = 3 * 4;
  std::string header = "{\"big\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(big) +
                       "],\"data_offsets\":[0," + std::to_string(big) +
                       "]},\"odd\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[" + std::to_string(big) + "," +
                       std::to_string(big + odd) + "]},\"none\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[" +
                       std::to_string(big + odd) + "," + std::to_string(big + odd) + "]}}";
  const std::vector<uint8_t> data = pattern(static_cast<size_t>(big + odd));
  const uint64_t header_bytes = header.size();
  std::vector<uint8_t> file_bytes(8 + header_bytes + data.size());
  for (int i = 0; i < 8; i++) file_bytes[i] = static_cast<uint8_t>(header_bytes >> (8 * i));
  std::memcpy(file_bytes.data() + 8, header.data(), header_bytes);
  std::memcpy(file_bytes.data() + 8 + header_bytes, data.data(), data.size());
  std::string path = write_file(rigd, "model.safetensors", file_bytes);

  rig_safetensors_t *st = nullptr;
  check(rig_safetensors_open(path.c_str(), &st), "open the safetensors file");
  const size_t count = rig_safetensors_count(st);
  cr_assert_eq(count, 3);
  std::vector<rig_buffer_t *> buffers(count);
  check(rig_safetensors_load(st, d, RIG_MEMORY_DEVICE, buffers.data()), "load the tensors on MEM:0@rigd");
  for (size_t i = 0; i < count; i++) {
    const rig_tensor_info_t *t = rig_safetensors_tensor(st, i);
    const int64_t at = t->offset - static_cast<int64_t>(8 + header_bytes);
    cr_assert_eq(rig_buffer_device(buffers[i]), d, "%s is on MEM:0@rigd", t->name);
    assert_same(read_back(buffers[i]), data.data() + at, static_cast<size_t>(t->bytes), t->name);
    rig_buffer_unref(buffers[i]);
  }
  // The arena: the data in one copy, each tensor a view of it.
  rig_buffer_t *arena = nullptr;
  std::vector<rig_buffer_t *> views(count);
  check(rig_safetensors_load_arena(st, d, RIG_MEMORY_DEVICE, &arena, views.data()), "load the arena");
  assert_same(read_back(arena), data.data(), data.size(), "the arena");
  for (rig_buffer_t *v : views) rig_buffer_unref(v);
  rig_buffer_unref(arena);
  rig_safetensors_close(st);
  unlink(path.c_str());
  rig_close(d);
}

Test(rigd_loads, COPY_08_a_file_cut_short_mid_load_fails_the_copy_and_the_next_load_runs, .timeout = 120) {
  // The file shrinks after its region was opened: a reader finds it cut
  // short while the others read their parts.  The copy answers what the
  // io device's read raises, RIG_EIO (COPY-08), with no reader left
  // waiting for another's part, and the staging it held serves the next
  // load, which checks every byte.
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  rig_device_t *d = connect_and_open(rigd);
  const std::vector<uint8_t> bytes = pattern(static_cast<size_t>(3 * kPiece + 4096));
  std::string path = write_file(rigd, "shrinks.bin", bytes);
  const auto n = static_cast<int64_t>(bytes.size());
  rig_buffer_t *file = nullptr, *into = nullptr;
  check(rig_disk_open(path.c_str(), RIG_DISK_READ, 0, n, &file), "open the file");
  cr_assert(truncate(path.c_str(), kPiece + 3 * kPart + 5) == 0, "cannot truncate %s", path.c_str());
  check(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &into), "create on MEM:0@rigd");
  const rig_status_t cut = rig_buffer_copy(file, into);
  cr_assert_eq(cut, RIG_EIO, "a load past the file's end answered %s (%s)", rig_status_name(cut), rig_last_error());
  cr_assert(std::strstr(rig_last_error(), "cut short") != nullptr, "the message says the file was cut short: %s",
            rig_last_error());
  rig_buffer_unref(into);
  rig_buffer_unref(file);
  write_file(rigd, "shrinks.bin", bytes);
  load_and_check(d, path, 0, n, bytes, "the whole file again");
  unlink(path.c_str());
  rig_close(d);
}
