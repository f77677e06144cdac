/* Stress: random fills and copies among three sim devices and the host,
 * checked against a sequential model.
 *
 * THREADS threads each own BUFFERS buffers, on random devices and of random
 * kinds (a sim device's own memory or its Pinned memory, or host memory),
 * and run OPS random operations on them: fills and copies of random views
 * with random boxes, waiting on random earlier points of their own, reads
 * back, and releases and re-creations of buffers.  The sim devices run
 * their work on worker threads after a random latency of 0..200 us, which
 * the threads change as they go.  A thread's operations touch only its own
 * buffers, so the order rig gives them through their memory (ORD-07,
 * ORD-08, ORD-14, ORD-29) makes them sequential: every buffer's bytes must
 * equal those of a plain byte array that the same operations update in
 * program order (COPY-45, COPY-51, COPY-52, COPY-91).  At the end, with
 * every buffer released and every cache freed, each device holds the bytes
 * it held at the start (RECL: collected memory returns once its work is
 * done; COPY-28: staging memory returns at free_cache of the host).
 *
 * RIG_STRESS_SEED sets the seed (printed at the start) to replay a run.
 * Sized for ThreadSanitizer on two cores: well under a minute there.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "sim_inject.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  THREADS = 4,
  OPS = 2000,
  BUFFERS = 4,
  MAX_BYTES = 4096,
  SIMS = 3,
  KEPT_POINTS = 16, /* the earlier points a thread may wait on */
  MAX_BOXES = 3,
  MAX_LATENCY_US = 200,
};

static rig_device_t *sims[SIMS];
/* The devices buffers are made on: the sim devices and the host. */
static rig_device_t *devices[SIMS + 1];

/* A buffer and the model of its bytes. */
typedef struct {
  rig_buffer_t *buffer;
  uint8_t *model;
  int64_t bytes;
} modeled_t;

typedef struct {
  int id;
  uint64_t rng;
  modeled_t bufs[BUFFERS];
  rig_point_t points[KEPT_POINTS];
  int npoints; /* points kept so far (capped at KEPT_POINTS) */
  int next_point;
  rig_point_t *all_points; /* every point of the thread's, for the end */
  size_t nall;
  int op; /* the operation under way, for messages */
} worker_t;

/* A random integer in [0, n). */
static int64_t below(worker_t *w, int64_t n) { return (int64_t)(next_random(&w->rng) % (uint64_t)n); }

static void keep_point(worker_t *w, rig_point_t p) {
  w->all_points[w->nall++] = p;
  w->points[w->next_point] = p;
  w->next_point = (w->next_point + 1) % KEPT_POINTS;
  if (w->npoints < KEPT_POINTS) w->npoints++;
}

/* Up to two random earlier points of the thread for an operation to wait on. */
static size_t random_waits(worker_t *w, rig_point_t waits[2]) {
  size_t n = w->npoints == 0 ? 0 : (size_t)below(w, 3);
  for (size_t i = 0; i < n; i++) waits[i] = w->points[below(w, w->npoints)];
  return n;
}

static void set_random_latency(uint64_t *rng, rig_device_t *d) {
  const rig_sim_inject_t *inj = rig_device_capability(d, RIG_SIM_INJECT_KEY);
  CHECK(inj != NULL, "%s has no %s capability", rig_device_name(d), RIG_SIM_INJECT_KEY);
  inj->set_latency_us(inj->device, (int64_t)(next_random(rng) % (MAX_LATENCY_US + 1)));
}

/* Makes buffer slot i anew: a random size on a random device and kind,
 * filled with a random byte (its first contents are unspecified). */
static void make_buffer(worker_t *w, int i) {
  modeled_t *m = &w->bufs[i];
  rig_device_t *d = devices[below(w, SIMS + 1)];
  rig_memory_t kind = d != rig_host() && below(w, 3) == 0 ? RIG_MEMORY_PINNED : RIG_MEMORY_DEVICE;
  m->bytes = 1 + below(w, MAX_BYTES);
  CHECK_OK(rig_buffer_create(d, m->bytes, kind, &m->buffer));
  m->model = realloc(m->model, (size_t)m->bytes);
  CHECK(m->model != NULL, "out of memory");
  uint8_t c = (uint8_t)below(w, 256);
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_fill(m->buffer, c, NULL, 0, &p));
  memset(m->model, c, (size_t)m->bytes);
  keep_point(w, p);
}

