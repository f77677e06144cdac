/* rig.hpp's wrappers of typed host access, exported arrays, claims, disk
 * and the service: each reaches its C call and keeps its rule.
 *
 * Rules asserted through the wrapper: HACC-01 (the bytes in place, an
 * export too), HACC-10 (not whole elements: RIG_EINVAL), INTRO-16 (the only
 * claim holds the memory exclusive), RECL-01 (Buffer.free returns the
 * memory early), COPY-77 (copy of a file region).
 */
#include <rig/rig.hpp>

#include <criterion/criterion.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <unistd.h>
#include <vector>

namespace {

rig::buffer words_on_host(int64_t count) {
  return rig::buffer::create(rig::device::host(), count * static_cast<int64_t>(sizeof(uint32_t)));
}

}  // namespace

Test(cpp_wrappers, typed_host_access_sees_whole_elements) {
  rig::buffer b = words_on_host(256);
  b.write_as<uint32_t>([](std::span<uint32_t> words) {
    cr_assert_eq(words.size(), 256u);
    std::iota(words.begin(), words.end(), 1000u);
  });
  uint64_t sum = 0;
  b.read_as<uint32_t>([&](std::span<const uint32_t> words) {
    for (uint32_t w : words) sum += w;
  });
  cr_assert_eq(sum, 256u * 1000u + 255u * 256u / 2u);
  // 6 bytes are not whole uint32_ts: rig refuses, the wrapper throws.
  rig::buffer odd = rig::buffer::create(rig::device::host(), 6);
  try {
    odd.read_as<uint32_t>([](std::span<const uint32_t>) { cr_assert_fail("called on 6 bytes"); });
    cr_assert_fail("no rig::error");
  } catch (const rig::error &e) {
    cr_assert_eq(e.status(), RIG_EINVAL);
  }
}

Test(cpp_wrappers, export_array_is_a_typed_span_over_the_bytes) {
  rig::buffer b = words_on_host(16);
  b.write_as<uint32_t>([](std::span<uint32_t> words) { std::fill(words.begin(), words.end(), 7u); });
  rig::exported e = b.export_array(sizeof(uint32_t));
  std::span<uint32_t> words = e.as<uint32_t>();
  cr_assert_eq(words.size(), 16u);
  cr_assert_eq(static_cast<void *>(words.data()), b.host(), "the export is the buffer's memory, not a copy");
  cr_assert_eq(words[15], 7u);
}

Test(cpp_wrappers, claims_hold_and_free) {
  rig::buffer b = rig::buffer::create(rig::device::open("MEM:0"), 4096);
  cr_assert(b.claim_begin(), "the only hold is exclusive");
  cr_assert_not(b.free_early(), "a held buffer does not free");
  b.claim_end();
  cr_assert(b.free_early("done"));
  cr_assert_str_eq(b.dead(), "done");
}

Test(cpp_wrappers, disk_open_copies_a_file_into_device_memory) {
  char path[] = "/tmp/rig-cpp-disk-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  std::vector<std::byte> bytes(8192);
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<std::byte>(i * 13);
  cr_assert_eq(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
  rig::buffer file = rig::disk::open(path);
  unlink(path);
  cr_assert_eq(file.device(), rig::disk::device());
  rig::buffer on_mem = rig::buffer::create(rig::device::open("MEM:0"), file.bytes());
  rig::copy(file, on_mem);
  std::vector<std::byte> back(bytes.size());
  on_mem.blit_to(back);
  cr_assert(back == bytes);
}

Test(cpp_wrappers, machine_connect_throws_the_reason) {
  try {
    rig::machine::connect("/nonexistent/rigd.sock");
    cr_assert_fail("connected to no rigd");
  } catch (const rig::error &e) {
    cr_assert_eq(e.status(), RIG_EOPEN);
    cr_assert(std::string(e.what()).find("/nonexistent/rigd.sock") != std::string::npos, "%s", e.what());
  }
}
