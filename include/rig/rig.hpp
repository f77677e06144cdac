/* rig.hpp: a header-only C++20 wrapper over rig.h, disk.h and service.h.
 *
 * Each call does what the rig.h function it names does, with the same rules;
 * read rig.h for them.  What the wrapper adds:
 *  - a failed call throws rig::error, which keeps the status, the message of
 *    rig_last_error() and, where rig.h sets them, the device, the bytes and
 *    the code of the failure;
 *  - rig::buffer owns one reference to a buffer (copy = rig_buffer_ref,
 *    destruction = rig_buffer_unref);
 *  - host access takes any callable over std::span, of bytes or of a typed
 *    element (read_as<float>); an exception it throws never crosses the C
 *    boundary: rig sees a non-zero return (RIG_ECALLBACK) and the wrapper
 *    rethrows the exception once rig has returned;
 *  - rig::exported owns an exported array (rig_buffer_export), seen as a
 *    typed span; rig::machine is a connection to rigd (service.h);
 *    rig::disk opens files as buffers (disk.h).
 * Devices are never freed (rig.h), so rig::device is a plain, non-owning
 * handle.
 */
#ifndef RIG_RIG_HPP
#define RIG_RIG_HPP

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "rig.hpp needs C++20 (std::span for host access and exported arrays): compile with -std=c++20, or link the CMake target rig::rig, which asks for it"
#endif

#include <rig/disk.h>
#include <rig/rig.h>
#include <rig/service.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace rig {

class device;

/* A failed rig call: status() is its rig_status_t, what() its message. */
class error : public std::runtime_error {
 public:
  /* Captures the thread's error state (rig_last_error and the rest); call it
   * right after the failed call, before any other call into rig. */
  explicit error(rig_status_t status)
      : std::runtime_error(message_of(status)),
        status_(status),
        device_(rig_error_device()),
        bytes_(rig_error_bytes()),
        code_(rig_error_code()) {}

  rig_status_t status() const noexcept { return status_; }
  /* "RIG_EINVAL", ... (rig_status_name). */
  const char *status_name() const noexcept { return rig_status_name(status_); }
  /* rig_error_device: the device of a RIG_ELOST or RIG_ENOMEM, else null. */
  rig_device_t *device() const noexcept { return device_; }
  /* rig_error_bytes: the bytes a RIG_ENOMEM could not allocate, else 0. */
  int64_t bytes() const noexcept { return bytes_; }
  /* rig_error_code: the callback's return or the errno of a RIG_EIO. */
  int code() const noexcept { return code_; }

 private:
  static std::string message_of(rig_status_t status) {
    const char *message = rig_last_error();
    return message && *message ? message : rig_status_name(status);
  }

  rig_status_t status_;
  rig_device_t *device_;
  int64_t bytes_;
  int code_;
};

/* Throws rig::error unless status is RIG_OK. */
inline void check(rig_status_t status) {
  if (status != RIG_OK) throw error(status);
}

/* ------------------------------------------------------------------------ */

/* A device (rig_device_t *).  Never owns: rig keeps every device record for
 * the life of the process.  A default-constructed device is null. */
class device {
 public:
  device() noexcept = default;
  explicit device(rig_device_t *d) noexcept : d_(d) {}

  /* rig_open; config is rig_open_options_t.config (may be null). */
  static device open(const char *name, const char *config = nullptr) {
    rig_open_options_t opts{sizeof(rig_open_options_t), config};
    rig_device_t *d = nullptr;
    check(rig_open(name, &opts, &d));
    return device(d);
  }
  /* rig_host. */
  static device host() noexcept { return device(rig_host()); }

  rig_device_t *get() const noexcept { return d_; }
  explicit operator bool() const noexcept { return d_ != nullptr; }

  /* Properties (rig.h: they take no lock and answer for a lost device). */
  const char *name() const noexcept { return rig_device_name(d_); }
  const char *arch() const noexcept { return rig_device_arch(d_); }
  const char *instruction_set() const noexcept { return rig_device_instruction_set(d_); }
  /* Null where the device has no PCI function. */
  const char *bus() const noexcept { return rig_device_bus(d_); }
  bool runs_on_host() const noexcept { return rig_device_runs_on_host(d_); }
  int64_t alignment() const noexcept { return rig_device_alignment(d_); }
  int64_t cache_bytes() const noexcept { return rig_device_cache_bytes(d_); }
  const void *capability(const char *key) const noexcept {
    return rig_device_capability(d_, key);
  }
  bool reaches(device other) const noexcept { return rig_reaches(d_, other.d_); }

