// Host access: read, write, wait, reached and export of a buffer's bytes.
#include "buffer.hpp"
#include "registry.hpp"

#include <chrono>
#include <cstdint>
#include <thread>

using namespace rig;

namespace {

bool writes(rig_access_t access) { return access == RIG_ACCESS_READ_WRITE; }

void require_access(rig_access_t access) {
  require(access == RIG_ACCESS_READ || access == RIG_ACCESS_READ_WRITE, "unknown access");
}

// The buffer's bytes as elements of elem_size, checked as host access needs.
void *host_bytes(rig_buffer_t *b, int64_t elem_size) {
  require(elem_size > 0, "the element size must be positive");
  require(b->length % elem_size == 0, "the buffer's bytes are not a whole number of elements");
  if (b->length == 0) return nullptr;
  void *p = host_address(b);
  require(p != nullptr, "the host does not address the buffer's memory");
  require(reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(elem_size) == 0,
          "the buffer's bytes do not start on a multiple of the element size");
  return p;
}

// Waits for the work other processes handed over on b's memory before now,
// where they share it (rigd's shared buffers): by reading words.
// Whether the work other processes handed over on b's memory so far is
// done: as far as it is, true; otherwise false, with *mark to wait for.
bool others_done(rig_buffer_t *b, uint64_t *mark) {
  Allocation *a = b->alloc;
  rig_device_t *owner = a->owner;
  if (owner->is_host || !a->region) return true;
  std::optional<uint64_t> m = owner->drv->others_mark(a->region);
  if (!m || owner->drv->others_done(a->region, *m)) return true;
  *mark = *m;
  return false;
}

void wait_for_others(rig_buffer_t *b) {
  uint64_t mark = 0;
  if (others_done(b, &mark)) return;
  Allocation *a = b->alloc;
  for (unsigned turn = 0; !a->owner->drv->others_done(a->region, mark); ++turn) {
    check_interrupt();
    if (turn < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Waits on the host for the work a host access must follow.
void wait_for(rig_buffer_t *b, bool write) {
  if (b->device->is_lost()) throw_lost(b->device);
  std::vector<Dependency> deps;
  dependencies(b->alloc, write, nullptr, deps);
  wait_all(deps);
  wait_for_others(b);
}

rig_status_t access(rig_buffer_t *b, int64_t elem_size, rig_access_fn f, void *context, bool write) {
  RIG_API_CALL({
    refuse_inside_lock();
    require_buffer(b, "the buffer");
    require(f != nullptr, "the function is NULL");
    if (write) require(access_of(b) == RIG_ACCESS_READ_WRITE, "the buffer admits only Read");
    void *p = host_bytes(b, elem_size);
    ReadClaim claim(b);
    wait_for(b, write);
    static char empty;
    int r = f(p ? p : &empty, b->length, context);
    if (r != 0) throw_callback(r);
    return RIG_OK;
  });
}

}  // namespace

struct rig_export : HandleRecord<HandleType::Export> {
  Allocation *alloc;
  void *bytes;
  int64_t length;
};

namespace {

bool live_handle(const rig_export_t *e) { return handle_live(e, HandleType::Export); }

}  // namespace

extern "C" {

rig_status_t rig_buffer_read(rig_buffer_t *b, int64_t elem_size, rig_access_fn f, void *context) {
  return access(b, elem_size, f, context, false);
}

rig_status_t rig_buffer_write(rig_buffer_t *b, int64_t elem_size, rig_access_fn f, void *context) {
  return access(b, elem_size, f, context, true);
}

rig_status_t rig_buffer_wait(rig_buffer_t *b, rig_access_t access) {
  RIG_API_CALL({
    refuse_inside_lock();
    require_buffer(b, "the buffer");
    require_access(access);
    wait_for(b, writes(access));
    return RIG_OK;
  });
}

rig_status_t rig_buffer_reached(rig_buffer_t *b, rig_access_t access, bool *out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = false;
    require_buffer(b, "the buffer");
    require_access(access);
    if (b->device->is_lost()) throw_lost(b->device);
    std::vector<Dependency> deps;
    dependencies(b->alloc, writes(access), nullptr, deps);
    bool all = true;
    for (const Dependency &dep : deps) {
      if (dep.device->reached(dep.value)) continue;
      dep.device->commit_to(dep.value);
      all = all && dep.device->reached(dep.value);
    }
    uint64_t mark = 0;
    *out = all && others_done(b, &mark);
    return RIG_OK;
  });
}

rig_status_t rig_buffer_export(rig_buffer_t *b, int64_t elem_size, rig_export_t **out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require_buffer(b, "the buffer");
    require(b->alloc->owner->is_host, "only the host's memory can be exported");
    void *p = host_bytes(b, elem_size);
    {
      ReadClaim claim(b);
      wait_for(b, true);
    }
    auto *e = new rig_export{{}, b->alloc, p, b->length};
    ref(b->alloc);
    b->alloc->outside_claims = true;
    *out = e;
    return RIG_OK;
  });
}

void *rig_export_bytes(const rig_export_t *e, int64_t *n) {
  bool live = live_handle(e);
  if (n) *n = live ? e->length : 0;
  return live ? e->bytes : nullptr;
}

void rig_export_unref(rig_export_t *e) {
  if (!live_handle(e)) return;
  unref(e->alloc);
  delete e;
}

}  // extern "C"
