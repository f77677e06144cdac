// The add kernel through librig's public API (add_launch.hpp).
#include "add_launch.hpp"

#include "client_process.hpp"
#include "known_work.hpp"

extern "C" {
#include "run_support.h"
}

#include <cstring>

namespace {

std::vector<uint8_t> object_of(const char *source) {
  object_t o = host_object(source);
  std::vector<uint8_t> bytes(o.bytes, o.bytes + o.n);
  object_free(&o);
  return bytes;
}

}  // namespace

std::vector<uint8_t> add_object() { return object_of(LINK_KERNEL("add")); }
std::vector<uint8_t> big_add_object() { return object_of(SERVICE_KERNELS "/big_add.c"); }

float add_result(float xi, int64_t i) { return xi + 2.0f * static_cast<float>(i); }

AddLaunch::AddLaunch(rig_device_t *d, const std::vector<uint8_t> &object, int64_t n) : d_(d), n_(n) {
  rig_status_t s = rig_image_load(d, object.data(), static_cast<int64_t>(object.size()), &image_);
  require(s == RIG_OK, "rig_image_load: %s: %s", rig_status_name(s), rig_last_error());
  s = rig_image_resolve(image_, "add", &add_);
  require(s == RIG_OK && add_, "rig_image_resolve of add: %s: %s", rig_status_name(s), rig_last_error());
  int64_t bytes = n * static_cast<int64_t>(sizeof(float));
  x_ = create_buffer(d, bytes);
  y_ = create_buffer(d, bytes);
  z_ = create_buffer(d, bytes);
  // add's parameters: x, y (read) at 0 and 8, z (write) at 16, n at 24.
  rig_ref_t refs[3] = {{RIG_REF_READ, {0, nullptr}, 0, RIG_ACCESS_READ, nullptr},
                       {RIG_REF_READ, {1, nullptr}, 8, RIG_ACCESS_READ, nullptr},
                       {RIG_REF_WRITE, {2, nullptr}, 16, RIG_ACCESS_READ, nullptr}};
  rig_part_t part{};
  part.kind = RIG_LAUNCH;
  part.u.launch.function = add_;
  part.u.launch.refs = refs;
  part.u.launch.ref_count = 3;
  part.u.launch.params = 32;
  s = rig_submission_make(d, &part, 1, nullptr, &submission_);
  require(s == RIG_OK, "rig_submission_make: %s: %s", rig_status_name(s), rig_last_error());
}

AddLaunch::~AddLaunch() {
  rig_submission_unref(submission_);
  rig_buffer_unref(x_);
  rig_buffer_unref(y_);
  rig_buffer_unref(z_);
  rig_image_unref(image_);
}

rig_status_t AddLaunch::submit_over(rig_buffer_t *x, rig_point_t *out) {
  rig_run_t *r = nullptr;
  rig_status_t s = rig_submission_take(submission_, &r);
  int64_t groups = (n_ + 63) / 64;
  if (s == RIG_OK) s = rig_run_groups(r, 0, groups, 1, 1);
  if (s == RIG_OK) s = rig_run_threads(r, 0, 64, 1, 1);
  if (s == RIG_OK) s = rig_run_int64(r, 0, 24, n_);
  rig_buffer_t *buffers[3] = {x, y_, z_};
  if (s == RIG_OK) s = rig_submit(r, buffers, 3, nullptr, 0, out);
  return s;
}

rig_point_t AddLaunch::launch(uint64_t seed) {
  std::vector<float> x(static_cast<size_t>(n_)), y(static_cast<size_t>(n_));
  for (int64_t i = 0; i < n_; i++) {
    x[static_cast<size_t>(i)] = static_cast<float>(seed) + static_cast<float>(i);
    y[static_cast<size_t>(i)] = 2.0f * static_cast<float>(i);
  }
  int64_t bytes = n_ * static_cast<int64_t>(sizeof(float));
  rig_status_t s = rig_buffer_blit_from_bytes(x.data(), bytes, 0, x_, 0, bytes);
  if (s == RIG_OK) s = rig_buffer_blit_from_bytes(y.data(), bytes, 0, y_, 0, bytes);
  require(s == RIG_OK, "writing x and y: %s: %s", rig_status_name(s), rig_last_error());
  rig_point_t p{};
  s = submit_over(x_, &p);
  require(s == RIG_OK, "rig_submit of add: %s: %s", rig_status_name(s), rig_last_error());
  return p;
}

void AddLaunch::check(uint64_t seed) {
  std::vector<float> z(static_cast<size_t>(n_));
  int64_t bytes = n_ * static_cast<int64_t>(sizeof(float));
  rig_status_t s = rig_buffer_blit_to_bytes(z_, 0, z.data(), bytes, 0, bytes);
  require(s == RIG_OK, "reading z: %s: %s", rig_status_name(s), rig_last_error());
  for (int64_t i = 0; i < n_; i++) {
    float want = add_result(static_cast<float>(seed) + static_cast<float>(i), i);
    require(z[static_cast<size_t>(i)] == want, "z[%lld] is %g, not %g (seed %llu)", static_cast<long long>(i),
            static_cast<double>(z[static_cast<size_t>(i)]), static_cast<double>(want),
            static_cast<unsigned long long>(seed));
  }
}

void AddLaunch::run(uint64_t seed) {
  launch(seed);
  check(seed);
}
