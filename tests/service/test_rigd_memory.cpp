/* The memory rigd holds for its clients: a client's quota counts its
 * proxies together, and a refused allocation reclaims every cache the
 * quota counts (RECL-36); a quota'd proxy's budget is the quota (RECL-44).
 * Each client is a process of its own (client_process.hpp). */
#include "client_process.hpp"
#include "known_work.hpp"
#include "rigd_process.hpp"

#include <criterion/criterion.h>

#include <sys/types.h>

#include <string>

namespace {

constexpr int64_t mib = int64_t{1} << 20;

// Memory of n bytes on d, every byte written and the write waited for.
rig_buffer_t *filled_buffer(rig_device_t *d, int64_t n, uint8_t byte) {
  rig_buffer_t *b = create_buffer(d, n);
  rig_point_t filled{};
  rig_status_t status = rig_buffer_submit_fill(b, byte, nullptr, 0, &filled);
  require(status == RIG_OK, "fill on %s: %s", rig_device_name(d), rig_last_error());
  status = rig_point_wait(filled);
  require(status == RIG_OK, "fill's wait on %s: %s", rig_device_name(d), rig_last_error());
  return b;
}


}  // namespace

/* RECL-36, RECL-44: with quota_bytes = 16 MiB, 12 MiB a client created,
 * filled and released on MEM:0@rigd stays in that proxy's cache, still
 * counted by the quota in rigd; 12 MiB on SIM:0@rigd, which the quota
 * refuses at first, reclaims that cache (the quota counts it) and then
 * succeeds, without the client freeing any cache itself.  Each proxy's
 * budget is the quota, less than the served devices' own. */
Test(rigd_memory, a_quota_refusal_reclaims_every_proxys_cache_it_counts, .timeout = 60) {
  constexpr int64_t quota = 16 * mib;
  RigdProcess rigd = start_rigd_with_config({"--devices", "MEM:0,SIM:0"}, "quota_bytes = 16777216\n");
  pid_t client = fork_client([&] {
    connect_service(rigd.socket);
    rig_device_t *mem = open_device("MEM:0@rigd");
    rig_device_t *sim = open_device("SIM:0@rigd");
    require(rig_budget(mem) == quota && rig_budget(sim) == quota, "the proxies' budgets are %lld and %lld, not %lld",
            static_cast<long long>(rig_budget(mem)), static_cast<long long>(rig_budget(sim)),
            static_cast<long long>(quota));
    rig_buffer_unref(filled_buffer(mem, 12 * mib, 1));
    rig_buffer_t *b = nullptr;
    rig_status_t status = rig_buffer_create(sim, 12 * mib, RIG_MEMORY_DEVICE, &b);
    require(status == RIG_OK, "12 MiB on SIM:0@rigd after 12 MiB released on MEM:0@rigd: %s: %s",
            rig_status_name(status), rig_last_error());
    rig_point_t filled{};
    require(rig_buffer_submit_fill(b, 2, nullptr, 0, &filled) == RIG_OK && rig_point_wait(filled) == RIG_OK,
            "the new memory works: %s", rig_last_error());
    for (uint8_t byte : read_bytes(b)) require(byte == 2, "a filled byte is %u", byte);
    rig_buffer_unref(b);
    // And back: the SIM:0@rigd memory now cached makes way on MEM:0@rigd.
    rig_buffer_unref(filled_buffer(mem, 12 * mib, 3));
    return 0;
  });
  cr_assert(ended_cleanly(await_client(client, client_end_s)),
            "a refused allocation reclaimed the cache of the client's other proxy, and budgets are the quota");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}
