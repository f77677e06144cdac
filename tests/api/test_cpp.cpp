/* The C++ wrapper (rig.hpp) over memory devices: the calls reach rig with
 * the right arguments, a refused call throws rig::error with its status and
 * message, and an exception from a host-access callable crosses back to the
 * caller without breaking the buffer.
 *
 * Rules asserted through the wrapper: BUF-44, BUF-48, BPROP-07, COPY-45,
 * COPY-51, COPY-77, COPY-79, COPY-87, COPY-91, COPY-101, HACC-01, HACC-04,
 * HACC-29, HACC-31, DEV-41, DEV-43, DEV-53, ERR-01.
 * The rules themselves are the conformance suite's; this file checks the
 * wrapper keeps them.
 */
#include <rig/rig.hpp>

#include <criterion/criterion.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace {

constexpr int64_t kBytes = 4096;

/* Runs call, which must throw rig::error; returns it. */
template <class Call>
rig::error expect_error(rig_status_t status, Call call) {
  try {
    call();
  } catch (const rig::error &e) {
    cr_assert_eq(e.status(), status, "expected %s, got %s (%s)", rig_status_name(status),
                 e.status_name(), e.what());
    cr_assert(std::strlen(e.what()) > 0, "rig::error without a message");
    return e;
  }
  cr_assert_fail("expected rig::error %s, nothing was thrown", rig_status_name(status));
  throw std::logic_error("unreachable");
}

/* The bytes of b, read through rig::buffer::read. */
std::vector<std::byte> bytes_of(const rig::buffer &b) {
  std::vector<std::byte> out;
  b.read([&](std::span<const std::byte> s) { out.assign(s.begin(), s.end()); });
  return out;
}

bool all_equal(std::span<const std::byte> s, uint8_t c) {
  return std::all_of(s.begin(), s.end(), [c](std::byte x) { return x == std::byte{c}; });
}

struct callable_failed : std::runtime_error {
  callable_failed() : std::runtime_error("callable failed") {}
};

}  // namespace

Test(cpp, fill_copy_read_back) /* COPY-91, COPY-101, COPY-77, COPY-87, HACC-01, HACC-29 */ {
  rig::device mem = rig::device::open("MEM:0");
  cr_assert_str_eq(mem.name(), "MEM:0");
  cr_assert(mem == rig::device::open("MEM:0"), "a second open of MEM:0 is the same device");

  rig::buffer src = rig::buffer::create(mem, kBytes);
  rig::buffer dst = rig::buffer::create(mem, kBytes);
  cr_assert_eq(src.bytes(), kBytes);
  cr_assert(src.device() == mem);

  src.fill(0x5a);
  dst.fill(0x00);
  rig::copy(src, dst);

  /* read gives the bytes in place: the span starts at the host address. */
  const void *seen = nullptr;
  int64_t seen_n = -1;
  dst.read([&](std::span<const std::byte> s) {
    seen = s.data();
    seen_n = static_cast<int64_t>(s.size());
    cr_assert(all_equal(s, 0x5a), "copy did not carry the filled bytes");
  });
  cr_assert_eq(seen, dst.host());
  cr_assert_eq(seen_n, kBytes);

  std::array<std::byte, 16> tail{};
  dst.blit_to(tail, kBytes - 16);
  cr_assert(all_equal(tail, 0x5a));

  /* submit_fill after a wait on a point, then a boxed copy after the fill. */
  rig::point filled = src.submit_fill(0x11, std::array{rig::point(rig::device::host(), 0)});
  filled.wait();
  cr_assert(filled.reached());
  std::array boxes{rig::row(0, 0, 8), rig::row(8, 100, 8)};
  rig::submit_copy(src, dst, boxes, std::array{filled}).wait();
  std::vector<std::byte> got = bytes_of(dst);
  cr_assert(all_equal(std::span(got).subspan(0, 8), 0x11));
  cr_assert(all_equal(std::span(got).subspan(8, 92), 0x5a));
  cr_assert(all_equal(std::span(got).subspan(100, 8), 0x11));
  cr_assert(all_equal(std::span(got).subspan(108), 0x5a));
}

