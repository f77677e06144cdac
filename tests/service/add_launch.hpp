// The spec's add kernel (tests/link/kernels/add.c) launched through librig's
// public API, for client processes of tests of rigd's launches: every
// function throws (client_process.hpp's require) where a call fails or a
// result is wrong.
#pragma once

#include <rig/rig.h>

#include <cstdint>
#include <vector>

// The add kernel's object, compiled for the host as the spec's flags say;
// its bytes.  Fails the calling Criterion test where clang fails: call it in
// the test's process, before it forks its clients.
std::vector<uint8_t> add_object();
// The same kernel in an object of more than 1.5 MiB (kernels/big_add.c).
std::vector<uint8_t> big_add_object();

// add over n floats of device d: z = x + y, its function loaded from object.
class AddLaunch {
 public:
  AddLaunch(rig_device_t *d, const std::vector<uint8_t> &object, int64_t n);
  ~AddLaunch();
  AddLaunch(const AddLaunch &) = delete;
  AddLaunch &operator=(const AddLaunch &) = delete;

  // Writes x[i] = seed + i and y[i] = 2 * i, launches add over n threads in
  // groups of 64 and answers its point; check(seed) then reads z back.
  rig_point_t launch(uint64_t seed);
  void check(uint64_t seed);
  // launch(seed), then check(seed).
  void run(uint64_t seed);
  // The status of a launch with x the buffer given (z = x + y, y as
  // launch writes it), *out its point; the run's caller checks z.
  rig_status_t submit_over(rig_buffer_t *x, rig_point_t *out);
  rig_buffer_t *x() const noexcept { return x_; }
  rig_buffer_t *z() const noexcept { return z_; }
  rig_function_t *function() const noexcept { return add_; }
  int64_t count() const noexcept { return n_; }

 private:
  rig_device_t *d_;
  int64_t n_;
  rig_image_t *image_ = nullptr;
  rig_function_t *add_ = nullptr;
  rig_submission_t *submission_ = nullptr;
  rig_buffer_t *x_ = nullptr, *y_ = nullptr, *z_ = nullptr;
};

// What z[i] holds after a launch of add whose x[i] was xi and y[i] 2 * i.
float add_result(float xi, int64_t i);