  /* Timeline. */
  uint64_t submitted() const noexcept { return rig_submitted(d_); }
  uint64_t signaled() const {
    uint64_t value = 0;
    check(rig_signaled(d_, &value));
    return value;
  }
  /* The reason the device is lost, or null while it is live. */
  const char *lost() const noexcept { return rig_lost(d_); }
  /* rig_close: ends the device for every opener of its name. */
  void close() const { check(rig_close(d_)); }

  /* Budget. */
  int64_t budget() const noexcept { return rig_budget(d_); }
  int64_t allocated() const noexcept { return rig_allocated(d_); }
  void set_budget(int64_t n) const { check(rig_set_budget(d_, n)); }
  void free_cache() const { check(rig_free_cache(d_)); }

  /* rig_device_equal: a reopened name is another device. */
  friend bool operator==(device a, device b) noexcept {
    return rig_device_equal(a.d_, b.d_);
  }

 private:
  rig_device_t *d_ = nullptr;
};

/* ------------------------------------------------------------------------ */

/* A point (rig_point_t): plain data, copied freely.  Laid out as a
 * rig_point_t, so a span of points passes to rig as an array of them. */
class point {
 public:
  point() noexcept = default;
  explicit point(rig_point_t p) noexcept : p_(p) {}
  /* rig_point_make; value at most RIG_POINT_VALUE_MAX. */
  point(rig::device d, uint64_t value) noexcept : p_(rig_point_make(d.get(), value)) {}

  rig_point_t get() const noexcept { return p_; }
  /* Null once a later device took the point's slot (rig_point_device). */
  rig::device device() const noexcept { return rig::device(rig_point_device(p_)); }
  uint64_t value() const noexcept { return rig_point_value(p_); }

  void wait() const { check(rig_point_wait(p_)); }
  bool reached() const {
    bool out = false;
    check(rig_point_reached(p_, &out));
    return out;
  }

 private:
  rig_point_t p_{};
};

static_assert(std::is_standard_layout_v<point> && sizeof(point) == sizeof(rig_point_t),
              "rig::point must be laid out as rig_point_t");

namespace detail {

inline const rig_point_t *points(std::span<const point> waits) noexcept {
  return waits.empty() ? nullptr : reinterpret_cast<const rig_point_t *>(waits.data());
}

/* The context of one host access: the caller's callable and the exception
 * it threw, if any, kept until rig has returned.  Elem is the span's
 * element: rig checked that the bytes are whole, aligned Elems (elem_size). */
template <class F, class Elem>
struct access_call {
  F &f;
  std::exception_ptr thrown;

  static int trampoline(void *bytes, int64_t n, void *context) noexcept {
    auto *call = static_cast<access_call *>(context);
    try {
      call->f(std::span<Elem>(static_cast<Elem *>(bytes), static_cast<size_t>(n) / sizeof(Elem)));
      return 0;
    } catch (...) {
      call->thrown = std::current_exception();
      return 1;
    }
  }
};

/* Runs access (rig_buffer_read or rig_buffer_write) with f over the bytes,
 * then rethrows what f threw, else throws on a failed status. */
template <class Elem, class F, class Access>
void host_access(Access access, rig_buffer_t *b, int64_t elem_size, F &f) {
  access_call<F, Elem> call{f, nullptr};
  rig_status_t status = access(b, elem_size, &access_call<F, Elem>::trampoline, &call);
  if (call.thrown) std::rethrow_exception(call.thrown);
  check(status);
}

}  // namespace detail

/* ------------------------------------------------------------------------ */

/* Where a buffer's bytes lie in its allocation (rig_buffer_span). */
struct buffer_span {
  int64_t offset;
  int64_t allocation_bytes;
};

/* The driver's object for a buffer's memory (rig_buffer_handle). */
struct buffer_handle {
  uint64_t handle;
  int64_t offset;
};

