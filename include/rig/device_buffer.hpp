/* device_buffer.hpp: typed, lazily allocated device buffers, the spec's
 * Device.Buffer (tolk-device-buffer.txt), header-only C++20 over rig.hpp.
 *
 * A buffer is a base buffer, which its allocator allocates, or a view into
 * one at a byte offset, which shares its storage.  Buffers start
 * unallocated; allocate or ensure_allocated materialises the storage.
 *
 * How the OCaml notions map (bindings/python's rig.DeviceBuffer maps them
 * alike):
 *   Device.Buffer.t        rig::DeviceBuffer, a shared handle: copies refer
 *                          to the same buffer (same id; operator== is
 *                          identity), as OCaml values of a record do
 *   the GC finaliser       the last handle's destruction deallocates (a
 *                          view holds its base, so a base outlives its
 *                          views); an error there is swallowed, as a
 *                          finaliser has no caller
 *   Tolk_uop.Dtype.t       rig::Dtype (name, itemsize); rig::dtypes::float32...
 *   Buffer_spec.t          rig::BufferSpec (the kind of memory, rig_memory_t);
 *                          BufferSpec{} is Buffer_spec.default
 *   Allocator.packed       std::shared_ptr<rig::Allocator>, an interface
 *                          whose hooks are virtual functions, the optional
 *                          ones (offset, transfer) announced by
 *                          supports_offset() and supports_transfer();
 *                          rig::RigAllocator allocates rig buffers
 *   the allocator's buffer rig::buffer (a null one: no storage)
 *   Invalid_argument       rig::invalid_argument, a std::invalid_argument
 *                          whose status() is RIG_EINVAL; a failed rig call
 *                          under a hook throws rig::error as rig.hpp does
 *   bytes                  std::span<const std::byte> in, std::span<std::byte>
 *                          out, std::vector<std::byte> for as_bytes
 *   int (sizes, offsets)   int64_t; nativeint (addr) uintptr_t
 *   OCaml domains          threads: a buffer's calls are serialised by a
 *                          mutex of its root base buffer
 * Where the text leaves a case open: copyin and copyout of a view that is
 * not initialised while its base is allocated (is_allocated true, no
 * storage of its own) answer RIG_EINVAL, naming the cause.
 */
#ifndef RIG_DEVICE_BUFFER_HPP
#define RIG_DEVICE_BUFFER_HPP

#include <rig/rig.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rig {

/* The exception of the text's Invalid_argument: status() is RIG_EINVAL. */
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
  rig_status_t status() const noexcept { return RIG_EINVAL; }
};

/* An element type: its name and its bytes per element. */
struct Dtype {
  std::string_view name;
  int64_t itemsize;
  friend bool operator==(const Dtype &, const Dtype &) = default;
};

namespace dtypes {
inline constexpr Dtype bool_{"bool", 1};
inline constexpr Dtype int8{"int8", 1};
inline constexpr Dtype uint8{"uint8", 1};
inline constexpr Dtype int16{"int16", 2};
inline constexpr Dtype uint16{"uint16", 2};
inline constexpr Dtype int32{"int32", 4};
inline constexpr Dtype uint32{"uint32", 4};
inline constexpr Dtype int64{"int64", 8};
inline constexpr Dtype uint64{"uint64", 8};
inline constexpr Dtype float16{"float16", 2};
inline constexpr Dtype bfloat16{"bfloat16", 2};
inline constexpr Dtype float32{"float32", 4};
inline constexpr Dtype float64{"float64", 8};
}  // namespace dtypes

/* What kind of memory a buffer's storage is; BufferSpec{} is the default. */
struct BufferSpec {
  rig_memory_t memory = RIG_MEMORY_DEVICE;
  friend bool operator==(const BufferSpec &, const BufferSpec &) = default;
};

