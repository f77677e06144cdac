#include "buffer.hpp"

#include "registry.hpp"

#include <cstring>

using namespace rig;

namespace rig {

void require_buffer(const rig_buffer_t *b, const char *what) {
  require_handle(b, what);
  if (const std::string *why = dead_reason(b)) throw_invalid(std::string(what) + " is dead: " + *why);
}

const void *allocation_of(const rig_buffer_t *b) { return b->alloc; }

const std::string *dead_reason(const rig_buffer_t *b) {
  Allocation *a = b->alloc;
  if (b->generation < a->generation.load(std::memory_order_acquire)) {
    Guard g(a->mu);
    for (size_t k = b->generation; k < a->deaths.size(); k++) {
      const Death &d = *a->deaths[k];
      if (b->offset >= d.first && b->offset + b->length <= d.end) return &d.why;
    }
  }
  if (b->borrow) return b->borrow->unborrowed.load(std::memory_order_acquire);
  return nullptr;
}

rig_access_t access_of(const rig_buffer_t *b) { return b->read_only ? RIG_ACCESS_READ : b->alloc->access; }

rig_edge_location_t advance(rig_edge_location_t loc, int64_t bytes) {
  if (loc.address)
    loc.address = static_cast<char *>(loc.address) + bytes;
  else
    loc.offset += static_cast<uint64_t>(bytes);
  return loc;
}

rig_edge_location_t location_of(const rig_buffer_t *b) {
  const Mapping *m = b->borrow ? b->borrow->mapping : nullptr;
  return advance(m ? m->loc : b->alloc->loc, b->offset);
}

void *host_address(const rig_buffer_t *b) {
  if (b->alloc->host) return static_cast<char *>(b->alloc->host) + b->offset;
  // A borrow on the host (or a memory device) of an io device's pages.
  const Mapping *m = b->borrow ? b->borrow->mapping : nullptr;
  if (m && m->io_pages && (b->device->is_host || b->device->facts.runs_on_host))
    return static_cast<char *>(m->io_pages) + b->offset;
  return nullptr;
}

rig_buffer_t *new_io_buffer(rig_device_t *d, void *region, rig_access_t access, int64_t n) {
  return new_buffer(wrap_io_region(d, region, access, n), d, 0, n);
}

rig_buffer_t *new_buffer(Allocation *a, rig_device_t *d, int64_t offset, int64_t length) {
  auto *b = new rig_buffer();
  b->alloc = a;
  b->generation = a->generation.load(std::memory_order_acquire);
  b->device = d;
  b->offset = offset;
  b->length = length;
  return b;
}

}  // namespace rig

namespace {

void release_buffer(rig_buffer_t *b) {
  if (b->mapping) release_mapping(b->alloc, b->mapping);
  delete b->unborrowed.load();
  if (b->borrow && b->borrow != b) rig_buffer_unref(b->borrow);
  unref(b->alloc);
  delete b;
}

// True iff a + b overflows or is past limit.
bool past(int64_t a, int64_t b, int64_t limit) { return a > limit || b > limit - a; }

}  // namespace

extern "C" {

rig_status_t rig_buffer_create(rig_device_t *d, int64_t n, rig_memory_t memory, rig_buffer_t **out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require_device(d);
    require(n >= 0, "a buffer's length cannot be negative");
    require(memory == RIG_MEMORY_DEVICE || memory == RIG_MEMORY_PINNED || memory == RIG_MEMORY_MAPPED,
            "unknown kind of memory");
    // An io device's memory is what its library allocates, whatever the kind.
    if (d->is_io()) memory = RIG_MEMORY_DEVICE;
    if (memory == RIG_MEMORY_PINNED && (d->is_host || d->facts.host_addresses))
      throw_invalid(d->name + " has no Pinned memory: the host addresses its memory");
    Allocation *a = n == 0 ? empty_allocation(d) : allocate(d, n, static_cast<Memory>(memory));
    *out = new_buffer(a, d, 0, n);
    return RIG_OK;
  });
}

