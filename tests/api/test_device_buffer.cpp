/* Typed device buffers (rig/device_buffer.hpp), the spec's Device.Buffer,
 * over memory devices.  Every TOLK rule of spec/RULES.md is named by the
 * test that asserts it: TOLK-01 to TOLK-50.  An allocator that counts its
 * hooks' calls, and can hide its offset and transfer hooks, shows what the
 * layer asks of it.
 */
#include <rig/device_buffer.hpp>

#include <criterion/criterion.h>

#include <cstring>
#include <memory>
#include <set>
#include <vector>

namespace {

class Counting : public rig::RigAllocator {
 public:
  bool offset_hook = true;
  bool transfer_hook = true;
  int allocs = 0, frees = 0, offsets = 0, transfers = 0;

  rig::buffer alloc(const std::string &device, int64_t nbytes, const rig::BufferSpec &spec) override {
    allocs++;
    return RigAllocator::alloc(device, nbytes, spec);
  }
  void free(rig::buffer storage, int64_t nbytes, const rig::BufferSpec &spec) override {
    frees++;
    RigAllocator::free(std::move(storage), nbytes, spec);
  }
  bool supports_offset() const override { return offset_hook; }
  rig::buffer offset(const rig::buffer &base, int64_t nbytes, int64_t offset) override {
    offsets++;
    return RigAllocator::offset(base, nbytes, offset);
  }
  bool supports_transfer() const override { return transfer_hook; }
  void transfer(const rig::buffer &dst, const rig::buffer &src, int64_t nbytes) override {
    transfers++;
    RigAllocator::transfer(dst, src, nbytes);
  }
};

using rig::DeviceBuffer;
namespace dtypes = rig::dtypes;

/* Runs call, which must throw rig::invalid_argument (RIG_EINVAL) with a
 * message. */
template <class Call>
void expect_invalid(const char *rule, Call call) {
  try {
    call();
  } catch (const rig::invalid_argument &e) {
    cr_assert_eq(e.status(), RIG_EINVAL, "%s: the status is not RIG_EINVAL", rule);
    cr_assert(std::strlen(e.what()) > 0, "%s: RIG_EINVAL without a message", rule);
    return;
  }
  cr_assert_fail("%s: expected RIG_EINVAL, nothing was thrown", rule);
}

std::vector<std::byte> pattern(size_t n, int seed = 1) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; i++) out[i] = static_cast<std::byte>((i * 7 + static_cast<size_t>(seed)) & 0xff);
  return out;
}

DeviceBuffer floats(const std::shared_ptr<Counting> &a, int64_t n = 64, const char *device = "MEM:0") {
  return DeviceBuffer::create(device, n, dtypes::float32, a);
}

}  // namespace

Test(device_buffer, create_makes_an_unallocated_base_buffer) {
  /* TOLK-01, TOLK-02, TOLK-03 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = DeviceBuffer::create("MEM:0", 10, dtypes::int32, a);
  cr_assert(!b.is_allocated() && !b.is_initialized(), "TOLK-01: a created buffer is allocated");
  cr_assert_eq(a->allocs, 0, "TOLK-01: create asked the allocator for storage");
  cr_assert(b.device() == "MEM:0" && b.size() == 10 && b.dtype() == dtypes::int32, "TOLK-02");
  cr_assert(b.spec() == rig::BufferSpec{}, "TOLK-03: the spec is not the default");
  DeviceBuffer pinned = DeviceBuffer::create("MEM:0", 1, dtypes::int8, a, rig::BufferSpec{RIG_MEMORY_MAPPED});
  cr_assert_eq(pinned.spec().memory, RIG_MEMORY_MAPPED, "TOLK-02: the spec given is kept");
}

Test(device_buffer, every_buffer_has_a_unique_id) {
  /* TOLK-04, TOLK-13 */
  auto a = std::make_shared<Counting>();
  std::set<uint64_t> ids;
  std::vector<DeviceBuffer> kept;
  for (int i = 0; i < 8; i++) {
    DeviceBuffer b = floats(a);
    DeviceBuffer v = b.view(4, dtypes::float32, 16);
    DeviceBuffer vv = v.view(1, dtypes::int32, 4);
    for (const DeviceBuffer &x : {b, v, vv}) cr_assert(ids.insert(x.id()).second, "TOLK-04: an id repeats");
    cr_assert(b.base_id() == b.id(), "TOLK-13: a base's base_id is its id");
    cr_assert(v.base_id() == b.id() && vv.base_id() == b.id(), "TOLK-13: a view's base_id is its root's id");
    cr_assert(DeviceBuffer(b) == b && DeviceBuffer(b).id() == b.id(), "TOLK-04: a copy is the same buffer");
    kept.push_back(b);
  }
}

