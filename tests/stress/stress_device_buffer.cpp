/* Typed device buffers (rig/device_buffer.hpp) from threads at once: each
 * thread allocates a view of one shared base buffer, copies its pattern in
 * and out, and detaches it, while another deallocates the base whenever no
 * view holds it (TOLK-27 refuses it otherwise) and reads the reference
 * count others raise.  Ids stay unique, each view reads back its own
 * bytes, and the count ends at the sum added.  Plain C++ with an exit
 * status, so that it runs under ThreadSanitizer.
 */
#include <rig/device_buffer.hpp>

#include "check.h"

#include <atomic>
#include <cstddef>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 400;
constexpr int64_t kFloatsPerThread = 64;

std::mutex ids_mutex;
std::set<uint64_t> ids;

void record(uint64_t id) {
  std::scoped_lock lock(ids_mutex);
  CHECK(ids.insert(id).second, "TOLK-04: id %llu repeats", static_cast<unsigned long long>(id));
}

void use_views(const rig::DeviceBuffer &base, int t) {
  std::vector<std::byte> in(kFloatsPerThread * 4), out(in.size());
  for (int round = 0; round < kRounds; round++) {
    for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<std::byte>((i + static_cast<size_t>(t * 31 + round)) & 0xff);
    rig::DeviceBuffer v = base.view(kFloatsPerThread, rig::dtypes::float32, t * kFloatsPerThread * 4);
    record(v.id());
    v.ensure_allocated();
    v.copyin(in);
    v.copyout(out);
    CHECK(out == in, "TOLK-34: thread %d round %d read back other bytes", t, round);
    base.add_ref(1);
    v.deallocate();
  }
}

}  // namespace

int main() {
  auto allocator = std::make_shared<rig::RigAllocator>();
  rig::DeviceBuffer base =
      rig::DeviceBuffer::create("MEM:0", kThreads * kFloatsPerThread, rig::dtypes::float32, allocator);
  record(base.id());
  std::atomic<bool> done{false};
  std::thread dealloc([&] {
    while (!done.load()) {
      try {
        base.deallocate();
      } catch (const rig::invalid_argument &) {
        // A view is allocated: TOLK-27.
      }
      (void)base.uop_refcount();
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(use_views, std::cref(base), t);
  for (std::thread &t : threads) t.join();
  done.store(true);
  dealloc.join();
  CHECK(base.uop_refcount() == kThreads * kRounds, "TOLK-33: the count is %lld",
        static_cast<long long>(base.uop_refcount()));
  base.deallocate();
  CHECK(!base.is_allocated(), "TOLK-24: the base is still allocated");
  printf("stress_device_buffer: %d threads x %d rounds\n", kThreads, kRounds);
  return 0;
}
