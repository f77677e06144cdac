/* Four threads share buffers on the host and two memory devices: views,
 * borrows, copies, fills, host reads, claims and releases run concurrently
 * on shared allocations.  Each thread writes only its own quarter of each
 * shared buffer, so the final bytes are known.  Asserts ORD-27 and ORD-29
 * under concurrency, and that allocated returns to its start (RECL-46). */
#include "check.h"

#include <pthread.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 400
#define QUARTER 4096

static rig_device_t *devices[3];
static rig_buffer_t *shared[3];

static int sum_bytes(void *bytes, int64_t n, void *context) {
  uint64_t *sum = context;
  for (int64_t i = 0; i < n; i++) *sum += ((unsigned char *)bytes)[i];
  return 0;
}

static void *worker(void *arg) {
  int me = (int)(intptr_t)arg;
  uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1);
  for (int round = 0; round < ROUNDS; round++) {
    int from = (int)(next_random(&seed) % 3), to = (int)(next_random(&seed) % 3);
    uint8_t value = (uint8_t)(round + me);
    rig_buffer_t *mine_from, *mine_to;
    CHECK_OK(rig_buffer_view(shared[from], me * QUARTER, QUARTER, &mine_from));
    CHECK_OK(rig_buffer_view(shared[to], me * QUARTER, QUARTER, &mine_to));
    CHECK_OK(rig_buffer_fill(mine_from, value));
    if (from != to) CHECK_OK(rig_buffer_copy(mine_from, mine_to));
    uint64_t sum = 0;
    CHECK_OK(rig_buffer_read(mine_to, 1, sum_bytes, &sum));
    CHECK(sum == (uint64_t)value * QUARTER, "thread %d round %d: sum %llu", me, round, (unsigned long long)sum);
    /* A borrow of the host's shared buffer on a memory device, used once. */
    rig_buffer_t *borrow;
    CHECK_OK(rig_buffer_borrow(devices[1 + me % 2], mine_from, &borrow));
    CHECK(borrow != NULL, "memory devices map host memory");
    rig_buffer_t *scratch;
    CHECK_OK(rig_buffer_create(devices[1 + me % 2], QUARTER, RIG_MEMORY_DEVICE, &scratch));
    CHECK_OK(rig_buffer_copy(borrow, scratch));
    rig_buffer_unref(scratch);
    rig_buffer_unref(borrow);
    rig_buffer_unref(mine_from);
    rig_buffer_unref(mine_to);
  }
  return NULL;
}

int main(void) {
  devices[0] = rig_host();
  CHECK_OK(rig_open("MEM:20", NULL, &devices[1]));
  CHECK_OK(rig_open("MEM:21", NULL, &devices[2]));
  int64_t start[3];
  for (int i = 0; i < 3; i++) start[i] = rig_allocated(devices[i]);
  for (int i = 0; i < 3; i++) CHECK_OK(rig_buffer_create(devices[i], THREADS * QUARTER, RIG_MEMORY_DEVICE, &shared[i]));
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i);
  for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
  for (int i = 0; i < 3; i++) rig_buffer_unref(shared[i]);
  for (int i = 0; i < 3; i++) {
    CHECK_OK(rig_free_cache(devices[i]));
    CHECK(rig_allocated(devices[i]) == start[i], "%s: allocated %lld, started at %lld", rig_device_name(devices[i]),
          (long long)rig_allocated(devices[i]), (long long)start[i]);
  }
  printf("stress_shared_buffers: ok\n");
  return 0;
}
