/* Fault injection into sim devices, for tests only: not part of rig.h.
 * A sim device declares this record under the capability key
 * RIG_SIM_INJECT_KEY (rig_device_capability). */
#ifndef RIG_SIM_INJECT_H
#define RIG_SIM_INJECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RIG_SIM_INJECT_KEY "sim.inject"

typedef struct rig_sim_inject {
  size_t size;
  void *device; /* the sim device: pass it to every function below */
  /* The work of value (and every later one) never completes: the worker
   * stops at it, and the device faults with why: sleep and submit raise. */
  void (*fault_at)(void *device, uint64_t value, const char *why);
  /* The work of value never completes and nothing reports it: a hang. */
  void (*hang_at)(void *device, uint64_t value);
  /* The next n submits (commits) fail to take (release) the work. */
  void (*fail_submits)(void *device, int n);
  void (*fail_commits)(void *device, int n);
  /* The next n sleeps raise an error that is not a fault. */
  void (*sleeps_raise)(void *device, int n);
  /* The next n allocs answer no memory (none) or raise (raise != 0). */
  void (*allocs_fail)(void *device, int n, int raise);
  /* Every later value's work takes at least us microseconds. */
  void (*set_latency_us)(void *device, int64_t us);
  /* Counters: driver calls rig made. */
  int64_t (*stops)(void *device);
  int64_t (*frees)(void *device);
  int64_t (*maps)(void *device);
  /* Every nth submit's room answers RIG_GROW (0: never); grow then answers
   * that it had no memory for short_bytes bytes (0: it grows). */
  void (*grow_every)(void *device, int n, int64_t short_bytes);
  int64_t (*grows)(void *device); /* grow calls rig made */
  /* Driver calls (alloc, free, map_host, map_peer, grow, sleep, stop) that
   * rig made while the calling thread held a lock (rig_holds() > 0). */
  int64_t (*calls_inside_lock)(void *device);
  /* Driver calls (as above) that rig made with SIGINT or SIGTERM not
   * blocked on the calling thread. */
  int64_t (*calls_unmasked)(void *device);
  /* The guarantees of rig to its drivers (rig-edge-driver.txt) that rig
   * broke on this device: their count in *count, and the first one's text
   * (NULL if none), checked as rig calls: regions freed once and on their
   * device, after the map_peer regions over them and, after the stop, once
   * the word reads the last value; allocs of positive multiples of 4;
   * map_host of a page start; map_peer of another device; images unloaded
   * once, after the stop only once the word reads the last value, and
   * prepared and resolved only while loaded; no counted call after the
   * stop; one stop, with no counted call under way. */
  const char *(*breaches)(void *device, int64_t *count);
  /* The next n entry calls answer that the device cannot run the function
   * (std::invalid_argument, which loses nothing: ERR-22). */
  void (*entries_refuse)(void *device, int n);
  /* The frees rig made of mappings (map_host and map_peer regions), of
   * the frees counted above: maps less unmaps are the device's live
   * mappings. */
  int64_t (*unmaps)(void *device);
} rig_sim_inject_t;

#ifdef __cplusplus
}
#endif

#endif
