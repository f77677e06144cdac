/* Staging memory that the process made before it connected to rigd.
 *
 * A proxy reaches only the host memory the process shares with rigd
 * (DESIGN.md "The per-host service", host memory arenas): once connected,
 * staging's 32 MiB allocations are such shared blocks.  Staging made
 * before the connection, or host memory the host's cache kept from before
 * it, is private to the process; staging must not hand it to a copy after
 * the connection, so that a copy through staging to a served device runs
 * whatever came first (COPY-15, COPY-16: the copy passes through staging
 * memory that rig maps on each device that copies through it).  Before the
 * fix such a copy answered RIG_EINVAL, "cannot map staging memory".
 *
 * Each test runs in a process of its own (Criterion's), so each starts
 * with no staging and unconnected. */
#include "rigd_process.hpp"

#include <rig/rig.h>
#include <rig/service.h>

#include <criterion/criterion.h>

#include <cstdint>
#include <vector>

namespace {

constexpr int64_t kBytes = int64_t{1} << 20;

void check(rig_status_t status, const char *what) {
  // RIG_EINVAL here is the defect: staging that rigd cannot map.
  cr_assert(status == RIG_OK, "%s: %s: %s", what, rig_status_name(status), rig_last_error());
}

rig_device_t *open_device(const char *name) {
  rig_device_t *d = nullptr;
  check(rig_open(name, nullptr, &d), name);
  return d;
}

rig_buffer_t *create(rig_device_t *d, int64_t n) {
  rig_buffer_t *b = nullptr;
  check(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &b), "create");
  return b;
}

std::vector<uint8_t> pattern(uint8_t seed) {
  std::vector<uint8_t> bytes(kBytes);
  for (int64_t i = 0; i < kBytes; i++) bytes[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 12));
  return bytes;
}

std::vector<uint8_t> read_back(rig_buffer_t *b) {
  std::vector<uint8_t> bytes(kBytes);
  check(rig_buffer_blit_to_bytes(b, 0, bytes.data(), kBytes, 0, kBytes), "blit to bytes");
  return bytes;
}

void connect_to(const RigdProcess &rigd) {
  rig_service_options_t options{sizeof options, rigd.socket.c_str()};
  check(rig_service_connect(&options, NULL), "connect");
}

// Host bytes to MEM:0@rigd and back, each way through staging (the caller's
// bytes are memory the host pages, which a proxy reaches only so).
void round_trip_through_rigd(uint8_t seed) {
  rig_buffer_t *served = create(open_device("MEM:0@rigd"), kBytes);
  std::vector<uint8_t> sent = pattern(seed);
  check(rig_buffer_blit_from_bytes(sent.data(), kBytes, 0, served, 0, kBytes), "blit to MEM:0@rigd");
  cr_assert(read_back(served) == sent, "MEM:0@rigd holds the bytes sent through staging");
  rig_buffer_unref(served);
}

}  // namespace

Test(staging_order, staging_made_before_connecting_reaches_a_served_device, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  // Host bytes to a local sim's memory and back pass through staging (the
  // host does not address a sim's Device memory): staging exists, made of
  // private pages, before the process connects.
  rig_buffer_t *local = create(open_device("SIM:0"), kBytes);
  std::vector<uint8_t> local_bytes = pattern(1);
  check(rig_buffer_blit_from_bytes(local_bytes.data(), kBytes, 0, local, 0, kBytes), "blit to SIM:0");
  cr_assert(read_back(local) == local_bytes, "SIM:0 holds the bytes");

  connect_to(rigd);
  round_trip_through_rigd(2);
  // Between SIM:0 and MEM:0@rigd the bytes pass through staging that both
  // map: SIM:0 copies into it, MEM:0@rigd out of it.
  rig_buffer_t *served = create(open_device("MEM:0@rigd"), kBytes);
  check(rig_buffer_copy(local, served), "copy from SIM:0 to MEM:0@rigd");
  cr_assert(read_back(served) == local_bytes, "MEM:0@rigd holds SIM:0's bytes");
  rig_buffer_unref(served);
  rig_buffer_unref(local);
}

Test(staging_order, a_host_block_cached_before_connecting_does_not_become_staging, .timeout = 60) {
  /* A host buffer of staging's size, freed before the connection, stays in
   * the host's cache (rig.txt, Reclamation: the host keeps collected
   * buffers of 64 KiB or more, up to 32 MiB of them) with its private
   * pages; staging's first allocation after the connection must not be
   * it. */
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  rig_buffer_unref(create(rig_host(), int64_t{32} << 20));
  connect_to(rigd);
  round_trip_through_rigd(3);
}