rig_status_t rig_buffer_of_bytes(const void *s, int64_t n, rig_buffer_t **out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require(n >= 0, "the length cannot be negative");
    require(s != nullptr || n == 0, "the bytes are NULL");
    rig_device_t *h = host();
    Allocation *a = n == 0 ? empty_allocation(h) : allocate(h, n, Memory::Device);
    if (n > 0) std::memcpy(a->host, s, static_cast<size_t>(n));
    *out = new_buffer(a, h, 0, n);
    return RIG_OK;
  });
}

rig_status_t rig_buffer_of_memory(void *p, int64_t n, rig_release_fn release, void *context,
                                  rig_buffer_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require(n >= 0, "the length cannot be negative");
    require(p != nullptr || n == 0, "the memory is NULL");
    Allocation *a = wrap_caller_memory(p, n, release, context);
    rig_buffer_t *b = new_buffer(a, host(), 0, n);
    b->borrowed = true;
    *out = b;
    return RIG_OK;
  });
}

rig_status_t rig_buffer_view(rig_buffer_t *b, int64_t first, int64_t length, rig_buffer_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require_buffer(b, "the buffer");
    require(first >= 0 && length >= 0, "a view's first byte and length cannot be negative");
    require(!past(first, length, b->length), "the view's bytes do not lie inside the buffer's");
    ref(b->alloc);
    rig_buffer_t *v = new_buffer(b->alloc, b->device, b->offset + first, length);
    v->borrowed = b->borrowed;
    v->read_only = b->read_only;
    if (b->borrow) v->borrow = rig_buffer_ref(b->borrow);
    *out = v;
    return RIG_OK;
  });
}

rig_status_t rig_buffer_borrow(rig_device_t *d, rig_buffer_t *b, rig_buffer_t **out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require_device(d);
    require_buffer(b, "the buffer");
    // A borrow on a lost device returns what it held once it has stopped
    // (STOP-05), then answers that it is lost.
    if (d->is_lost()) reclaim_stopped(d);
    require_live(d);
    // A borrow is a use of b: b's own device lost loses it (LMEM-07).
    if (b->device->is_lost()) throw_lost(b->device);
    // A borrow depends on every point of the stamps (Memory after a loss).
    {
      std::vector<Dependency> unused;
      dependencies(b->alloc, true, nullptr, unused);
    }
    if (b->device == d) {
      *out = rig_buffer_ref(b);
      return RIG_OK;
    }
    Allocation *a = b->alloc;
    require_not_exclusive(b);
    if (a->owner->is_lost()) throw_lost(a->owner);
    if (a->owner == d) {
      // Back on the memory's own device: no mapping.
      ref(a);
      *out = new_buffer(a, d, b->offset, b->length);
      (*out)->read_only = b->read_only;
      return RIG_OK;
    }
    // Empty memory borrows on every device of its machine, with no mapping.
    Mapping *m = nullptr;
    // Empty memory borrows on every device of its machine but an io device.
    if (a->bytes == 0 && d->is_io() && !a->owner->is_io()) return RIG_OK;
    if (a->bytes > 0) {
      m = hold_mapping(a, d);
      if (!m) return RIG_OK;
    }
    ref(a);
    rig_buffer_t *borrow = new_buffer(a, d, b->offset, b->length);
    borrow->borrowed = true;
    borrow->read_only = b->read_only;
    borrow->mapping = m;
    borrow->borrow = borrow;
    *out = borrow;
    return RIG_OK;
  });
}

rig_buffer_t *rig_buffer_ref(rig_buffer_t *b) {
  if (!live_handle(b)) return nullptr;
  b->refs.fetch_add(1, std::memory_order_relaxed);
  return b;
}