/* Owns an exported array (rig_export_t *): the buffer's bytes for good,
 * kept alive until destruction (rig_export_unref).  The caller orders
 * access through it. */
class exported {
 public:
  exported() noexcept = default;
  static exported adopt(rig_export_t *e) noexcept { return exported(e); }
  exported(const exported &) = delete;
  exported &operator=(const exported &) = delete;
  exported(exported &&other) noexcept : e_(std::exchange(other.e_, nullptr)) {}
  exported &operator=(exported &&other) noexcept {
    std::swap(e_, other.e_);
    return *this;
  }
  ~exported() { rig_export_unref(e_); }

  rig_export_t *get() const noexcept { return e_; }
  /* The bytes as Ts: the export's length must be whole Ts (rig_buffer_export
   * with elem_size sizeof(T) checked it). */
  template <class T = std::byte>
  std::span<T> as() const noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "an export holds plain data");
    int64_t n = 0;
    void *bytes = rig_export_bytes(e_, &n);
    return std::span<T>(static_cast<T *>(bytes), static_cast<size_t>(n) / sizeof(T));
  }

 private:
  explicit exported(rig_export_t *e) noexcept : e_(e) {}
  rig_export_t *e_ = nullptr;
};

/* Owns one reference to a buffer (rig_buffer_t *).  Copying adds a
 * reference, destruction releases it, a moved-from buffer is null. */
class buffer {
 public:
  buffer() noexcept = default;
  /* Takes over the caller's reference to b (b may be null). */
  static buffer adopt(rig_buffer_t *b) noexcept { return buffer(b); }

  buffer(const buffer &other) noexcept
      : b_(other.b_ ? rig_buffer_ref(other.b_) : nullptr) {}
  buffer(buffer &&other) noexcept : b_(std::exchange(other.b_, nullptr)) {}
  buffer &operator=(buffer other) noexcept {
    std::swap(b_, other.b_);
    return *this;
  }
  ~buffer() { rig_buffer_unref(b_); }

  rig_buffer_t *get() const noexcept { return b_; }
  /* Gives the reference up to the caller, leaving this buffer null. */
  rig_buffer_t *release() noexcept { return std::exchange(b_, nullptr); }
  explicit operator bool() const noexcept { return b_ != nullptr; }

  /* rig_buffer_create. */
  static buffer create(rig::device d, int64_t n, rig_memory_t memory = RIG_MEMORY_DEVICE) {
    rig_buffer_t *b = nullptr;
    check(rig_buffer_create(d.get(), n, memory, &b));
    return buffer(b);
  }
  /* rig_buffer_of_bytes: a host buffer holding a copy of bytes. */
  static buffer of_bytes(std::span<const std::byte> bytes) {
    rig_buffer_t *b = nullptr;
    check(rig_buffer_of_bytes(bytes.data(), static_cast<int64_t>(bytes.size()), &b));
    return buffer(b);
  }

  /* rig_buffer_view. */
  buffer view(int64_t first, int64_t length) const {
    rig_buffer_t *v = nullptr;
    check(rig_buffer_view(b_, first, length, &v));
    return buffer(v);
  }
  /* rig_buffer_borrow: nullopt where d cannot map the memory. */
  std::optional<buffer> borrow(rig::device d) const {
    rig_buffer_t *out = nullptr;
    check(rig_buffer_borrow(d.get(), b_, &out));
    if (!out) return std::nullopt;
    return buffer(out);
  }

  /* Properties (rig.h: they answer for a dead buffer too). */
  rig::device device() const noexcept { return rig::device(rig_buffer_device(b_)); }
  int64_t bytes() const noexcept { return rig_buffer_bytes(b_); }
  bool is_borrowed() const noexcept { return rig_buffer_is_borrowed(b_); }
  bool spans() const noexcept { return rig_buffer_spans(b_); }
  rig_access_t access() const noexcept { return rig_buffer_access(b_); }
  /* The reason the buffer is dead, or null while it is live. */
  const char *dead() const noexcept { return rig_buffer_dead(b_); }
  /* The host address of the first byte, or null where the host has none. */
  void *host() const noexcept { return rig_buffer_host(b_); }
  buffer_span span() const noexcept {
    buffer_span s{0, 0};
    rig_buffer_span(b_, &s.offset, &s.allocation_bytes);
    return s;
  }
  bool aligned(int64_t at, int64_t n) const {
    bool out = false;
    check(rig_buffer_aligned(b_, at, n, &out));
    return out;
  }
  buffer_handle handle() const {
    buffer_handle h{0, 0};
    check(rig_buffer_handle(b_, &h.handle, &h.offset));
    return h;
  }
  bool overlaps(const buffer &other) const noexcept {
    return rig_buffer_overlaps(b_, other.b_);
  }
  bool share_byte(const buffer &other) const noexcept {
    return rig_buffer_share_byte(b_, other.b_);
  }