/* A random view of buffer slot i: *first and *length receive its range;
 * the whole buffer half of the time. */
static rig_buffer_t *random_view(worker_t *w, int i, int64_t *first, int64_t *length) {
  modeled_t *m = &w->bufs[i];
  if (below(w, 2) == 0) {
    *first = 0;
    *length = m->bytes;
    return rig_buffer_ref(m->buffer);
  }
  *first = below(w, m->bytes);
  *length = 1 + below(w, m->bytes - *first);
  rig_buffer_t *v = NULL;
  CHECK_OK(rig_buffer_view(m->buffer, *first, *length, &v));
  return v;
}

/* Reads buffer slot i back through the host and compares it with its model. */
static void check_buffer(worker_t *w, int i, const char *when) {
  modeled_t *m = &w->bufs[i];
  uint8_t *got = malloc((size_t)m->bytes);
  CHECK(got != NULL, "out of memory");
  CHECK_OK(rig_buffer_blit_to_bytes(m->buffer, 0, got, m->bytes, 0, m->bytes));
  for (int64_t k = 0; k < m->bytes; k++)
    CHECK(got[k] == m->model[k],
          "%s: thread %d, op %d, buffer %d on %s (%" PRId64 " bytes): byte %" PRId64 " is %u, the model's %u",
          when, w->id, w->op, i, rig_device_name(rig_buffer_device(m->buffer)), m->bytes, k, got[k],
          m->model[k]);
  free(got);
}

static void op_fill(worker_t *w) {
  int i = (int)below(w, BUFFERS);
  int64_t first, length;
  rig_buffer_t *v = random_view(w, i, &first, &length);
  uint8_t c = (uint8_t)below(w, 256);
  rig_point_t waits[2], p;
  size_t nwaits = random_waits(w, waits);
  CHECK_OK(rig_buffer_submit_fill(v, c, waits, nwaits, &p));
  memset(w->bufs[i].model + first, c, (size_t)length);
  rig_buffer_unref(v);
  keep_point(w, p);
}

/* A random box that fits a source of src_len bytes and a destination of
 * dst_len bytes (both at least 1): 1..4 rows, pitches of at least its
 * width, now and then no bytes at all. */
static rig_box_t random_box(worker_t *w, int64_t src_len, int64_t dst_len) {
  int64_t shorter = src_len < dst_len ? src_len : dst_len;
  rig_box_t b;
  b.width = below(w, 16) == 0 ? 0 : 1 + below(w, shorter);
  b.rows = 1 + below(w, 4);
  int64_t span = b.width > 0 ? b.width : 1;
  /* The largest pitch with which the rows fit each side; one row where
   * even pitches of the width do not fit. */
  int64_t max_src_pitch = b.rows > 1 ? (src_len - span) / (b.rows - 1) : span;
  int64_t max_dst_pitch = b.rows > 1 ? (dst_len - span) / (b.rows - 1) : span;
  if (max_src_pitch < span || max_dst_pitch < span) {
    b.rows = 1;
    max_src_pitch = max_dst_pitch = span;
  }
  b.src_pitch = span + below(w, max_src_pitch - span + 1);
  b.dst_pitch = span + below(w, max_dst_pitch - span + 1);
  b.src_offset = below(w, src_len - ((b.rows - 1) * b.src_pitch + span) + 1);
  b.dst_offset = below(w, dst_len - ((b.rows - 1) * b.dst_pitch + span) + 1);
  return b;
}

static void apply_box(const uint8_t *src, uint8_t *dst, const rig_box_t *b) {
  for (int64_t r = 0; r < b->rows; r++)
    memmove(dst + b->dst_offset + r * b->dst_pitch, src + b->src_offset + r * b->src_pitch, (size_t)b->width);
}