void rig_buffer_unref(rig_buffer_t *b) {
  if (!live_handle(b) || b->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  try {
    release_buffer(b);
  } catch (...) {
    // Returning memory never fails the caller: a driver's error lost its
    // device already.
  }
}

// Properties answer for a released buffer as for NULL, but dead.
rig_device_t *rig_buffer_device(const rig_buffer_t *b) { return live_handle(b) ? b->device : nullptr; }
int64_t rig_buffer_bytes(const rig_buffer_t *b) { return live_handle(b) ? b->length : 0; }
bool rig_buffer_is_borrowed(const rig_buffer_t *b) { return live_handle(b) && b->borrowed; }
bool rig_buffer_spans(const rig_buffer_t *b) {
  return live_handle(b) && b->offset == 0 && b->length == b->alloc->bytes;
}
bool rig_buffer_fresh(const rig_buffer_t *b) { return live_handle(b) && b->alloc->zeroed; }
rig_access_t rig_buffer_access(const rig_buffer_t *b) { return live_handle(b) ? access_of(b) : RIG_ACCESS_READ; }
const char *rig_buffer_dead(const rig_buffer_t *b) {
  if (!b) return nullptr;
  if (!live_handle(b)) return "released";
  const std::string *why = dead_reason(b);
  return why ? why->c_str() : nullptr;
}
const char *rig_buffer_why(const rig_buffer_t *b) { return rig_buffer_dead(b); }
void *rig_buffer_host(const rig_buffer_t *b) { return live_handle(b) ? host_address(b) : nullptr; }

void rig_buffer_span(const rig_buffer_t *b, int64_t *offset, int64_t *allocation_bytes) {
  bool live = live_handle(b);
  if (offset) *offset = live ? b->offset : 0;
  if (allocation_bytes) *allocation_bytes = live ? b->alloc->bytes : 0;
}

rig_status_t rig_buffer_aligned(const rig_buffer_t *b, int64_t at, int64_t n, bool *out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = false;
    require_buffer(b, "the buffer");
    require(n > 0 && (n & (n - 1)) == 0, "the alignment is not a positive power of two");
    require(!b->alloc->owner->is_io(), "an io device's memory has no address for work");
    rig_edge_location_t loc = location_of(b);
    uint64_t address;
    if (loc.address) {
      address = reinterpret_cast<uintptr_t>(loc.address);
    } else {
      // Handle-only memory: its allocation starts on its owner's alignment.
      int64_t alignment = b->alloc->owner->facts.alignment;
      require(n <= alignment, "the alignment exceeds that of the device whose handle-only memory it is");
      address = static_cast<uint64_t>(b->offset);
    }
    // Arithmetic modulo n, defined for every at.
    uint64_t sum = address + static_cast<uint64_t>(at);
    *out = (sum & static_cast<uint64_t>(n - 1)) == 0;
    return RIG_OK;
  });
}

rig_status_t rig_buffer_handle(const rig_buffer_t *b, uint64_t *handle, int64_t *offset) {
  RIG_API_CALL({
    require(handle != nullptr && offset != nullptr, "handle or offset is NULL");
    *handle = 0;
    *offset = 0;
    require_buffer(b, "the buffer");
    require(!b->alloc->owner->is_host && !b->alloc->owner->is_io(),
            "the host's and an io device's memory have no driver object");
    rig_edge_location_t loc = location_of(b);
    *handle = loc.address ? reinterpret_cast<uintptr_t>(b->alloc->loc.address) : loc.handle;
    *offset = loc.address ? b->offset : static_cast<int64_t>(loc.offset);
    return RIG_OK;
  });
}

bool rig_buffer_overlaps(const rig_buffer_t *a, const rig_buffer_t *b) {
  if (!live_handle(a) || !live_handle(b) || a->alloc != b->alloc || a->length == 0 || b->length == 0) return false;
  // Words count from byte 0 of the allocation, or of the address space for
  // host memory, whose allocations start on a word.
  uintptr_t base = reinterpret_cast<uintptr_t>(a->alloc->host);
  auto first_word = [&](const rig_buffer_t *x) { return (base + x->offset) / RIG_WORD_BYTES; };
  auto last_word = [&](const rig_buffer_t *x) { return (base + x->offset + x->length - 1) / RIG_WORD_BYTES; };
  return first_word(a) <= last_word(b) && first_word(b) <= last_word(a);
}

bool rig_buffer_share_byte(const rig_buffer_t *a, const rig_buffer_t *b) {
  if (!live_handle(a) || !live_handle(b) || a->alloc != b->alloc || a->length == 0 || b->length == 0) return false;
  return a->offset < b->offset + b->length && b->offset < a->offset + a->length;
}

}  // extern "C"