  /* rig_buffer_read: calls f(std::span<const std::byte>) on the bytes in
   * place.  An exception f throws propagates once rig has returned. */
  template <class F>
  void read(F &&f, int64_t elem_size = 1) const {
    detail::host_access<const std::byte>(rig_buffer_read, b_, elem_size, f);
  }
  /* rig_buffer_write: calls f(std::span<std::byte>) on the bytes in place. */
  template <class F>
  void write(F &&f, int64_t elem_size = 1) const {
    detail::host_access<std::byte>(rig_buffer_write, b_, elem_size, f);
  }

  /* Typed host access: f(std::span<const T>) or f(std::span<T>) over the
   * bytes as Ts (elem_size sizeof(T): rig answers RIG_EINVAL unless they
   * are whole, aligned Ts). */
  template <class T, class F>
  void read_as(F &&f) const {
    static_assert(std::is_trivially_copyable_v<T>, "host access sees plain data");
    detail::host_access<const T>(rig_buffer_read, b_, sizeof(T), f);
  }
  template <class T, class F>
  void write_as(F &&f) const {
    static_assert(std::is_trivially_copyable_v<T>, "host access sees plain data");
    detail::host_access<T>(rig_buffer_write, b_, sizeof(T), f);
  }

  /* rig_buffer_export: the bytes for good, as whole elements of elem_size
   * bytes. */
  exported export_array(int64_t elem_size = 1) const {
    rig_export_t *e = nullptr;
    check(rig_buffer_export(b_, elem_size, &e));
    return exported::adopt(e);
  }

  /* Claims (rig.h "Claims and early return").  claim_begin answers whether
   * the hold is exclusive. */
  bool claim_begin() const {
    bool exclusive = false;
    check(rig_claim_begin(b_, &exclusive));
    return exclusive;
  }
  void claim_end() const { check(rig_claim_end(b_)); }
  buffer claim_consume(const char *why) const {
    rig_buffer_t *out = nullptr;
    check(rig_claim_consume(b_, why, &out));
    return buffer(out);
  }
  void claim_hold() const { check(rig_claim_hold(b_)); }
  void claim_unhold() const { check(rig_claim_unhold(b_)); }
  void claim_share() const { check(rig_claim_share(b_)); }
  /* rig_buffer_free / rig_buffer_unborrow: whether the memory (the borrow)
   * ended; why may be null. */
  bool free_early(const char *why = nullptr) const {
    bool freed = false;
    check(rig_buffer_free(b_, why, &freed));
    return freed;
  }
  bool unborrow(const char *why = nullptr) const {
    bool ended = false;
    check(rig_buffer_unborrow(b_, why, &ended));
    return ended;
  }

  /* The service (service.h): share as a token or as a descriptor (the
   * caller's to close), import on a proxy d of the same served device. */
  uint64_t share() const {
    uint64_t token = 0;
    check(rig_service_share(b_, &token));
    return token;
  }
  int share_fd() const {
    int fd = -1;
    check(rig_service_share_fd(b_, &fd));
    return fd;
  }
  static buffer import(rig::device d, uint64_t token) {
    rig_buffer_t *b = nullptr;
    check(rig_service_import(d.get(), token, &b));
    return buffer(b);
  }
  static buffer import_fd(rig::device d, int fd) {
    rig_buffer_t *b = nullptr;
    check(rig_service_import_fd(d.get(), fd, &b));
    return buffer(b);
  }

