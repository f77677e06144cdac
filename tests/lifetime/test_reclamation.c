/* Lifetime: reclamation and budgets.
 *
 * rig.txt's Reclamation: collected memory waits for its stamps, enters its
 * device's cache, returns at free_cache, at a lowered budget and when an
 * allocation needs the room after the rounds of reclamation; budgets,
 * allocated, Pinned memory in the host's budget, and the host's kept
 * buffers.  Devices: the host, memory devices (MEM:70..) and sim devices
 * (SIM:20..), whose work runs on a worker thread once committed (their
 * driver holds work until commit_every values or a wait commits it).  The
 * sim's `frees` counter tells memory that went back to its driver from
 * memory that went to its cache.
 *
 * Asserts:
 *   RECL-02 RECL-05 RECL-07 RECL-08 RECL-09 RECL-10 RECL-11 RECL-13 RECL-16
 *   RECL-19 RECL-26 RECL-27 RECL-28 RECL-29 RECL-30 RECL-31 RECL-35 RECL-36
 *   RECL-38 RECL-43 RECL-44 RECL-46 RECL-47 RECL-48 RECL-49 RECL-50 RECL-51
 *   RECL-53 RECL-54 RECL-55
 *
 * Not reached here, and why:
 *   RECL-01 RECL-04: asserted in test_claims.c (free's early return).
 *   RECL-03 RECL-06 RECL-17 RECL-22 RECL-42: submissions, unordered refs,
 *     holds and queue growth need Submission, which rig.h lacks.
 *   RECL-12 RECL-37 RECL-39..41 RECL-56: staging memory and mappings come
 *     from copies whose staging allocations are not observable through
 *     rig.h (the sim's driver never refuses a mapping).
 *   RECL-14 RECL-45: io devices are not in rig.h's reach here.
 *   RECL-15 RECL-24: "only inside rig's calls" and "through other threads'
 *     calls" hold by construction; a test could only show that nothing moves
 *     while no call runs, which the RECL-05 test does.
 *   RECL-18: needs a create that moves memory and then answers Lost on the
 *     same device, which a lost device never does (its memory waits for
 *     its stop: test_stops.c).
 *   RECL-20 RECL-21 RECL-23 RECL-52: rounds on every device and stopped
 *     devices' memory: test_stops.c asserts the return after the stop.
 *   RECL-25: the lag of reported values is the driver's (k values); the sim
 *     reports at once.
 *   RECL-32 RECL-33: the peak over collector cycles has no C counterpart
 *     (DESIGN.md: reference counts); the 32 MiB bound is the kept bytes'.
 *   RECL-34: page faults at first write are not observable through rig.h.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <rig/rig.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "helpers.h"

#define KIB ((int64_t)1024)
#define MIB (1024 * KIB)

/* ---- Buffers ----------------------------------------------------------- */

/* The driver's object for b's memory: equal handles are the same memory. */
static uint64_t handle_of(rig_buffer_t *b) {
  uint64_t handle = 0;
  int64_t offset = -1;
  CHECK_OK(rig_buffer_handle(b, &handle, &offset));
  cr_assert_eq(offset, 0);
  return handle;
}

/* ---- Collected memory waits, then enters the cache ---------------------- */

Test(reclamation, collected_memory_waits_for_its_stamps) { /* RECL-05 RECL-19 RECL-51 RECL-46 */
  rig_device_t *d = open_with("SIM:20", "latency_us=50000,commit_every=8");
  int64_t start = rig_allocated(d);
  int64_t frees = sim_frees(d);
  rig_buffer_t *b = create(d, 64 * KIB);
  cr_assert_eq(rig_allocated(d), start + 64 * KIB);
  rig_point_t fill = submit_fill(b, 9);
  rig_buffer_unref(b);  /* collected; its fill is queued, uncommitted */

  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), start + 64 * KIB, "collected memory waits for its fill");
  cr_assert_eq(sim_frees(d), frees);

  /* Committed and running (50 ms): free_cache, then a look at the point.
   * Had the point not been reached after the call, it was not during it. */
  bool reached = point_reached(fill);
  CHECK_OK(rig_free_cache(d));
  int64_t during = rig_allocated(d);
  if (!reached && !point_reached(fill))
    cr_assert_eq(during, start + 64 * KIB, "memory whose work runs stays allocated");

  CHECK_OK(rig_point_wait(fill));
  /* One free_cache moves the collected memory and returns it (RECL-51). */
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), start, "the memory returned once its fill was done");
  cr_assert_eq(sim_frees(d), frees + 1);
  CHECK_OK(rig_close(d));
}