Test(device_buffer, the_last_handle_deallocates) {
  /* TOLK-05 */
  auto a = std::make_shared<Counting>();
  {
    DeviceBuffer b = floats(a);
    b.allocate();
    DeviceBuffer v = b.view(4, dtypes::float32, 0);
    v.allocate();
    { DeviceBuffer copy = b; }
    cr_assert_eq(a->frees, 0, "TOLK-05: a copy's destruction freed the storage");
  }
  cr_assert_eq(a->frees, 1, "TOLK-05: the unreachable buffer's storage was freed %d times, not once", a->frees);
}

Test(device_buffer, the_uop_refcount_frees_and_keeps_nothing) {
  /* TOLK-06, TOLK-32, TOLK-33 */
  auto a = std::make_shared<Counting>();
  {
    DeviceBuffer b = floats(a);
    DeviceBuffer v = b.view(4, dtypes::float32, 8);
    cr_assert_eq(&b.add_ref(5), &b, "TOLK-33: add_ref returns its buffer");
    cr_assert_eq(b.uop_refcount(), 5, "TOLK-33: add_ref 5 on a count of 0");
    v.add_ref(2);
    cr_assert(b.uop_refcount() == 7 && v.uop_refcount() == 7, "TOLK-32: a view and its base read one count");
    b.allocate();
    b.add_ref(-7);
    cr_assert(b.uop_refcount() == 0 && b.is_allocated(), "TOLK-06: a count of 0 freed the storage");
    b.add_ref(3);
  }
  cr_assert_eq(a->frees, 1, "TOLK-06: a positive count kept the storage alive");
}