  /* rig_buffer_wait / rig_buffer_reached. */
  void wait(rig_access_t access = RIG_ACCESS_READ_WRITE) const {
    check(rig_buffer_wait(b_, access));
  }
  bool reached(rig_access_t access = RIG_ACCESS_READ_WRITE) const {
    bool out = false;
    check(rig_buffer_reached(b_, access, &out));
    return out;
  }

  /* rig_buffer_submit_fill / rig_buffer_fill. */
  point submit_fill(uint8_t c, std::span<const point> waits = {}) const {
    rig_point_t out{};
    check(rig_buffer_submit_fill(b_, c, detail::points(waits), waits.size(), &out));
    return point(out);
  }
  void fill(uint8_t c) const { check(rig_buffer_fill(b_, c)); }

  /* rig_buffer_blit_from_bytes: all of s into this buffer from byte first. */
  void blit_from(std::span<const std::byte> s, int64_t first = 0) const {
    auto n = static_cast<int64_t>(s.size());
    check(rig_buffer_blit_from_bytes(s.data(), n, 0, b_, first, n));
  }
  /* rig_buffer_blit_to_bytes: s.size() bytes of this buffer from byte first
   * into s. */
  void blit_to(std::span<std::byte> s, int64_t first = 0) const {
    auto n = static_cast<int64_t>(s.size());
    check(rig_buffer_blit_to_bytes(b_, first, s.data(), n, 0, n));
  }

 private:
  explicit buffer(rig_buffer_t *b) noexcept : b_(b) {}

  rig_buffer_t *b_ = nullptr;
};

/* A connection to a rigd (rig_machine_t *).  Never owns: machines live for
 * the process (service.h). */
class machine {
 public:
  machine() noexcept = default;
  explicit machine(rig_machine_t *m) noexcept : m_(m) {}
  /* rig_service_connect; socket null for the default lookup. */
  static machine connect(const char *socket = nullptr) {
    rig_service_options_t opts{sizeof(rig_service_options_t), socket};
    rig_machine_t *m = nullptr;
    check(rig_service_connect(&opts, &m));
    return machine(m);
  }
  rig_machine_t *get() const noexcept { return m_; }
  const char *name() const noexcept { return rig_machine_name(m_); }
  /* Why the machine is lost, or null while it is connected. */
  const char *lost() const noexcept { return rig_machine_lost(m_); }
  /* rig_machine_open: the served device name as NAME@MACHINE. */
  rig::device open(const char *name, const char *config = nullptr) const {
    rig_open_options_t opts{sizeof(rig_open_options_t), config};
    rig_device_t *d = nullptr;
    check(rig_machine_open(m_, name, &opts, &d));
    return rig::device(d);
  }

 private:
  rig_machine_t *m_ = nullptr;
};

/* Files as buffers of the io device DISK (disk.h). */
namespace disk {

/* rig_disk_device. */
inline rig::device device() {
  rig_device_t *d = nullptr;
  check(rig_disk_device(&d));
  return rig::device(d);
}
/* rig_disk_open: length bytes of the file from offset (-1: to its end). */
inline buffer open(const char *path, rig_disk_mode_t mode = RIG_DISK_READ, int64_t offset = 0, int64_t length = -1) {
  rig_buffer_t *b = nullptr;
  check(rig_disk_open(path, mode, offset, length, &b));
  return buffer::adopt(b);
}

}  // namespace disk

/* rig_row: one row of n bytes. */
inline rig_box_t row(int64_t src_offset, int64_t dst_offset, int64_t n) noexcept {
  return rig_row(src_offset, dst_offset, n);
}

/* rig_buffer_submit_copy: each box from src into dst after waits. */
inline point submit_copy(const buffer &src, const buffer &dst,
                         std::span<const rig_box_t> boxes,
                         std::span<const point> waits = {}) {
  rig_point_t out{};
  check(rig_buffer_submit_copy(src.get(), dst.get(), boxes.data(), boxes.size(),
                               detail::points(waits), waits.size(), &out));
  return point(out);
}

/* rig_buffer_copy: all of src into dst (equal lengths), waited for. */
inline void copy(const buffer &src, const buffer &dst) {
  check(rig_buffer_copy(src.get(), dst.get()));
}

/* ------------------------------------------------------------------------ */
/* Running work                                                              */