/* The hooks of an allocator.  alloc, free, copyin, copyout and addr are
 * required; offset and transfer are called only where supports_offset()
 * and supports_transfer() are true. */
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual buffer alloc(const std::string &device, int64_t nbytes, const BufferSpec &spec) = 0;
  virtual void free(buffer storage, int64_t nbytes, const BufferSpec &spec) = 0;
  virtual bool supports_offset() const { return false; }
  virtual buffer offset(const buffer &, int64_t, int64_t) { throw invalid_argument("the allocator makes no offset views"); }
  virtual bool supports_transfer() const { return false; }
  virtual void transfer(const buffer &, const buffer &, int64_t) { throw invalid_argument("the allocator has no transfer"); }
  virtual void copyin(const buffer &storage, std::span<const std::byte> src) = 0;
  virtual void copyout(std::span<std::byte> dst, const buffer &storage) = 0;
  virtual uintptr_t addr(const buffer &storage) = 0;
};

/* Storage in rig buffers: alloc is rig_buffer_create on the device the name
 * opens, offset a view, transfer rig_buffer_copy, copyin and copyout blits,
 * addr the host address where the host has one, else the driver's
 * (rig_buffer_handle: a CUDA device pointer). */
class RigAllocator : public Allocator {
 public:
  buffer alloc(const std::string &device, int64_t nbytes, const BufferSpec &spec) override {
    return buffer::create(device::open(device.c_str()), nbytes, spec.memory);
  }
  /* The storage's reference goes with the argument. */
  void free(buffer, int64_t, const BufferSpec &) override {}
  bool supports_offset() const override { return true; }
  buffer offset(const buffer &base, int64_t nbytes, int64_t offset) override { return base.view(offset, nbytes); }
  bool supports_transfer() const override { return true; }
  void transfer(const buffer &dst, const buffer &src, int64_t) override { copy(src, dst); }
  void copyin(const buffer &storage, std::span<const std::byte> src) override { storage.blit_from(src); }
  void copyout(std::span<std::byte> dst, const buffer &storage) override { storage.blit_to(dst); }
  uintptr_t addr(const buffer &storage) override {
    if (void *host = storage.host()) return reinterpret_cast<uintptr_t>(host);
    if (storage.bytes() == 0) return 0;
    buffer_handle h = storage.handle();
    return static_cast<uintptr_t>(h.handle) + static_cast<uintptr_t>(h.offset);
  }
};

class DeviceBuffer {
 public:
  /* create ~device ~size ~dtype ?spec allocator: an unallocated base
   * buffer (TOLK-01..04). */
  static DeviceBuffer create(std::string device, int64_t size, Dtype dtype, std::shared_ptr<Allocator> allocator,
                             BufferSpec spec = {}) {
    if (!allocator) throw invalid_argument("create: the allocator is null");
    if (dtype.itemsize <= 0) throw invalid_argument("create: a dtype's itemsize is positive");
    if (size < 0 || size > std::numeric_limits<int64_t>::max() / dtype.itemsize)
      throw invalid_argument("create: " + std::to_string(size) + " elements of " + std::string(dtype.name) +
                             " do not make a size in bytes");
    auto s = std::make_shared<State>(std::move(device), size, dtype, spec, std::move(allocator), nullptr, 0);
    return DeviceBuffer(std::move(s));
  }

  /* view b ~size ~dtype ~offset: size elements of dtype from byte offset of
   * this buffer, in its root base buffer (TOLK-07..12). */
  DeviceBuffer view(int64_t size, Dtype dtype, int64_t offset) const {
    if (offset < 0) throw invalid_argument("view: the offset " + std::to_string(offset) + " is negative");
    if (offset >= nbytes())
      throw invalid_argument("view: the offset " + std::to_string(offset) + " is not below the buffer's " +
                             std::to_string(nbytes()) + " bytes");
    const std::shared_ptr<State> &root = root_();
    int64_t start = s_->offset + offset;
    if (dtype.itemsize <= 0 || size < 0 || size > (root->nbytes() - start) / dtype.itemsize)
      throw invalid_argument("view: " + std::to_string(size) + " elements of " + std::string(dtype.name) +
                             " at byte " + std::to_string(start) + " extend past the base buffer's " +
                             std::to_string(root->nbytes()) + " bytes");
    return DeviceBuffer(std::make_shared<State>(root->device, size, dtype, root->spec, root->allocator, root, start));
  }