Test(device_buffer, a_view_reads_back_as_made) {
  /* TOLK-07, TOLK-08, TOLK-15, TOLK-31 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = DeviceBuffer::create("MEM:0", 64, dtypes::uint8, a, rig::BufferSpec{RIG_MEMORY_MAPPED});
  DeviceBuffer v = b.view(6, dtypes::int16, 20);
  cr_assert(v.size() == 6 && v.dtype() == dtypes::int16 && v.offset() == 20, "TOLK-07");
  cr_assert(v.allocator() == b.allocator() && v.spec() == b.spec(), "TOLK-08: the view's allocator or spec differ");
  cr_assert(v.allocator().get() == a.get(), "TOLK-31: allocator is the base's");
  cr_assert_eq(b.offset(), 0, "TOLK-15: a base's offset is not 0");
  cr_assert_eq(v.view(1, dtypes::int16, 4).offset(), 24, "TOLK-07: a view of a view counts from the root");
}

Test(device_buffer, a_view_shares_the_base_storage) {
  /* TOLK-09 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = DeviceBuffer::create("MEM:0", 64, dtypes::uint8, a);
  b.allocate();
  b.copyin(std::vector<std::byte>(64));
  DeviceBuffer v = b.view(4, dtypes::int32, 16);
  v.allocate();
  std::vector<std::byte> in = pattern(16);
  v.copyin(in);
  std::vector<std::byte> all = b.as_bytes();
  cr_assert(std::memcmp(all.data() + 16, in.data(), 16) == 0, "TOLK-09: the view's bytes are not at its offset");
  cr_assert(all[15] == std::byte{0} && all[32] == std::byte{0}, "TOLK-09: bytes outside the view changed");
}

Test(device_buffer, view_refuses_offsets_outside_the_buffer) {
  /* TOLK-10, TOLK-11, TOLK-12 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = DeviceBuffer::create("MEM:0", 64, dtypes::uint8, a);
  expect_invalid("TOLK-10", [&] { b.view(1, dtypes::uint8, -1); });
  expect_invalid("TOLK-11", [&] { b.view(1, dtypes::uint8, 64); });
  expect_invalid("TOLK-12", [&] { b.view(2, dtypes::int32, 60); });
  DeviceBuffer v = b.view(8, dtypes::uint8, 48);
  expect_invalid("TOLK-12 (of a view)", [&] { v.view(4, dtypes::int32, 4); });
  expect_invalid("TOLK-11 (of a view)", [&] { v.view(1, dtypes::uint8, 8); });
  v.view(2, dtypes::int32, 0);  // the whole view: it fits
}

Test(device_buffer, base_is_the_root) {
  /* TOLK-14 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = floats(a);
  DeviceBuffer v = b.view(8, dtypes::float32, 32);
  cr_assert(b.base() == b, "TOLK-14: a base's base is not itself");
  cr_assert(v.base() == b && v.view(2, dtypes::float32, 4).base() == b, "TOLK-14: a view's base is not the root");
}

Test(device_buffer, nbytes_is_size_times_itemsize) {
  /* TOLK-16 */
  auto a = std::make_shared<Counting>();
  for (rig::Dtype t : {dtypes::int8, dtypes::float16, dtypes::float32, dtypes::float64})
    cr_assert_eq(DeviceBuffer::create("MEM:0", 12, t, a).nbytes(), 12 * t.itemsize, "TOLK-16");
}

Test(device_buffer, allocate_materialises_once) {
  /* TOLK-17, TOLK-19 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = floats(a);
  b.allocate();
  cr_assert(b.is_allocated() && b.is_initialized() && a->allocs == 1, "TOLK-17");
  cr_assert(b.storage().bytes() == b.nbytes(), "TOLK-17: the storage has not the buffer's bytes");
  expect_invalid("TOLK-19", [&] { b.allocate(); });
  cr_assert_eq(a->allocs, 1, "TOLK-19: a refused allocate allocated");
}

Test(device_buffer, allocating_a_view_allocates_its_base_first) {
  /* TOLK-18, TOLK-22, TOLK-23 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = floats(a);
  DeviceBuffer v = b.view(4, dtypes::float32, 16);
  DeviceBuffer other = b.view(4, dtypes::float32, 0);
  cr_assert(!v.is_allocated(), "TOLK-22: a view of an unallocated base is allocated");
  v.allocate();
  cr_assert(b.is_allocated() && a->allocs == 1 && a->offsets == 1, "TOLK-18: base then offset hook");
  cr_assert(v.storage().host() == static_cast<std::byte *>(b.storage().host()) + 16,
            "TOLK-18: the view's storage is not at its offset");
  cr_assert(other.is_allocated(), "TOLK-22: a view of an allocated base is not allocated");
  cr_assert(!other.is_initialized(), "TOLK-23: an unallocated view reports initialised");
}

Test(device_buffer, allocating_a_view_needs_offset_views) {
  /* TOLK-20, TOLK-28 */
  auto a = std::make_shared<Counting>();
  a->offset_hook = false;
  DeviceBuffer b = floats(a);
  DeviceBuffer v = b.view(4, dtypes::float32, 16);
  cr_assert(!v.supports_offset() && !b.supports_offset(), "TOLK-28: supports_offset without the hook");
  expect_invalid("TOLK-20", [&] { v.allocate(); });
  cr_assert_eq(a->offsets, 0, "TOLK-20");
  a->offset_hook = true;
  cr_assert(v.supports_offset(), "TOLK-28: no supports_offset with the hook");
}