Test(reclamation, memory_is_collected_after_its_last_buffer) { /* RECL-02 */
  rig_device_t *d = open_with("SIM:21", NULL);
  int64_t start = rig_allocated(d);
  rig_buffer_t *b = create(d, 32 * KIB);
  rig_buffer_t *part = NULL;
  CHECK_OK(rig_buffer_view(b, 4 * KIB, 4 * KIB, &part));
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), start + 32 * KIB, "a view keeps the allocation");
  rig_buffer_unref(part);
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), start);
  CHECK_OK(rig_close(d));
}

Test(reclamation, cached_memory_is_reused_with_empty_stamps) { /* RECL-07 RECL-08 RECL-09 RECL-16 */
  rig_device_t *d = open_with("SIM:22", "latency_us=20000,commit_every=8");
  int64_t start = rig_allocated(d);
  int64_t frees = sim_frees(d);
  rig_buffer_t *b = create(d, 48 * KIB);
  uint64_t memory = handle_of(b);
  rig_point_t fill = submit_fill(b, 1);
  rig_buffer_unref(b);
  CHECK_OK(rig_point_wait(fill));

  /* The create moves the collected memory, whose fill is done, into the
   * cache and takes it from there: nothing new is allocated. */
  rig_buffer_t *again = create(d, 48 * KIB);
  cr_assert_eq(handle_of(again), memory, "the cached memory is reused");
  cr_assert_eq(rig_allocated(d), start + 48 * KIB, "reuse allocates nothing more");
  cr_assert_eq(sim_frees(d), frees, "the memory never went back to the driver");
  /* Empty stamps: the new buffer follows no work of the earlier use. */
  cr_assert_eq(rig_buffer_claim(again, RIG_ACCESS_READ_WRITE), RIG_CLAIMED);
  rig_buffer_release(again);
  bool reached = false;
  CHECK_OK(rig_buffer_reached(again, RIG_ACCESS_READ_WRITE, &reached));
  cr_assert(reached);

  /* free_cache returns cached memory, not live buffers (RECL-30). */
  rig_buffer_t *other = create(d, 8 * KIB);
  rig_buffer_unref(other);
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), start + 48 * KIB, "the cache is empty, the live buffer kept");
  cr_assert_eq(sim_frees(d), frees + 1, "the cached 8 KiB went back");
  cr_assert_null(rig_buffer_dead(again));
  rig_buffer_unref(again);
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(d), start);
  CHECK_OK(rig_close(d));
}

Test(reclamation, allocations_count_by_whole_words) { /* RECL-27 RECL-29 RECL-43 RECL-44 */
  rig_device_t *d = open_with("SIM:23", "budget=3M");
  cr_assert_eq(rig_budget(d), 3 * MIB, "a driver's device starts at its driver's budget");
  cr_assert_eq(rig_budget(rig_host()), INT64_MAX, "the host's budget starts at max_int");
  int64_t start = rig_allocated(d);
  rig_buffer_t *odd = create(d, 5);
  cr_assert_eq(rig_allocated(d), start + 8, "5 bytes count as two words");
  rig_buffer_unref(odd);
  CHECK_OK(rig_free_cache(d));

  /* A host buffer of 128 bytes or more (under the page-aligned sizes)
   * starts on 128 bytes and counts up to 112 bytes more. */
  CHECK_OK(rig_free_cache(rig_host()));
  int64_t host_start = rig_allocated(rig_host());
  rig_buffer_t *h = create(rig_host(), 1001);
  int64_t counted = rig_allocated(rig_host()) - host_start;
  cr_assert(counted >= 1004 && counted <= 1004 + 112, "1001 host bytes count %lld", (long long)counted);
  rig_buffer_unref(h);
  CHECK_OK(rig_free_cache(rig_host()));
  cr_assert_eq(rig_allocated(rig_host()), host_start, "host allocated %lld, started at %lld",
               (long long)rig_allocated(rig_host()), (long long)host_start);
  CHECK_OK(rig_close(d));
}