static void op_copy(worker_t *w) {
  int s = (int)below(w, BUFFERS);
  int d = (int)((s + 1 + below(w, BUFFERS - 1)) % BUFFERS);
  int64_t src_first, src_len, dst_first, dst_len;
  rig_buffer_t *src = random_view(w, s, &src_first, &src_len);
  rig_buffer_t *dst = random_view(w, d, &dst_first, &dst_len);
  rig_box_t boxes[MAX_BOXES];
  size_t nboxes = 1 + (size_t)below(w, MAX_BOXES);
  for (size_t k = 0; k < nboxes; k++) boxes[k] = random_box(w, src_len, dst_len);
  rig_point_t waits[2], p;
  size_t nwaits = random_waits(w, waits);
  CHECK_OK(rig_buffer_submit_copy(src, dst, boxes, nboxes, waits, nwaits, &p));
  /* Box after box: a byte two boxes write holds the later box's. */
  for (size_t k = 0; k < nboxes; k++)
    apply_box(w->bufs[s].model + src_first, w->bufs[d].model + dst_first, &boxes[k]);
  rig_buffer_unref(src);
  rig_buffer_unref(dst);
  keep_point(w, p);
}

static void op_recreate(worker_t *w) {
  int i = (int)below(w, BUFFERS);
  rig_buffer_unref(w->bufs[i].buffer);
  make_buffer(w, i);
}

static void op_wait(worker_t *w) {
  if (w->npoints == 0) return;
  CHECK_OK(rig_point_wait(w->points[below(w, w->npoints)]));
}

static void *run_worker(void *arg) {
  worker_t *w = arg;
  for (int i = 0; i < BUFFERS; i++) make_buffer(w, i);
  for (w->op = 0; w->op < OPS; w->op++) {
    int64_t r = below(w, 100);
    if (r < 35)
      op_fill(w);
    else if (r < 70)
      op_copy(w);
    else if (r < 78)
      check_buffer(w, (int)below(w, BUFFERS), "mid-run");
    else if (r < 88)
      op_recreate(w);
    else if (r < 98)
      op_wait(w);
    else
      set_random_latency(&w->rng, sims[below(w, SIMS)]);
  }
  for (int i = 0; i < BUFFERS; i++) {
    check_buffer(w, i, "final");
    rig_buffer_unref(w->bufs[i].buffer);
    free(w->bufs[i].model);
  }
  /* The work of buffers released along the way may still run: their
   * memory is collected only once it is done (RECL-05). */
  for (size_t i = 0; i < w->nall; i++) CHECK_OK(rig_point_wait(w->all_points[i]));
  free(w->all_points);
  return NULL;
}

int main(void) {
  uint64_t seed = 0x5eed5eed12345ULL;
  const char *env = getenv("RIG_STRESS_SEED");
  if (env) seed = strtoull(env, NULL, 0);
  printf("stress_sim_model: seed %" PRIu64 "\n", seed);
  fflush(stdout);

  uint64_t rng = seed | 1;
  for (int i = 0; i < SIMS; i++) {
    char name[16];
    snprintf(name, sizeof name, "SIM:%d", 90 + i);
    rig_open_options_t opts = {sizeof opts, "latency_us=0"};
    CHECK_OK(rig_open(name, &opts, &sims[i]));
    set_random_latency(&rng, sims[i]);
    devices[i] = sims[i];
  }
  devices[SIMS] = rig_host();
  int64_t start[SIMS + 1];
  for (int i = 0; i <= SIMS; i++) start[i] = rig_allocated(devices[i]);

  worker_t workers[THREADS];
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++) {
    memset(&workers[t], 0, sizeof workers[t]);
    workers[t].id = t;
    /* At most one point for each operation and each buffer made. */
    workers[t].all_points = malloc(sizeof(rig_point_t) * (OPS + BUFFERS));
    CHECK(workers[t].all_points != NULL, "out of memory");
    workers[t].rng = (seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(t + 1)) | 1;
    CHECK(pthread_create(&threads[t], NULL, run_worker, &workers[t]) == 0, "pthread_create");
  }
  for (int t = 0; t < THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0, "pthread_join");

  /* Everything released: each device holds what it held at the start once
   * its caches are freed (the sim devices' first: their Pinned memory
   * counts in the host's budget). */
  for (int i = 0; i <= SIMS; i++) CHECK_OK(rig_free_cache(devices[i]));
  for (int i = 0; i <= SIMS; i++)
    CHECK(rig_allocated(devices[i]) == start[i], "%s holds %" PRId64 " bytes, %" PRId64 " at the start",
          rig_device_name(devices[i]), rig_allocated(devices[i]), start[i]);
  for (int i = 0; i < SIMS; i++) CHECK_OK(rig_close(sims[i]));
  printf("stress_sim_model: %d threads x %d operations match the model\n", THREADS, OPS);
  return 0;
}