Test(device_buffer, ensure_allocated_allocates_once) {
  /* TOLK-21 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = floats(a);
  b.ensure_allocated();
  rig::buffer first = b.storage();
  b.ensure_allocated();
  cr_assert(a->allocs == 1 && b.storage().get() == first.get(), "TOLK-21: a second ensure_allocated allocated");
  DeviceBuffer v = b.view(2, dtypes::float32, 0);
  v.ensure_allocated();
  v.ensure_allocated();
  cr_assert(a->offsets == 1 && v.is_initialized(), "TOLK-21: ensure_allocated of a view");
}

Test(device_buffer, deallocate_frees_a_base_and_does_nothing_twice) {
  /* TOLK-24, TOLK-26 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = floats(a);
  b.deallocate();
  cr_assert_eq(a->frees, 0, "TOLK-26: deallocate of a never allocated buffer freed");
  b.allocate();
  b.deallocate();
  cr_assert(a->frees == 1 && !b.is_allocated(), "TOLK-24");
  b.deallocate();
  cr_assert_eq(a->frees, 1, "TOLK-26: a second deallocate freed");
}

Test(device_buffer, deallocate_refuses_a_base_with_views_and_detaches_a_view) {
  /* TOLK-25, TOLK-27 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = floats(a);
  DeviceBuffer v = b.view(4, dtypes::float32, 16);
  v.allocate();
  expect_invalid("TOLK-27", [&] { b.deallocate(); });
  cr_assert(b.is_allocated() && a->frees == 0, "TOLK-27: the refused deallocate freed");
  v.deallocate();
  cr_assert(!v.is_initialized() && b.is_allocated() && a->frees == 0, "TOLK-25");
  b.deallocate();
  cr_assert_eq(a->frees, 1, "TOLK-25: the detached view still counts as allocated");
}

Test(device_buffer, supports_transfer_needs_the_hook_and_one_backend) {
  /* TOLK-29, TOLK-30 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer m0 = floats(a, 8, "MEM:0"), m1 = floats(a, 8, "MEM:1"), cpu = floats(a, 8, "CPU");
  cr_assert(m1.supports_transfer(m0), "TOLK-29: MEM:0 and MEM:1 share MEM");
  cr_assert(!cpu.supports_transfer(m0) && !m0.supports_transfer(cpu), "TOLK-30: CPU and MEM differ");
  a->transfer_hook = false;
  cr_assert(!m1.supports_transfer(m0), "TOLK-29: supports_transfer without the hook");
}

Test(device_buffer, copyin_and_copyout) {
  /* TOLK-34, TOLK-35, TOLK-36, TOLK-37, TOLK-38, TOLK-39, TOLK-40 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = floats(a, 16);
  std::vector<std::byte> in = pattern(64);
  std::vector<std::byte> out(64);
  expect_invalid("TOLK-36", [&] { b.copyin(in); });
  expect_invalid("TOLK-39", [&] { b.copyout(out); });
  cr_assert_eq(a->allocs, 0, "TOLK-36: copyin allocated");
  b.allocate();
  expect_invalid("TOLK-35", [&] { b.copyin(std::span(in).first(63)); });
  expect_invalid("TOLK-38", [&] { b.copyout(std::span(out).first(63)); });
  b.copyin(in);
  b.copyout(out);
  cr_assert(out == in, "TOLK-34, TOLK-37: copyout did not yield copyin's bytes");
  std::vector<std::byte> fresh = b.as_bytes();
  cr_assert(fresh.size() == 64 && fresh == in, "TOLK-40");
  cr_assert(fresh.data() != out.data(), "TOLK-40: as_bytes is not fresh");
}

Test(device_buffer, transfer_through_the_hook) {
  /* TOLK-41, TOLK-42, TOLK-43, TOLK-44, TOLK-45 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer src = floats(a, 16, "MEM:0"), dst = floats(a, 16, "MEM:1");
  expect_invalid("TOLK-44", [&] { DeviceBuffer::transfer(dst, floats(a, 15, "MEM:0")); });
  expect_invalid("TOLK-45", [&] { DeviceBuffer::transfer(dst, DeviceBuffer::create("MEM:0", 16, dtypes::int32, a)); });
  cr_assert_eq(a->allocs, 0, "TOLK-44, TOLK-45: a refused transfer allocated");
  src.allocate();
  std::vector<std::byte> in = pattern(64, 3);
  src.copyin(in);
  cr_assert(DeviceBuffer::transfer(dst, src), "TOLK-41: transfer with the hook answered false");
  cr_assert(a->transfers == 1 && dst.is_allocated(), "TOLK-41, TOLK-43: the hook or dst's allocation");
  cr_assert(dst.as_bytes() == in, "TOLK-41: the bytes did not move");
  DeviceBuffer fresh_src = floats(a, 16, "MEM:0"), fresh_dst = floats(a, 16, "MEM:1");
  cr_assert(DeviceBuffer::transfer(fresh_dst, fresh_src), "TOLK-43");
  cr_assert(fresh_src.is_allocated() && fresh_dst.is_allocated(), "TOLK-43: both are allocated first");
  a->transfer_hook = false;
  DeviceBuffer none = floats(a, 16, "MEM:1");
  cr_assert(!DeviceBuffer::transfer(none, src), "TOLK-42: transfer without the hook answered true");
  cr_assert(!none.is_allocated() && a->transfers == 2, "TOLK-42: a transfer without the hook acted");
}

Test(device_buffer, copy_between_through_host_memory) {
  /* TOLK-46, TOLK-47, TOLK-48, TOLK-49 */
  auto a = std::make_shared<Counting>();
  a->transfer_hook = false;
  DeviceBuffer src = floats(a, 16, "MEM:0"), dst = floats(a, 16, "CPU");
  expect_invalid("TOLK-48", [&] { DeviceBuffer::copy_between(dst, floats(a, 17, "MEM:0")); });
  expect_invalid("TOLK-49", [&] { DeviceBuffer::copy_between(dst, DeviceBuffer::create("MEM:0", 16, dtypes::uint32, a)); });
  cr_assert_eq(a->allocs, 0, "TOLK-48, TOLK-49: a refused copy_between allocated");
  DeviceBuffer::copy_between(dst, src);
  cr_assert(src.is_allocated() && dst.is_allocated(), "TOLK-47: copy_between left a buffer unallocated");
  std::vector<std::byte> in = pattern(64, 9);
  src.copyin(in);
  DeviceBuffer::copy_between(dst, src);
  cr_assert(dst.as_bytes() == in && a->transfers == 0, "TOLK-46: not copied, or not through host memory");
}