Test(cpp, boxes_and_blits_keep_positions) /* COPY-45, COPY-51, BUF-44 */ {
  rig::device mem0 = rig::device::open("MEM:0");
  rig::device mem1 = rig::device::open("MEM:1");
  std::array<std::byte, 64> pattern;
  for (size_t i = 0; i < pattern.size(); i++) pattern[i] = std::byte(i + 1);

  rig::buffer src = rig::buffer::of_bytes(pattern);
  cr_assert(src.device() == rig::device::host());
  rig::buffer dst = rig::buffer::create(mem1, 64);
  dst.fill(0);
  /* Two rows of 4 bytes, source pitch 16, destination pitch 8. */
  rig_box_t box{2, 1, 4, 2, 16, 8};
  rig::submit_copy(src, dst, std::span(&box, 1)).wait();
  std::vector<std::byte> got = bytes_of(dst);
  for (int64_t r = 0; r < 2; r++)
    for (int64_t i = 0; i < 4; i++)
      cr_assert_eq(got[1 + r * 8 + i], pattern[2 + r * 16 + i], "row %ld byte %ld",
                   (long)r, (long)i);
  cr_assert_eq(got[0], std::byte{0});
  cr_assert_eq(got[5], std::byte{0});

  /* A view's byte 0 is the viewed buffer's byte first. */
  rig::buffer on_mem0 = rig::buffer::create(mem0, 64);
  on_mem0.blit_from(pattern);
  rig::buffer v = on_mem0.view(10, 20);
  cr_assert_eq(v.bytes(), 20);
  std::array<std::byte, 20> through_view{};
  v.blit_to(through_view);
  cr_assert(std::equal(through_view.begin(), through_view.end(), pattern.begin() + 10));
}

Test(cpp, copies_share_and_moves_empty_the_handle) /* BPROP-07 */ {
  rig::device mem = rig::device::open("MEM:0");
  rig::buffer a = rig::buffer::create(mem, kBytes);
  a.fill(0x33);
  rig::buffer shared = a; /* a second reference */
  a = rig::buffer();
  cr_assert(!a);
  cr_assert_null(shared.dead(), "the copy keeps the buffer alive");
  cr_assert(all_equal(bytes_of(shared), 0x33));

  rig::buffer moved = std::move(shared);
  cr_assert(!shared);
  cr_assert(moved);

  /* The host reaches a memory device's memory: the borrow exists. */
  std::optional<rig::buffer> on_host = moved.borrow(rig::device::host());
  cr_assert(on_host.has_value(), "the host borrows a memory device's memory");
  cr_assert(on_host->is_borrowed());
  cr_assert(on_host->device() == rig::device::host());
  cr_assert_eq(on_host->host(), moved.host());
}

Test(cpp, refused_call_throws_einval) /* BUF-48, COPY-79, ERR-01 */ {
  rig::device mem = rig::device::open("MEM:0");
  rig::buffer b = rig::buffer::create(mem, kBytes);
  rig::buffer shorter = rig::buffer::create(mem, kBytes / 2);

  expect_error(RIG_EINVAL, [&] { b.view(kBytes - 8, 16); });
  rig::error e = expect_error(RIG_EINVAL, [&] { rig::copy(b, shorter); });
  cr_assert_str_eq(e.status_name(), "RIG_EINVAL");
  cr_assert_null(e.device());
  /* ERR-01: neither refusal touched b. */
  b.fill(7);
  cr_assert(all_equal(bytes_of(b), 7));
}

Test(cpp, callable_exception_propagates) /* HACC-04, HACC-31 */ {
  rig::device mem = rig::device::open("MEM:0");
  rig::buffer b = rig::buffer::create(mem, kBytes);
  b.fill(0x42);

  int calls = 0;
  auto throwing = [&](std::span<const std::byte>) {
    calls++;
    throw callable_failed();
  };
  cr_assert_throw(b.read(throwing), callable_failed);
  cr_assert_eq(calls, 1);
  auto throwing_writer = [&](std::span<std::byte> s) {
    s[0] = std::byte{0x43};
    throw callable_failed();
  };
  cr_assert_throw(b.write(throwing_writer), callable_failed);

  /* The claims were released: the buffer is still fully usable. */
  cr_assert_null(b.dead());
  b.write([](std::span<std::byte> s) { std::fill(s.begin(), s.end(), std::byte{0x44}); });
  rig::buffer out = rig::buffer::create(mem, kBytes);
  rig::copy(b, out);
  cr_assert(all_equal(bytes_of(out), 0x44), "work after write sees its bytes");
}

Test(cpp, lost_device_error_names_it) /* DEV-41, DEV-43, DEV-53 */ {
  rig::device d = rig::device::open("MEM:41");
  d.close();
  cr_assert_str_eq(d.lost(), "closed");
  rig::error e = expect_error(RIG_ELOST, [&] { rig::buffer::create(d, 64); });
  cr_assert(rig::device(e.device()) == d, "rig::error keeps the lost device");
  expect_error(RIG_EINVAL, [] { rig::device::host().close(); });
}