namespace detail {

/* Owns one reference to a T (copy = ref, destruction = unref). */
template <class T, T *(*Ref)(T *), void (*Unref)(T *)>
class owned {
 public:
  owned() noexcept = default;
  owned(const owned &other) noexcept : p_(other.p_ ? Ref(other.p_) : nullptr) {}
  owned(owned &&other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  owned &operator=(owned other) noexcept {
    std::swap(p_, other.p_);
    return *this;
  }
  ~owned() { Unref(p_); }
  T *get() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 protected:
  explicit owned(T *p) noexcept : p_(p) {}

 private:
  T *p_ = nullptr;
};

}  // namespace detail

/* Code loaded on a device (rig_image_t *). */
class image : public detail::owned<rig_image_t, rig_image_ref, rig_image_unref> {
 public:
  image() noexcept = default;
  /* rig_image_load. */
  static image load(rig::device d, std::span<const std::byte> bytes) {
    rig_image_t *i = nullptr;
    check(rig_image_load(d.get(), bytes.data(), static_cast<int64_t>(bytes.size()), &i));
    return image(i);
  }
  /* rig_image_resolve: null where the image has no such function. */
  rig_function_t *resolve(const char *name) const {
    rig_function_t *f = nullptr;
    check(rig_image_resolve(get(), name, &f));
    return f;
  }
  rig::device device() const noexcept { return rig::device(rig_image_device(get())); }

 private:
  explicit image(rig_image_t *i) noexcept : owned(i) {}
};

class submission;

/* A run of a submission (rig_run_t *): the submission owns it; submit frees
 * it.  Each setter throws rig::error where rig.h answers an error. */
class run {
 public:
  explicit run(rig_run_t *r) noexcept : r_(r) {}
  rig_run_t *get() const noexcept { return r_; }
  run &groups(int64_t k, int64_t x, int64_t y = 1, int64_t z = 1) {
    check(rig_run_groups(r_, k, x, y, z));
    return *this;
  }
  run &threads(int64_t k, int64_t x, int64_t y = 1, int64_t z = 1) {
    check(rig_run_threads(r_, k, x, y, z));
    return *this;
  }
  run &shared(int64_t k, int64_t bytes) {
    check(rig_run_shared(r_, k, bytes));
    return *this;
  }
  run &int32(int64_t k, int64_t at, int32_t v) {
    check(rig_run_int32(r_, k, at, v));
    return *this;
  }
  run &int64(int64_t k, int64_t at, int64_t v) {
    check(rig_run_int64(r_, k, at, v));
    return *this;
  }
  run &float32(int64_t k, int64_t at, float v) {
    check(rig_run_float32(r_, k, at, v));
    return *this;
  }
  run &float64(int64_t k, int64_t at, double v) {
    check(rig_run_float64(r_, k, at, v));
    return *this;
  }
  run &fill(int64_t k, uint8_t value) {
    check(rig_run_fill(r_, k, value));
    return *this;
  }
  /* rig_submit with buffers as the slots, after waits. */
  point submit(std::span<rig_buffer_t *const> buffers, std::span<const point> waits = {}) {
    rig_point_t out{};
    check(rig_submit(r_, buffers.data(), buffers.size(), detail::points(waits), waits.size(), &out));
    return point(out);
  }

 private:
  rig_run_t *r_;
};

/* A prepared submission (rig_submission_t *). */
class submission : public detail::owned<rig_submission_t, rig_submission_ref, rig_submission_unref> {
 public:
  submission() noexcept = default;
  /* rig_submission_make. */
  static submission make(rig::device d, std::span<const rig_part_t> parts,
                         const rig_submission_options_t *opts = nullptr) {
    rig_submission_t *s = nullptr;
    check(rig_submission_make(d.get(), parts.data(), parts.size(), opts, &s));
    return submission(s);
  }
  /* rig_submission_take. */
  rig::run take() const {
    rig_run_t *r = nullptr;
    check(rig_submission_take(get(), &r));
    return rig::run(r);
  }
  int64_t block(size_t part) const noexcept { return rig_submission_block(get(), part); }
  size_t slots() const noexcept { return rig_submission_slots(get()); }

 private:
  explicit submission(rig_submission_t *s) noexcept : owned(s) {}
};

}  // namespace rig

#endif /* RIG_RIG_HPP */