  /* Identity and metadata. */
  uint64_t id() const noexcept { return s_->id; }
  uint64_t base_id() const noexcept { return root_()->id; }
  const std::string &device() const noexcept { return s_->device; }
  int64_t size() const noexcept { return s_->size; }
  Dtype dtype() const noexcept { return s_->dtype; }
  const BufferSpec &spec() const noexcept { return s_->spec; }
  int64_t nbytes() const noexcept { return s_->nbytes(); }
  DeviceBuffer base() const { return DeviceBuffer(root_()); }
  int64_t offset() const noexcept { return s_->offset; }
  const std::shared_ptr<Allocator> &allocator() const noexcept { return root_()->allocator; }

  /* Allocation (TOLK-17..27). */
  void allocate() const {
    std::scoped_lock lock(root_()->mutex);
    s_->allocate();
  }
  void ensure_allocated() const {
    std::scoped_lock lock(root_()->mutex);
    if (!s_->storage) s_->allocate();
  }
  bool is_allocated() const {
    std::scoped_lock lock(root_()->mutex);
    return static_cast<bool>(root_()->storage);
  }
  bool is_initialized() const {
    std::scoped_lock lock(root_()->mutex);
    return static_cast<bool>(s_->storage);
  }
  void deallocate() const {
    std::scoped_lock lock(root_()->mutex);
    s_->deallocate();
  }
  bool supports_offset() const { return allocator()->supports_offset(); }
  /* supports_transfer dst src, this buffer as dst (TOLK-29, TOLK-30). */
  bool supports_transfer(const DeviceBuffer &src) const {
    return allocator()->supports_transfer() && prefix(device()) == prefix(src.device());
  }

  /* The UOp reference count: the base's, used for nothing here (TOLK-06). */
  int64_t uop_refcount() const noexcept { return root_()->refcount.load(); }
  const DeviceBuffer &add_ref(int64_t cnt) const noexcept {
    root_()->refcount.fetch_add(cnt);
    return *this;
  }

  /* Data transfer (TOLK-34..50). */
  void copyin(std::span<const std::byte> src) const {
    std::scoped_lock lock(root_()->mutex);
    if (static_cast<int64_t>(src.size()) != nbytes())
      throw invalid_argument("copyin of " + std::to_string(src.size()) + " bytes into a buffer of " +
                             std::to_string(nbytes()));
    allocator()->copyin(s_->own_storage("copyin"), src);
  }
  void copyout(std::span<std::byte> dst) const {
    std::scoped_lock lock(root_()->mutex);
    if (static_cast<int64_t>(dst.size()) != nbytes())
      throw invalid_argument("copyout of a buffer of " + std::to_string(nbytes()) + " bytes into " +
                             std::to_string(dst.size()));
    allocator()->copyout(dst, s_->own_storage("copyout"));
  }
  std::vector<std::byte> as_bytes() const {
    std::vector<std::byte> out(static_cast<size_t>(nbytes()));
    copyout(out);
    return out;
  }
  static bool transfer(const DeviceBuffer &dst, const DeviceBuffer &src) {
    same_shape(dst, src, "transfer");
    if (!dst.supports_transfer(src)) return false;
    std::scoped_lock lock(dst.root_()->mutex, src.root_()->mutex);
    if (!dst.s_->storage) dst.s_->allocate();
    if (!src.s_->storage) src.s_->allocate();
    dst.allocator()->transfer(dst.s_->storage, src.s_->storage, dst.nbytes());
    return true;
  }
  static void copy_between(const DeviceBuffer &dst, const DeviceBuffer &src) {
    same_shape(dst, src, "copy_between");
    dst.ensure_allocated();
    src.ensure_allocated();
    dst.copyin(src.as_bytes());
  }
  uintptr_t addr() const {
    std::scoped_lock lock(root_()->mutex);
    if (!s_->storage) s_->allocate();
    return allocator()->addr(s_->storage);
  }