Test(reclamation, memory_done_over_budget_skips_the_cache) { /* RECL-13 RECL-16 */
  rig_device_t *d = open_with("SIM:24", "budget=1M,commit_every=8");
  int64_t frees = sim_frees(d);
  rig_buffer_t *live = create(d, 512 * KIB);
  rig_buffer_t *b = create(d, 256 * KIB);
  rig_point_t fill = submit_fill(b, 2);
  rig_buffer_unref(b);
  CHECK_OK(rig_set_budget(d, 600 * KIB));
  cr_assert_eq(rig_allocated(d), 768 * KIB, "no live or waiting memory is freed");
  CHECK_OK(rig_point_wait(fill));
  /* The create moves the collected memory first: the device holds more
   * than its budget, so it goes back to the driver, not to the cache. */
  rig_buffer_t *small = create(d, 4);
  cr_assert_eq(sim_frees(d), frees + 1, "the memory skipped the cache");
  cr_assert_eq(rig_allocated(d), 512 * KIB + 4);
  rig_buffer_unref(small);
  rig_buffer_unref(live);
  CHECK_OK(rig_close(d));
}

/* ---- Budgets ------------------------------------------------------------- */

Test(reclamation, set_budget_returns_cache_but_no_live_buffer) { /* RECL-10 RECL-47 RECL-48 RECL-49 RECL-50 */
  rig_device_t *d = open_with("SIM:25", "budget=1M");
  int64_t frees = sim_frees(d);
  rig_buffer_t *cached_a = create(d, 128 * KIB), *cached_b = create(d, 128 * KIB);
  rig_buffer_t *live = create(d, 512 * KIB);
  rig_buffer_unref(cached_a);  /* no work to wait for: cached at once */
  rig_buffer_unref(cached_b);
  cr_assert_eq(rig_allocated(d), 768 * KIB, "both 128 KiB blocks are cached");
  cr_assert_eq(sim_frees(d), frees);

  CHECK_OK(rig_set_budget(d, 700 * KIB));
  cr_assert_eq(rig_budget(d), 700 * KIB);
  cr_assert_eq(rig_allocated(d), 640 * KIB, "one cached block returned: the device holds at most its budget");
  cr_assert_eq(sim_frees(d), frees + 1);

  CHECK_OK(rig_set_budget(d, 100 * KIB));
  cr_assert_eq(rig_budget(d), 100 * KIB);
  cr_assert_eq(rig_allocated(d), 512 * KIB, "the cache is empty; live buffers stay");
  cr_assert_null(rig_buffer_dead(live));
  CHECK_OK(rig_buffer_fill(live, 1));

  CHECK_FAILS(RIG_EINVAL, rig_set_budget(d, -1), "a negative budget");
  cr_assert_eq(rig_budget(d), 100 * KIB);
  rig_buffer_unref(live);
  CHECK_OK(rig_close(d));
}

Test(reclamation, an_allocation_needing_room_frees_the_cache) { /* RECL-11 RECL-26 RECL-36 RECL-54 */
  rig_device_t *d = open_with("SIM:26", "budget=1M");
  int64_t frees = sim_frees(d);
  rig_buffer_t *first = create(d, 512 * KIB);
  rig_buffer_t *cached = create(d, 256 * KIB);
  rig_buffer_unref(cached);  /* no work to wait for: cached at once */
  /* 512 K live and 256 K cached: another 508 K needs the room. */
  rig_buffer_t *second = create(d, 508 * KIB);
  cr_assert_geq(sim_frees(d), frees + 1, "the round returned the cache");
  cr_assert_leq(rig_allocated(d), rig_budget(d), "the device holds at most its budget");
  cr_assert_eq(rig_allocated(d), 1020 * KIB);

  /* Both live: the budget has no room, and the rounds free no live buffer. */
  rig_buffer_t *third = NULL;
  CHECK_NO_MEMORY(d, 512 * KIB, rig_buffer_create(d, 512 * KIB, RIG_MEMORY_DEVICE, &third));
  cr_assert_null(third);
  cr_assert_null(rig_buffer_dead(first));
  cr_assert_null(rig_buffer_dead(second));
  cr_assert_null(rig_lost(d), "running out of memory loses nothing");
  rig_buffer_unref(second);
  rig_buffer_unref(first);
  CHECK_OK(rig_close(d));
}

