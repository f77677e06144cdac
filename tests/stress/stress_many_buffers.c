/* Creates and releases 1,000,000 buffers of 1 byte to 64 KiB on the host, a
 * memory device and a sim device, keeping a few live on each, with a fill
 * on every 16th sim buffer so that collected memory also waits for work.
 * Asserts that each device's allocated bytes stay within 64 MiB the whole
 * time (RECL-26: the memory and sim devices run at a 16 MiB budget, so
 * their caches return through the rounds of reclamation every few hundred
 * buffers; the host keeps at most 32 MiB of collected buffers, RECL-32),
 * that no create runs out of memory while cached memory can make room
 * (RECL-11), and that allocated returns to where it started after
 * free_cache (RECL-09 RECL-46 RECL-53).  The budget is small because a
 * create looks through the device's cache: a larger one only slows the
 * program down under sanitizers. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <time.h>

#define BUFFERS 1000000
#define LIVE 16                        /* live buffers per device */
#define MAX_BYTES (64 * 1024)
#define BUDGET (INT64_C(16) << 20)     /* the memory and sim devices' */
#define BOUND (INT64_C(64) << 20)      /* what any device may hold */
#define FILL_EVERY 16                  /* sim buffers per fill */

enum { HOST, MEM, SIM, DEVICES };

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static rig_device_t *open_with(const char *name, const char *config) {
  rig_open_options_t o = {sizeof o, config};
  rig_device_t *d = NULL;
  CHECK_OK(rig_open(name, &o, &d));
  return d;
}

int main(void) {
  struct timespec began;
  clock_gettime(CLOCK_MONOTONIC, &began);
  rig_device_t *devices[DEVICES];
  devices[HOST] = rig_host();
  devices[MEM] = open_with("MEM:30", "budget=16M");
  devices[SIM] = open_with("SIM:30", "budget=16M,commit_every=8");
  CHECK(rig_budget(devices[MEM]) == BUDGET && rig_budget(devices[SIM]) == BUDGET, "the budgets the configs set");

  int64_t start[DEVICES], peak[DEVICES] = {0};
  for (int k = 0; k < DEVICES; k++) {
    CHECK_OK(rig_free_cache(devices[k]));
    start[k] = rig_allocated(devices[k]);
  }

  rig_buffer_t *live[DEVICES][LIVE] = {{NULL}};
  rig_point_t last_fill = rig_point_make(rig_host(), 0);
  uint64_t seed = 0x2545f4914f6cdd1dull;
  int64_t sim_buffers = 0;
  for (int64_t i = 0; i < BUFFERS; i++) {
    int k = (int)(i % DEVICES);
    int slot = (int)((i / DEVICES) % LIVE);
    int64_t n = 1 + (int64_t)(next_random(&seed) % MAX_BYTES);
    rig_buffer_unref(live[k][slot]);
    live[k][slot] = NULL;
    CHECK_OK(rig_buffer_create(devices[k], n, RIG_MEMORY_DEVICE, &live[k][slot]));
    if (k == SIM && sim_buffers++ % FILL_EVERY == 0)
      CHECK_OK(rig_buffer_submit_fill(live[k][slot], (uint8_t)i, NULL, 0, &last_fill));
    int64_t held = rig_allocated(devices[k]);
    CHECK(held <= BOUND, "%s holds %lld bytes after %lld buffers", rig_device_name(devices[k]), (long long)held,
          (long long)i);
    if (held > peak[k]) peak[k] = held;
  }

  for (int k = 0; k < DEVICES; k++)
    for (int slot = 0; slot < LIVE; slot++) rig_buffer_unref(live[k][slot]);
  /* Work completes in order: once the last fill is done, every fill is. */
  CHECK_OK(rig_point_wait(last_fill));
  for (int k = 0; k < DEVICES; k++) {
    CHECK_OK(rig_free_cache(devices[k]));
    CHECK(rig_allocated(devices[k]) == start[k], "%s: allocated %lld after free_cache, started at %lld",
          rig_device_name(devices[k]), (long long)rig_allocated(devices[k]), (long long)start[k]);
  }
  CHECK_OK(rig_close(devices[SIM]));
  CHECK_OK(rig_close(devices[MEM]));
  printf("stress_many_buffers: ok: %d buffers in %.1f s; peaks: host %lld, MEM %lld, SIM %lld bytes\n", BUFFERS,
         seconds_since(&began), (long long)peak[HOST], (long long)peak[MEM], (long long)peak[SIM]);
  return 0;
}
