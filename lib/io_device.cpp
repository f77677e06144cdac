// io devices: memory that the host reads and writes through a library's
// calls (edge.h, rig_io_ops_t).  An io device runs no work: its timeline
// never moves, and copies from or into its memory run as its library's
// reads and writes (copy.cpp).
#include "buffer.hpp"
#include "registry.hpp"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>

using namespace rig;

namespace rig {
namespace {

// The device side of an io library: memory through its functions.
class IoDevice final : public DriverDevice {
 public:
  IoDevice(const rig_io_ops_t *ops, void *library, uint64_t start) : ops_(ops), library_(library), word_(start) {
    facts_.arch = "";
    facts_.alignment = 1;
    facts_.budget = ops->budget;
    facts_.word = &word_;
  }
  const Facts &facts() const override { return facts_; }
  Region alloc(Memory, int64_t n) override {
    void *region = nullptr;
    int r = ops_->alloc(library_, n, &region);
    if (r == -EINVAL) throw_invalid("the io library refused an allocation of " + std::to_string(n) + " bytes");
    return r < 0 ? nullptr : region;
  }
  void free(Region r) override { ops_->free(library_, r); }
  rig_edge_location_t locate(Region) const override { return rig_edge_location_t{nullptr, 0, 0}; }
  void submit(const rig_edge_work_t &) override { throw Fault("an io device runs no work"); }
  void sleep(uint64_t, int64_t) override {}
  // An io device ends immediately: nothing of it runs.
  void stop(const std::optional<std::string> &, uint64_t last) override { word_.store(last); }

 private:
  const rig_io_ops_t *ops_;
  void *library_;
  Facts facts_;
  std::atomic<uint64_t> word_;
};

// The identity of an io library among drivers: one per table of functions
// (io_driver_of).
class IoDriver final : public Driver {
 public:
  const char *prefix() const override { return ""; }
  std::unique_ptr<DriverDevice> open(const std::string &, const std::string &, uint64_t) override {
    throw std::runtime_error("an io device opens through rig_open_io");
  }
};

Driver *io_driver_of(const rig_io_ops_t *ops) {
  static std::mutex mu;
  static auto *drivers = new std::map<const rig_io_ops_t *, IoDriver *>();
  std::lock_guard<std::mutex> g(mu);
  IoDriver *&d = (*drivers)[ops];
  if (!d) d = new IoDriver();
  return d;
}

// The functions of a library compiled before describe was added end
// before it.
constexpr size_t kOpsBeforeDescribe = offsetof(rig_io_ops_t, describe);

bool valid_ops(const rig_io_ops_t *ops) {
  return ops && ops->size >= kOpsBeforeDescribe && ops->region_key && ops->budget >= 0 && ops->alloc &&
         ops->free && ops->pages && ops->unpages && ops->read && ops->write;
}

}  // namespace

std::string io_region_name(rig_device_t *io, void *region) {
  const rig_io_ops_t *ops = io->io_ops;
  const char *what = nullptr;
  if (ops->size >= kOpsBeforeDescribe + sizeof ops->describe && ops->describe) what = ops->describe(io->io_library, region);
  return what && *what ? io->name + ": " + what : io->name;
}

int64_t io_move(rig_device_t *io, Allocation *a, bool write, int64_t offset, void *host, int64_t n) {
  void *region = a->region;
  int64_t done = 0;
  while (done < n) {
    DriverCallMask mask;
    int64_t r = write ? io->io_ops->write(io->io_library, region, offset + done, static_cast<char *>(host) + done, n - done)
                      : io->io_ops->read(io->io_library, region, offset + done, static_cast<char *>(host) + done, n - done);
    if (r <= 0) {
      // The bytes before done are in place: a write that ran out of room
      // says how many it wrote.
      std::string what = io_region_name(io, region) + ": " + (write ? "write" : "read") + " of " +
                         std::to_string(n) + " bytes at byte " + std::to_string(offset);
      Error e(RIG_EIO, r < 0 ? what + " failed after " + std::to_string(done) + " bytes: " +
                                   std::strerror(static_cast<int>(-r))
                             : what + " found the region cut short after " + std::to_string(done) + " bytes");
      e.code = r < 0 ? static_cast<int>(-r) : EIO;
      throw e;
    }
    done += r;
  }
  return done;
}

}  // namespace rig

extern "C" {

rig_status_t rig_open_io(const char *name, const rig_io_ops_t *ops, void *library, rig_device_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require(name != nullptr, "the device name is NULL");
    require(valid_ops(ops), "the io library's functions are incomplete");
    *out = open_device_with(
        name, io_driver_of(ops), [&](uint64_t start) { return std::make_unique<IoDevice>(ops, library, start); },
        [&](rig_device_t *d) {
          d->io_ops = ops;
          d->io_library = library;
        });
    return RIG_OK;
  });
}

rig_status_t rig_buffer_of_io(rig_device_t *d, const char *key, void *region, rig_access_t access, int64_t n,
                              rig_buffer_t **out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require_device(d);
    require(d->is_io(), "the device is not an io device");
    require(key != nullptr && std::strcmp(key, d->io_ops->region_key) == 0, "the region's key is not the device's");
    require(n >= 0, "the length cannot be negative");
    require(access == RIG_ACCESS_READ || access == RIG_ACCESS_READ_WRITE, "unknown access");
    require_live(d);
    move_collected(d);
    *out = new_io_buffer(d, region, access, n);
    return RIG_OK;
  });
}

rig_status_t rig_buffer_io(const rig_buffer_t *b, const char *key, void **region) {
  RIG_API_CALL({
    require(region != nullptr, "region is NULL");
    *region = nullptr;
    require_buffer(b, "the buffer");
    rig_device_t *owner = b->alloc->owner;
    if (owner->is_io() && key && std::strcmp(key, owner->io_ops->region_key) == 0) *region = b->alloc->region;
    return RIG_OK;
  });
}

}  // extern "C"