Test(reclamation, a_round_waits_for_the_work_that_holds_memory_back) { /* RECL-36 */
  rig_device_t *d = open_with("SIM:27", "budget=1M,latency_us=20000,commit_every=8");
  rig_buffer_t *live = create(d, 512 * KIB);
  rig_buffer_t *busy = create(d, 512 * KIB);
  rig_point_t fill = submit_fill(busy, 3);
  rig_buffer_unref(busy);  /* collected, its fill uncommitted */
  /* No room until the collected memory returns: the round commits and
   * waits for the fill, then frees the memory. */
  rig_buffer_t *next = create(d, 512 * KIB);
  bool reached = false;
  CHECK_OK(rig_point_reached(fill, &reached));
  cr_assert(reached, "the allocation waited for the fill that held the memory");
  cr_assert_eq(rig_allocated(d), 1 * MIB);
  rig_buffer_unref(next);
  rig_buffer_unref(live);
  CHECK_OK(rig_close(d));
}

Test(reclamation, refused_allocation_tries_after_three_rounds) { /* RECL-36 RECL-38 RECL-54 */
  rig_device_t *d = open_with("SIM:28", NULL);
  const rig_sim_inject_t *inj = sim_inject(d);
  /* The driver refuses the first try and the tries of the first two
   * rounds: the third round's try succeeds. */
  inj->allocs_fail(inj->device, 3, 0);
  rig_buffer_t *b = create(d, 4 * KIB);
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(d));  /* no cached block to reuse below */
  /* Refusing the first try and all three rounds' answers RIG_ENOMEM. */
  inj->allocs_fail(inj->device, 4, 0);
  rig_buffer_t *none = NULL;
  CHECK_NO_MEMORY(d, 4 * KIB, rig_buffer_create(d, 4 * KIB, RIG_MEMORY_DEVICE, &none));
  cr_assert_null(none);
  cr_assert_null(rig_lost(d));
  b = create(d, 4 * KIB);
  rig_buffer_unref(b);
  CHECK_OK(rig_close(d));
}

Test(reclamation, an_allocation_larger_than_the_budget_fails_at_once) { /* RECL-35 RECL-54 */
  rig_device_t *d = open_with("SIM:29", "budget=1M");
  int64_t frees = sim_frees(d);
  rig_buffer_t *cached = create(d, 256 * KIB);
  rig_buffer_unref(cached);  /* cached at once */
  int64_t held = rig_allocated(d);
  cr_assert_eq(held, 256 * KIB);
  rig_buffer_t *huge = NULL;
  CHECK_NO_MEMORY(d, 2 * MIB, rig_buffer_create(d, 2 * MIB, RIG_MEMORY_DEVICE, &huge));
  cr_assert_null(huge);
  cr_assert_eq(rig_allocated(d), held, "the cache was not freed");
  cr_assert_eq(sim_frees(d), frees);
  CHECK_OK(rig_close(d));
}