Test(device_buffer, addr_allocates_and_answers_the_address) {
  /* TOLK-50 */
  auto a = std::make_shared<Counting>();
  DeviceBuffer b = floats(a);
  uintptr_t address = b.addr();
  cr_assert(b.is_allocated() && a->allocs == 1, "TOLK-50: addr did not allocate");
  cr_assert_eq(address, reinterpret_cast<uintptr_t>(b.storage().host()), "TOLK-50: not the storage's address");
  cr_assert_eq(b.addr(), address, "TOLK-50: a second addr moved");
  DeviceBuffer v = b.view(4, dtypes::float32, 16);
  cr_assert_eq(v.addr(), address + 16, "TOLK-50: a view's address is not at its offset");
}

Test(device_buffer, create_refuses_sizes_that_overflow) {
  /* TOLK-16 (nbytes fits int64_t) */
  auto a = std::make_shared<Counting>();
  expect_invalid("TOLK-16", [&] { DeviceBuffer::create("MEM:0", -1, dtypes::int8, a); });
  expect_invalid("TOLK-16", [&] { DeviceBuffer::create("MEM:0", INT64_MAX / 2, dtypes::float32, a); });
  expect_invalid("create", [&] { DeviceBuffer::create("MEM:0", 1, dtypes::int8, nullptr); });
}