  /* The storage (a null rig::buffer while not initialised), for handing
   * the memory to rig calls. */
  buffer storage() const {
    std::scoped_lock lock(root_()->mutex);
    return s_->storage;
  }

  friend bool operator==(const DeviceBuffer &a, const DeviceBuffer &b) noexcept { return a.s_ == b.s_; }

 private:
  struct State {
    State(std::string d, int64_t n, Dtype t, BufferSpec sp, std::shared_ptr<Allocator> a, std::shared_ptr<State> b,
          int64_t off)
        : id(next_id()), device(std::move(d)), size(n), dtype(t), spec(sp), allocator(std::move(a)),
          base(std::move(b)), offset(off) {}
    State(const State &) = delete;
    State &operator=(const State &) = delete;
    /* The finaliser: a view holds its base, so a base has no allocated
     * view left by now. */
    ~State() {
      try {
        std::scoped_lock lock(root().mutex);
        deallocate();
      } catch (...) {
      }
    }

    static uint64_t next_id() {
      static std::atomic<uint64_t> ids{0};
      return ++ids;
    }
    int64_t nbytes() const noexcept { return size * dtype.itemsize; }
    State &root() noexcept { return base ? *base : *this; }

    /* Callers hold the root's mutex. */
    void allocate() {
      if (storage) throw invalid_argument("allocate: buffer " + std::to_string(id) + " is already allocated");
      if (!base) {
        storage = allocator->alloc(device, nbytes(), spec);
        return;
      }
      if (!allocator->supports_offset())
        throw invalid_argument("allocate: the allocator of view " + std::to_string(id) + " makes no offset views");
      if (!base->storage) base->allocate();
      storage = allocator->offset(base->storage, nbytes(), offset);
      base->allocated_views++;
    }
    void deallocate() {
      if (!storage) return;
      if (!base) {
        if (allocated_views > 0)
          throw invalid_argument("deallocate: buffer " + std::to_string(id) + " still has " +
                                 std::to_string(allocated_views) + " allocated views");
        allocator->free(std::exchange(storage, buffer()), nbytes(), spec);
        return;
      }
      storage = buffer();
      base->allocated_views--;
    }
    const buffer &own_storage(const char *what) {
      if (!root().storage)
        throw invalid_argument(std::string(what) + ": buffer " + std::to_string(id) + " is not allocated");
      if (!storage)
        throw invalid_argument(std::string(what) + ": view " + std::to_string(id) +
                               " is not initialised (its base is): allocate it");
      return storage;
    }

    const uint64_t id;
    const std::string device;
    const int64_t size;
    const Dtype dtype;
    const BufferSpec spec;
    const std::shared_ptr<Allocator> allocator;
    const std::shared_ptr<State> base; /* null for a base buffer */
    const int64_t offset;
    buffer storage;
    /* A base buffer's alone. */
    std::recursive_mutex mutex;
    int64_t allocated_views = 0;
    std::atomic<int64_t> refcount{0};
  };

  explicit DeviceBuffer(std::shared_ptr<State> s) noexcept : s_(std::move(s)) {}

  const std::shared_ptr<State> &root_() const noexcept { return s_->base ? s_->base : s_; }

  static std::string_view prefix(std::string_view device) noexcept { return device.substr(0, device.find(':')); }

  static void same_shape(const DeviceBuffer &dst, const DeviceBuffer &src, const char *what) {
    if (dst.size() != src.size())
      throw invalid_argument(std::string(what) + " between buffers of " + std::to_string(dst.size()) + " and " +
                             std::to_string(src.size()) + " elements");
    if (dst.dtype() != src.dtype())
      throw invalid_argument(std::string(what) + " between buffers of " + std::string(dst.dtype().name) + " and " +
                             std::string(src.dtype().name));
  }

  std::shared_ptr<State> s_;
};

}  // namespace rig

#endif /* RIG_DEVICE_BUFFER_HPP */