Test(reclamation, pinned_memory_counts_in_the_hosts_budget) { /* RECL-28 RECL-55 */
  rig_device_t *d = open_with("SIM:30", NULL);
  CHECK_OK(rig_free_cache(rig_host()));
  int64_t host_start = rig_allocated(rig_host());
  int64_t start = rig_allocated(d);
  rig_buffer_t *pinned = create_kind(d, 64 * KIB, RIG_MEMORY_PINNED);
  cr_assert_not_null(rig_buffer_host(pinned), "the host addresses Pinned memory");
  cr_assert_eq(rig_allocated(d), start, "Pinned memory does not count in its device's budget");
  cr_assert_eq(rig_allocated(rig_host()), host_start + 64 * KIB, "it counts in the host's");
  /* By its whole words, as every allocation (RECL-27): the 112 bytes more
   * of a host buffer on 128 bytes are the C library's, not the driver's. */
  rig_buffer_t *odd = create_kind(d, 1001, RIG_MEMORY_PINNED);
  cr_assert_eq(rig_allocated(rig_host()), host_start + 64 * KIB + 1004, "1001 Pinned bytes count %lld",
               (long long)(rig_allocated(rig_host()) - host_start - 64 * KIB));
  rig_buffer_unref(odd);
  CHECK_OK(rig_free_cache(d));

  /* The host's budget refuses the next one: the error names the sim. */
  CHECK_OK(rig_set_budget(rig_host(), rig_allocated(rig_host()) + 32 * KIB));
  rig_buffer_t *refused = NULL;
  CHECK_NO_MEMORY(d, 64 * KIB, rig_buffer_create(d, 64 * KIB, RIG_MEMORY_PINNED, &refused));
  cr_assert_null(refused);
  /* Larger than the host's whole budget: refused at once, also for the sim. */
  CHECK_NO_MEMORY(d, 1 * MIB, rig_buffer_create(d, 1 * MIB, RIG_MEMORY_PINNED, &refused));
  CHECK_OK(rig_set_budget(rig_host(), INT64_MAX));
  /* Collected, it enters the sim's cache still counting in the host's
   * budget; the sim's free_cache returns it. */
  rig_buffer_unref(pinned);
  CHECK_OK(rig_free_cache(d));
  cr_assert_eq(rig_allocated(rig_host()), host_start,
               "free_cache of the sim returns its cached Pinned memory: host allocated %lld, started at %lld",
               (long long)rig_allocated(rig_host()), (long long)host_start);
  CHECK_OK(rig_close(d));
}

Test(reclamation, a_round_frees_cached_pinned_memory_charged_to_the_host) { /* RECL-36 RECL-28 */
  rig_device_t *d = open_with("SIM:31", NULL);
  CHECK_OK(rig_free_cache(rig_host()));
  int64_t host_start = rig_allocated(rig_host());
  int64_t frees = sim_frees(d);
  rig_buffer_t *pinned = create_kind(d, 64 * KIB, RIG_MEMORY_PINNED);
  rig_buffer_unref(pinned);  /* cached by the sim, charged to the host */
  cr_assert_eq(rig_allocated(rig_host()), host_start + 64 * KIB);
  CHECK_OK(rig_set_budget(rig_host(), host_start + 64 * KIB));
  /* Another size needs the room the cached block takes in the host's
   * budget: the rounds free the cached memory charged to that budget. */
  rig_buffer_t *other = NULL;
  CHECK_OK(rig_buffer_create(d, 32 * KIB, RIG_MEMORY_PINNED, &other),
           "a Pinned allocation with room held by cached Pinned memory");
  cr_assert_eq(sim_frees(d), frees + 1, "the cached Pinned block went back to the sim's driver");
  cr_assert_leq(rig_allocated(rig_host()), rig_budget(rig_host()));
  CHECK_OK(rig_set_budget(rig_host(), INT64_MAX));
  rig_buffer_unref(other);
  CHECK_OK(rig_close(d));
}

/* ---- The host's kept buffers --------------------------------------------- */

Test(reclamation, the_host_keeps_buffers_of_64_kib_or_more) { /* RECL-31 RECL-53 */
  rig_device_t *h = rig_host();
  CHECK_OK(rig_free_cache(h));
  int64_t start = rig_allocated(h);

  rig_buffer_t *small = create(h, 60 * KIB);
  cr_assert_gt(rig_allocated(h), start);
  rig_buffer_unref(small);
  cr_assert_eq(rig_allocated(h), start, "a collected buffer under 64 KiB is not kept");

  rig_buffer_t *big = create(h, 64 * KIB);
  void *address = rig_buffer_host(big);
  int64_t held = rig_allocated(h);
  rig_buffer_unref(big);
  cr_assert_eq(rig_allocated(h), held, "a collected buffer of 64 KiB is kept");
  rig_buffer_t *again = create(h, 64 * KIB);
  cr_assert_eq(rig_buffer_host(again), address, "the kept buffer is reused");
  cr_assert_eq(rig_allocated(h), held);
  rig_buffer_unref(again);
  CHECK_OK(rig_free_cache(h));
  cr_assert_eq(rig_allocated(h), start, "free_cache of the host frees the kept buffers");
}
