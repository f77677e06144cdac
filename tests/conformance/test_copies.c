/* Conformance: copies, fills and blits (rig-buffer.txt, Copying) and the
 * Order rules of rig.txt that copies exercise.
 *
 * Asserted here: INTRO-23; ORD-01, ORD-07, ORD-08, ORD-14, ORD-21, ORD-27,
 * ORD-29; WORD-05, WORD-06; COPY-01, COPY-02, COPY-03, COPY-05, COPY-17,
 * COPY-18, COPY-35, COPY-36, COPY-39, COPY-41, COPY-42, COPY-45 .. COPY-59,
 * COPY-62, COPY-63, COPY-77, COPY-79, COPY-80, COPY-82, COPY-83,
 * COPY-86, COPY-87, COPY-88, COPY-90, COPY-91, COPY-92, COPY-94, COPY-99,
 * COPY-101, COPY-102.  Where copies meet a lost device it also touches
 * LOSS-13 and LMEM-06 (rig.txt, Loss).
 * COPY-05, COPY-39, COPY-55 and COPY-94 are checked only on a device whose
 * memory the host does not address (SIM, GPUs); elsewhere the host copies.
 * COPY-17, COPY-18, COPY-53, COPY-54 and COPY-91 are written for any device:
 * where the host copies before the call returns they pass trivially, on an
 * asynchronous device they test what the rule says.
 *
 * Not reached here, and why:
 * - COPY-15, COPY-16, COPY-19 .. COPY-34, COPY-37, COPY-73: staging memory.
 *   Only a device whose memory the host does not address stages, and rig.h
 *   shows no staging allocation (how many, where bytes go, when they
 *   return): not reachable on memory devices; covered by the sim suite.
 * - COPY-10 .. COPY-14: direct copies between peers, through another
 *   driver's Pinned memory or through a borrow, versus staging: not
 *   observable through rig.h, and memory devices never copy (the host
 *   does); sim suite.
 * - COPY-04, COPY-07, COPY-08, COPY-09, COPY-38, COPY-65, COPY-75, COPY-93,
 *   COPY-100: io devices; rig.h has no io device yet.
 * - COPY-06, COPY-60: devices of another machine (proxy).
 * - COPY-40: a borrow on a device that runs no copy, of memory the host does
 *   not address: needs a non-host-addressed device; sim suite.
 * - COPY-43, COPY-44, COPY-78: claims and Buffer.free: Core II, not in rig.h.
 * - COPY-61, COPY-84, COPY-89, COPY-95: dead buffers: only Claim.consume
 *   kills a buffer (Core II), rig.h has no call that does.
 * - COPY-64, COPY-85, COPY-96: a Read-only buffer: no call of rig.h makes
 *   one (Core II claims / io devices).
 * - COPY-66, COPY-97: memory held exclusive: Core II claims.
 * - COPY-67, COPY-98: two sides no device can copy between: the host and
 *   memory devices reach each other.
 * - COPY-68: a row no submission of the driver takes: needs a driver with a
 *   submission size limit; sim suite.
 * - COPY-69, COPY-70, COPY-71, COPY-76, COPY-81, COPY-103: a device lost
 *   during a copy's transfers or wait: needs fault injection; sim suite.
 * - COPY-72 (and COPY-99's case of it): a wait on a point that a lost device
 *   never reached.  A memory device reaches each value before submit
 *   returns and close waits for the rest, and rig_point_make of a value
 *   never assigned answers RIG_EINVAL; needs fault injection: sim suite.
 * - COPY-74: queue growth without memory: sim suite.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <rig/service.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "devices.h"
#include "helpers.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

/* The devices a test runs on: place 0 is the host, place k the test device
 * k - 1 (which wraps, so places 1 and 2 exist whatever the list). */
static int place_count(void) { return test_device_count() + 1; }
static rig_device_t *place(int k) { return k == 0 ? rig_host() : test_device(k - 1); }

/* Bytes that vary with their index and the seed, so that a byte copied
 * from or to the wrong place shows. */
static void make_pattern(uint8_t *p, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 131 + (i >> 8) * 7 + seed * 59 + 1);
}

static void put_bytes(rig_buffer_t *b, const uint8_t *bytes) {
  int64_t n = rig_buffer_bytes(b);
  CHECK_OK(rig_buffer_blit_from_bytes(bytes, n, 0, b, 0, n));
}

static void get_bytes(rig_buffer_t *b, uint8_t *bytes) {
  int64_t n = rig_buffer_bytes(b);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, bytes, n, 0, n));
}

/* A buffer of n bytes on d holding the pattern of seed, which *bytes (if not
 * NULL) receives. */
static rig_buffer_t *new_patterned(rig_device_t *d, int64_t n, unsigned seed, uint8_t *bytes) {
  uint8_t *p = bytes ? bytes : allocate_bytes(n);
  make_pattern(p, n, seed);
  rig_buffer_t *b = create(d, n);
  put_bytes(b, p);
  if (!bytes) free(p);
  return b;
}

__attribute__((format(printf, 4, 5))) static void
expect_same(const uint8_t *got, const uint8_t *want, int64_t n, const char *fmt, ...) {
  int64_t i = 0;
  while (i < n && got[i] == want[i]) i++;
  if (i == n) return;
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  cr_expect_fail("%s: byte %lld is 0x%02x, want 0x%02x", what, (long long)i, got[i], want[i]);
}

/* Reads b (a blit, ordered after b's writes) and compares it with want. */
#define expect_buffer(b, want, ...)                                   \
  do {                                                                \
    int64_t n_ = rig_buffer_bytes(b);                                 \
    uint8_t *got_ = allocate_bytes(n_);                               \
    get_bytes((b), got_);                                             \
    expect_same(got_, (want), n_, __VA_ARGS__);                       \
    free(got_);                                                       \
  } while (0)

static void expect_all(rig_buffer_t *b, uint8_t c, const char *what) {
  int64_t n = rig_buffer_bytes(b);
  uint8_t *want = allocate_bytes(n);
  memset(want, c, (size_t)n);
  expect_buffer(b, want, "%s", what);
  free(want);
}

static bool point_on_host(rig_point_t p) {
  return rig_device_equal(rig_point_device(p), rig_host());
}

/* Applies boxes to dst as the spec states: row i of box k from
 * src_offset + i*src_pitch to dst_offset + i*dst_pitch, box after box. */
static void model_boxes(uint8_t *dst, const uint8_t *src, const rig_box_t *boxes, size_t n) {
  for (size_t k = 0; k < n; k++) {
    const rig_box_t *b = &boxes[k];
    if (b->width == 0 || b->rows == 0) continue;
    for (int64_t i = 0; i < b->rows; i++)
      memcpy(dst + b->dst_offset + i * b->dst_pitch, src + b->src_offset + i * b->src_pitch,
             (size_t)b->width);
  }
}

/* A source and a destination buffer with patterns, and what each holds. */
struct copy_pair {
  rig_buffer_t *src, *dst;
  uint8_t *src_bytes, *dst_bytes;
  char name[96];
};

static void pair_open(struct copy_pair *c, int src_place, int64_t src_len, int dst_place,
                      int64_t dst_len) {
  c->src_bytes = allocate_bytes(src_len);
  c->dst_bytes = allocate_bytes(dst_len);
  c->src = new_patterned(place(src_place), src_len, 1, c->src_bytes);
  c->dst = new_patterned(place(dst_place), dst_len, 2, c->dst_bytes);
  snprintf(c->name, sizeof c->name, "%s -> %s", rig_device_name(place(src_place)),
           rig_device_name(place(dst_place)));
}

static void pair_close(struct copy_pair *c) {
  rig_buffer_unref(c->src);
  rig_buffer_unref(c->dst);
  free(c->src_bytes);
  free(c->dst_bytes);
}

/* The pairs of places box tests copy between: host to a device, a device
 * to another, a device to the host, within one device. */
static const int pair_places[][2] = {{0, 1}, {1, 2}, {2, 0}, {1, 1}, {0, 0}};
#define NPAIRS (sizeof pair_places / sizeof pair_places[0])

/* ------------------------------------------------------------------------ */
/* Round trip and order                                                     */

/* INTRO-23, COPY-82, COPY-87, COPY-42: blit in, blit back, no explicit
 * synchronisation, on every device. */
Test(copies, round_trip_hello_on_every_device) {
  for (int k = 0; k < place_count(); k++) {
    rig_device_t *d = place(k);
    rig_buffer_t *dev = create(d, 5);
    CHECK_OK(rig_buffer_blit_from_bytes("hello", 5, 0, dev, 0, 5));
    char b[6] = "xxxxx";
    CHECK_OK(rig_buffer_blit_to_bytes(dev, 0, b, 5, 0, 5));
    cr_expect(memcmp(b, "hello", 5) == 0, "%s: round trip gave \"%s\"", rig_device_name(d), b);
    rig_buffer_unref(dev);
  }
}

struct read_check {
  const uint8_t *want;
  int64_t mismatch; /* first differing byte, or -1 */
};

static int compare_bytes(void *bytes, int64_t n, void *context) {
  struct read_check *c = context;
  const uint8_t *got = bytes;
  c->mismatch = -1;
  for (int64_t i = 0; i < n; i++)
    if (got[i] != c->want[i]) {
      c->mismatch = i;
      break;
    }
  return 0;
}

/* COPY-01, COPY-02, COPY-77, ORD-01, ORD-07, ORD-08, ORD-14, ORD-21:
 * host -> dev0 -> dev1 -> host, byte for byte, first with copy (each waits),
 * then with submit_copy and no wait at all: each copy follows the last
 * write of its source through the stamps, and the final host read follows
 * the whole chain. */
Test(copies, chain_host_dev0_dev1_host) {
  const int64_t n = 65536 + 3;
  uint8_t *want = allocate_bytes(n);
  for (int waiting = 1; waiting >= 0; waiting--) {
    rig_buffer_t *h1 = new_patterned(rig_host(), n, 10 + (unsigned)waiting, want);
    rig_buffer_t *d0 = create(test_device(0), n);
    rig_buffer_t *d1 = create(test_device(1), n);
    rig_buffer_t *h2 = create(rig_host(), n);
    CHECK_OK(rig_buffer_fill(h2, 0), "fill h2");
    rig_buffer_t *chain[] = {h1, d0, d1, h2};
    for (int i = 0; i < 3; i++) {
      if (waiting) {
        CHECK_OK(rig_buffer_copy(chain[i], chain[i + 1]));
      } else {
        rig_box_t row = rig_row(0, 0, n);
        rig_point_t p;
        CHECK_OK(rig_buffer_submit_copy(chain[i], chain[i + 1], &row, 1, NULL, 0, &p));
      }
    }
    struct read_check check = {want, -2};
    CHECK_OK(rig_buffer_read(h2, 1, compare_bytes, &check));
    cr_expect(check.mismatch == -1, "%s chain: end differs at byte %lld",
              waiting ? "copy" : "submit_copy", (long long)check.mismatch);
    expect_buffer(d0, want, "%s chain: %s", waiting ? "copy" : "submit_copy",
                  rig_device_name(test_device(0)));
    expect_buffer(d1, want, "%s chain: %s", waiting ? "copy" : "submit_copy",
                  rig_device_name(test_device(1)));
    for (int i = 0; i < 4; i++) rig_buffer_unref(chain[i]);
  }
  free(want);
}

/* ORD-07, ORD-14, ORD-21, ORD-27, COPY-01, COPY-35: a copy on dev1's side
 * that reads a dev0 buffer follows the fill that wrote it, with no wait
 * between submit_fill and submit_copy. */
Test(copies, copy_follows_fill_on_other_device) {
  const int64_t n = 4099;
  rig_buffer_t *a = create(test_device(0), n);
  rig_buffer_t *b = create(test_device(1), n);
  CHECK_OK(rig_buffer_fill(a, 0x11), "fill a");
  CHECK_OK(rig_buffer_fill(b, 0x00), "fill b");
  rig_point_t fill_point, copy_point;
  CHECK_OK(rig_buffer_submit_fill(a, 0xA5, NULL, 0, &fill_point));
  rig_box_t row = rig_row(0, 0, n);
  CHECK_OK(rig_buffer_submit_copy(a, b, &row, 1, NULL, 0, &copy_point));
  expect_all(b, 0xA5, "copy after fill: destination");
  expect_all(a, 0xA5, "copy after fill: source");
  rig_buffer_unref(a);
  rig_buffer_unref(b);
}

enum writer { WRITE_FILL, WRITE_BLIT, WRITE_COPY, NWRITERS };
static const char *const writer_names[] = {"submit_fill", "blit_from_bytes", "submit_copy"};

/* ORD-08, ORD-14, ORD-27, COPY-01, COPY-02, COPY-35: after submit_copy
 * a -> b, a write of a (fill, blit or copy, with no wait in between) follows
 * the copy's read: b keeps a's old bytes. */
Test(copies, write_follows_earlier_copy) {
  const int64_t n = 4099;
  uint8_t *old = allocate_bytes(n);
  uint8_t *ee = allocate_bytes(n);
  memset(ee, 0xEE, (size_t)n);
  for (int w = 0; w < NWRITERS; w++) {
    rig_buffer_t *a = new_patterned(test_device(0), n, 3 + (unsigned)w, old);
    rig_buffer_t *b = create(test_device(1), n);
    rig_buffer_t *c = create(test_device(1), n);
    CHECK_OK(rig_buffer_fill(b, 0), "fill b");
    CHECK_OK(rig_buffer_fill(c, 0xEE), "fill c");
    rig_box_t row = rig_row(0, 0, n);
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_copy(a, b, &row, 1, NULL, 0, &p), "submit_copy a -> b");
    switch (w) {
    case WRITE_FILL:
      CHECK_OK(rig_buffer_submit_fill(a, 0xEE, NULL, 0, &p), "submit_fill a");
      break;
    case WRITE_BLIT:
      CHECK_OK(rig_buffer_blit_from_bytes(ee, n, 0, a, 0, n), "blit_from_bytes a");
      break;
    case WRITE_COPY:
      CHECK_OK(rig_buffer_submit_copy(c, a, &row, 1, NULL, 0, &p), "submit_copy c -> a");
      break;
    }
    expect_buffer(b, old, "%s after the copy: the copy's destination", writer_names[w]);
    expect_buffer(a, ee, "%s after the copy: the written source", writer_names[w]);
    rig_buffer_unref(a);
    rig_buffer_unref(b);
    rig_buffer_unref(c);
  }
  free(old);
  free(ee);
}

struct fill_job {
  rig_buffer_t *b;
  uint8_t c;
  rig_point_t point;
  rig_status_t status;
};

static void *fill_in_thread(void *arg) {
  struct fill_job *job = arg;
  job->status = rig_buffer_submit_fill(job->b, job->c, NULL, 0, &job->point);
  return NULL;
}

/* ORD-29, ORD-27: work another thread submitted on a device is ordered
 * before work this thread submits there after it returned: the later
 * point's value is higher, reaching it reaches the earlier one, and a copy
 * reads what the other thread's fill wrote. */
Test(copies, device_order_across_threads) {
  const int64_t n = 1000;
  for (int k = 0; k < test_device_count(); k++) {
    rig_device_t *d = test_device(k);
    rig_buffer_t *a = create(d, n);
    rig_buffer_t *b = create(d, n);
    CHECK_OK(rig_buffer_fill(a, 0), "fill a");
    struct fill_job job = {a, 0x61, {0}, RIG_EINVAL};
    pthread_t t;
    cr_assert(pthread_create(&t, NULL, fill_in_thread, &job) == 0, "pthread_create");
    pthread_join(t, NULL);
    CHECK_OK(job.status, "submit_fill from another thread");
    rig_box_t row = rig_row(0, 0, n);
    rig_point_t later;
    CHECK_OK(rig_buffer_submit_copy(a, b, &row, 1, NULL, 0, &later));
    if (!point_on_host(job.point) && rig_device_equal(rig_point_device(job.point),
                                                      rig_point_device(later))) {
      cr_expect(rig_point_value(job.point) < rig_point_value(later),
                "%s: later work got value %llu, not above %llu", rig_device_name(d),
                (unsigned long long)rig_point_value(later),
                (unsigned long long)rig_point_value(job.point));
      CHECK_OK(rig_point_wait(later));
      cr_expect(point_reached(job.point), "%s: the other thread's fill is not reached",
                rig_device_name(d));
    }
    expect_all(b, 0x61, rig_device_name(d));
    rig_buffer_unref(a);
    rig_buffer_unref(b);
  }
}

/* ------------------------------------------------------------------------ */
/* Boxes                                                                     */

/* COPY-45, COPY-51, COPY-52, COPY-41: multi-row boxes with pitches larger
 * than the width, contiguous rows, a row ending on each side's last byte,
 * and a later box whose rows overlap an earlier one's in dst. */
Test(copies, boxes_copy_rows_box_after_box) {
  const rig_box_t boxes[] = {
      {3, 5, 13, 4, 37, 29},    /* src ends 127, dst ends 105 */
      {150, 10, 20, 3, 20, 29}, /* its dst rows overlap the first box's */
      {200, 120, 8, 5, 8, 8},   /* pitch == width */
      {250, 194, 6, 1, 6, 6},   /* ends on the last byte of each side */
      {INT64_MAX, INT64_MAX, 0, 7, 0, 0},
      rig_row(0, 100, 4),
  };
  const size_t nboxes = sizeof boxes / sizeof boxes[0];
  for (size_t k = 0; k < NPAIRS; k++) {
    struct copy_pair c;
    pair_open(&c, pair_places[k][0], 256, pair_places[k][1], 200);
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_copy(c.src, c.dst, boxes, nboxes, NULL, 0, &p), "%s", c.name);
    CHECK_OK(rig_point_wait(p));
    bool done = false;
    CHECK_OK(rig_buffer_reached(c.dst, RIG_ACCESS_READ, &done));
    cr_expect(done, "%s: dst still has a write pending once the copy's point is reached",
              c.name);
    model_boxes(c.dst_bytes, c.src_bytes, boxes, nboxes);
    expect_buffer(c.dst, c.dst_bytes, "%s: boxes", c.name);
    expect_buffer(c.src, c.src_bytes, "%s: source after boxes", c.name);
    pair_close(&c);
  }
}

/* A source of 64 bytes and a destination of 48: boxes that do not fit. */
#define MISFIT_SRC 64
#define MISFIT_DST 48
#define HUGE_ROWS ((INT64_C(1) << 62) + 1) /* (rows - 1) * 4 wraps to 0 */
static const struct {
  const char *why;
  rig_box_t box;
} misfits[] = {
    /* COPY-46: negative fields, pitch under width */
    {"negative src_offset", {-1, 0, 4, 1, 4, 4}},
    {"negative dst_offset", {0, -1, 4, 1, 4, 4}},
    {"negative width", {0, 0, -1, 1, 4, 4}},
    {"negative rows", {0, 0, 4, -1, 4, 4}},
    {"negative src_pitch", {0, 0, 4, 1, -4, 4}},
    {"negative dst_pitch", {0, 0, 4, 1, 4, -4}},
    {"INT64_MIN src_offset", {INT64_MIN, 0, 4, 1, 4, 4}},
    {"negative offset of an empty box", {-8, 0, 0, 0, 0, 0}},
    {"negative rows with width 0", {0, 0, 0, -1, 0, 0}},
    {"src_pitch under width", {0, 0, 8, 2, 7, 8}},
    {"dst_pitch under width", {0, 0, 8, 2, 8, 7}},
    {"pitch under width in a one-row box", {0, 0, 8, 1, 4, 8}},
    {"pitch under width in a box of no rows", {0, 0, 8, 0, 8, 4}},
    /* COPY-47: the last row ends past a side */
    {"one row one byte past the source", {60, 0, 5, 1, 5, 5}},
    {"one row one byte past the destination", {0, 44, 5, 1, 5, 5}},
    {"last row one byte past the source", {1, 0, 4, 4, 20, 4}},
    {"last row one byte past the destination", {0, 1, 8, 3, 8, 20}},
    {"a row wider than both sides", {0, 0, 65, 1, 65, 65}},
    {"src_offset past the source with bytes", {64, 0, 1, 1, 1, 1}},
    /* COPY-48: the end overflows int64 */
    {"src_offset + width overflows", {INT64_MAX - 1, 0, 4, 1, 4, 4}},
    {"dst_offset + width overflows", {0, INT64_MAX - 1, 4, 1, 4, 4}},
    {"offset + width wraps to -2", {INT64_MAX, 0, INT64_MAX, 1, INT64_MAX, INT64_MAX}},
    {"(rows-1)*pitch wraps to 0", {0, 0, 4, HUGE_ROWS, 4, 4}},
    {"(rows-1)*pitch wraps negative", {0, 0, 1, INT64_MAX, 2, 2}},
    {"offset + (rows-1)*src_pitch overflows", {32, 0, 4, 2, INT64_MAX - 16, 4}},
    {"(rows-1)*dst_pitch + width overflows", {0, 0, 4, 2, 4, INT64_MAX}},
};

/* COPY-46, COPY-47, COPY-48, COPY-63: each misfit answers RIG_EINVAL, alone
 * or after a box that fits, and the destination keeps its bytes. */
Test(copies, boxes_that_do_not_fit) {
  const int places[][2] = {{0, 0}, {1, 2}};
  for (size_t k = 0; k < sizeof places / sizeof places[0]; k++) {
    struct copy_pair c;
    pair_open(&c, places[k][0], MISFIT_SRC, places[k][1], MISFIT_DST);
    for (size_t m = 0; m < sizeof misfits / sizeof misfits[0]; m++) {
      const rig_box_t alone[1] = {misfits[m].box};
      const rig_box_t after_good[2] = {rig_row(0, 0, 8), misfits[m].box};
      rig_point_t p;
      CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(c.src, c.dst, alone, 1, NULL, 0, &p), "%s: %s",
                  c.name, misfits[m].why);
      CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(c.src, c.dst, after_good, 2, NULL, 0, &p),
                  "%s: %s after a good box", c.name, misfits[m].why);
      expect_buffer(c.dst, c.dst_bytes, "%s: dst after refused box (%s)", c.name,
                    misfits[m].why);
    }
    pair_close(&c);
  }
}

/* COPY-49, COPY-47: boxes with no bytes fit whatever their offsets; boxes
 * whose last row ends exactly at a side's end fit. */
Test(copies, empty_and_exactly_fitting_boxes) {
  const rig_box_t boxes[] = {
      {INT64_MAX, INT64_MAX, 0, 5, 0, 0},       /* width 0 */
      {INT64_MAX, 1000, 16, 0, 16, 16},         /* rows 0 */
      {INT64_MAX, INT64_MAX, 0, 0, 0, 0},       /* neither */
      {0, 0, 0, INT64_MAX, INT64_MAX, INT64_MAX}, /* width 0, huge rows */
      {0, 0, 4, 4, 20, 4},                      /* src ends at 64 */
      {0, 0, 8, 3, 8, 20},                      /* dst ends at 48 */
  };
  const size_t nboxes = sizeof boxes / sizeof boxes[0];
  for (size_t k = 0; k < NPAIRS; k++) {
    struct copy_pair c;
    pair_open(&c, pair_places[k][0], MISFIT_SRC, pair_places[k][1], MISFIT_DST);
    for (size_t i = 0; i < nboxes; i++) {
      rig_point_t p;
      rig_status_t s = rig_buffer_submit_copy(c.src, c.dst, &boxes[i], 1, NULL, 0, &p);
      cr_expect(s == RIG_OK, "%s: box %zu refused: %s (%s)", c.name, i, rig_status_name(s),
                rig_last_error());
      if (s == RIG_OK) model_boxes(c.dst_bytes, c.src_bytes, &boxes[i], 1);
    }
    expect_buffer(c.dst, c.dst_bytes, "%s: empty and exact boxes", c.name);
    pair_close(&c);
  }
}

/* COPY-50: rig_row is one row of n bytes with both pitches n. */
Test(copies, row_is_one_row_box) {
  const int64_t args[][3] = {{0, 0, 0}, {0, 0, 17}, {3, 5, 7}, {INT64_MAX, 0, 1}};
  for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
    rig_box_t b = rig_row(args[i][0], args[i][1], args[i][2]);
    cr_expect(b.src_offset == args[i][0] && b.dst_offset == args[i][1] &&
                  b.width == args[i][2] && b.rows == 1 && b.src_pitch == args[i][2] &&
                  b.dst_pitch == args[i][2],
              "rig_row(%lld, %lld, %lld) = {%lld, %lld, %lld, %lld, %lld, %lld}",
              (long long)args[i][0], (long long)args[i][1], (long long)args[i][2],
              (long long)b.src_offset, (long long)b.dst_offset, (long long)b.width,
              (long long)b.rows, (long long)b.src_pitch, (long long)b.dst_pitch);
  }
}

/* COPY-54: submit_copy reads the boxes once: scribbling over the array
 * right after the call does not change what the copy writes. */
Test(copies, boxes_are_read_once) {
  for (size_t k = 0; k < NPAIRS; k++) {
    struct copy_pair c;
    pair_open(&c, pair_places[k][0], 4096, pair_places[k][1], 4096);
    rig_box_t boxes[2] = {{1, 2, 500, 6, 600, 640}, rig_row(3900, 3800, 196)};
    const rig_box_t original[2] = {boxes[0], boxes[1]};
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_copy(c.src, c.dst, boxes, 2, NULL, 0, &p), "%s", c.name);
    for (int i = 0; i < 2; i++) boxes[i] = rig_row(0, 0, 4096);
    CHECK_OK(rig_point_wait(p));
    model_boxes(c.dst_bytes, c.src_bytes, original, 2);
    expect_buffer(c.dst, c.dst_bytes, "%s: boxes changed after the call", c.name);
    pair_close(&c);
  }
}

/* ------------------------------------------------------------------------ */
/* Who copies                                                                */

struct timelines {
  uint64_t host, dev0, dev1;
};

static struct timelines read_timelines(void) {
  return (struct timelines){rig_submitted(rig_host()), rig_submitted(test_device(0)),
                            rig_submitted(test_device(1))};
}

/* TL-04: a copy or fill the host makes takes the host's next value, and
 * only that: no other device's timeline moves (COPY-03). */
static void expect_host_value_only(struct timelines before, rig_point_t p, const char *what) {
  struct timelines now = read_timelines();
  cr_expect(rig_point_value(p) == now.host, "%s: the point is not the host's last value", what);
  cr_expect(now.host == before.host + 1 && now.dev0 == before.dev0 && now.dev1 == before.dev1,
            "%s: host %llu -> %llu (one value expected), dev0 %llu -> %llu, dev1 %llu -> %llu",
            what, (unsigned long long)before.host, (unsigned long long)now.host,
            (unsigned long long)before.dev0, (unsigned long long)now.dev0,
            (unsigned long long)before.dev1, (unsigned long long)now.dev1);
}

static void expect_reached_host_point(rig_point_t p, const char *what) {
  cr_expect(point_on_host(p), "%s: the point is not the host's", what);
  cr_expect(point_reached(p), "%s: the host point is not reached on return", what);
}

/* COPY-03, COPY-57, COPY-36, COPY-92, COPY-42, TL-04: where the host
 * addresses both sides (host memory, a memory device's), submit_copy and
 * submit_fill are done when they return, with a reached host point: the
 * host's next value, and no other device's timeline moves. */
Test(copies, host_addressed_copy_is_done_by_the_host) {
  enum { N = 3000, NPLACES = 3 };
  rig_buffer_t *bufs[NPLACES];
  for (int k = 0; k < NPLACES; k++) bufs[k] = create(place(k), N);
  uint8_t want[N];
  int tested = 0;
  for (int s = 0; s < NPLACES; s++)
    for (int d = 0; d < NPLACES; d++) {
      rig_buffer_t *src = bufs[s];
      rig_buffer_t *dst = s == d ? create(place(d), N) : rig_buffer_ref(bufs[d]);
      if (rig_buffer_host(src) && rig_buffer_host(dst)) {
        char name[96];
        snprintf(name, sizeof name, "%s -> %s", rig_device_name(place(s)),
                 rig_device_name(place(d)));
        make_pattern(want, N, (unsigned)(s * 3 + d));
        put_bytes(src, want);
        struct timelines before = read_timelines();
        rig_box_t row = rig_row(0, 0, N);
        rig_point_t p;
        CHECK_OK(rig_buffer_submit_copy(src, dst, &row, 1, NULL, 0, &p), "%s", name);
        /* read the memory itself: the copy must be over already */
        expect_same(rig_buffer_host(dst), want, N, "%s: bytes on return", name);
        expect_reached_host_point(p, name);
        expect_host_value_only(before, p, name);
        tested++;
      }
      rig_buffer_unref(dst);
    }
  cr_expect(tested > 0, "no pair of host-addressed buffers (the host's are)");
  for (int k = 0; k < NPLACES; k++) {
    if (!rig_buffer_host(bufs[k])) continue;
    struct timelines before = read_timelines();
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_fill(bufs[k], 0x3D, NULL, 0, &p));
    memset(want, 0x3D, N);
    expect_same(rig_buffer_host(bufs[k]), want, N, "%s: fill on return",
                rig_device_name(place(k)));
    expect_reached_host_point(p, rig_device_name(place(k)));
    expect_host_value_only(before, p, rig_device_name(place(k)));
  }
  for (int k = 0; k < NPLACES; k++) rig_buffer_unref(bufs[k]);
}

/* COPY-05, COPY-55, COPY-56, COPY-39, COPY-94: where a device copies (its
 * memory is not the host's to address), the copy takes that device's next
 * timeline value and its point is that value; a fill runs on the buffer's
 * device's copy engine likewise. */
Test(copies, device_copy_takes_next_timeline_value) {
  const int64_t n = 4096;
  int tested = 0;
  for (int k = 0; k < test_device_count(); k++) {
    rig_device_t *d = test_device(k);
    rig_buffer_t *x = new_patterned(d, n, 5, NULL);
    if (rig_buffer_host(x)) {
      rig_buffer_unref(x);
      continue;
    }
    tested++;
    rig_buffer_t *y = create(d, n);
    rig_buffer_t *h = new_patterned(rig_host(), n, 6, NULL);
    rig_box_t row = rig_row(0, 0, n);
    rig_point_t p;

    uint64_t before = rig_submitted(d);
    CHECK_OK(rig_buffer_submit_copy(x, y, &row, 1, NULL, 0, &p), "copy within the device");
    cr_expect(rig_submitted(d) == before + 1, "%s: a direct copy moved submitted %llu -> %llu",
              rig_device_name(d), (unsigned long long)before,
              (unsigned long long)rig_submitted(d));
    cr_expect(rig_device_equal(rig_point_device(p), d) && rig_point_value(p) == before + 1,
              "%s: the copy's point is not the device's next value", rig_device_name(d));

    before = rig_submitted(d);
    CHECK_OK(rig_buffer_submit_copy(h, y, &row, 1, NULL, 0, &p), "copy from the host");
    cr_expect(rig_device_equal(rig_point_device(p), d) && rig_point_value(p) > before &&
                  rig_point_value(p) == rig_submitted(d),
              "%s: a staged copy's point is not the device's last value", rig_device_name(d));

    before = rig_submitted(d);
    CHECK_OK(rig_buffer_submit_fill(y, 0x44, NULL, 0, &p));
    cr_expect(rig_device_equal(rig_point_device(p), d) && rig_point_value(p) == before + 1,
              "%s: a fill's point is not the device's next value", rig_device_name(d));
    expect_all(y, 0x44, rig_device_name(d));
    rig_buffer_unref(x);
    rig_buffer_unref(y);
    rig_buffer_unref(h);
  }
  if (tested == 0)
    cr_skip_test("%s", "the host addresses every test device's memory: the host copies "
                       "(COPY-03), no device does");
}

/* COPY-17: the source of a copy from host memory may change right after
 * submit_copy returns (staged, the host already moved the bytes; host-run,
 * the copy is done). */
Test(copies, host_source_may_change_after_submit) {
  const int64_t n = 1 << 20;
  uint8_t *want = allocate_bytes(n);
  for (int k = 0; k < place_count(); k++) {
    rig_device_t *d = place(k);
    rig_buffer_t *src = new_patterned(rig_host(), n, 7 + (unsigned)k, want);
    rig_buffer_t *dst = create(d, n);
    rig_box_t row = rig_row(0, 0, n);
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_copy(src, dst, &row, 1, NULL, 0, &p), "%s", rig_device_name(d));
    memset(rig_buffer_host(src), 0xFF, (size_t)n);
    CHECK_OK(rig_point_wait(p));
    expect_buffer(dst, want, "%s: source changed after submit_copy", rig_device_name(d));
    rig_buffer_unref(src);
    rig_buffer_unref(dst);
  }
  free(want);
}

/* COPY-18, COPY-59, COPY-57: a copy of this machine's device into host
 * memory (not through a borrow) returns with the bytes in place.  A device
 * of another machine (its capability RIG_MACHINE_DEVICE) queues such a copy
 * (COPY-60), whose bytes are in place once its point is reached. */
Test(copies, copy_into_host_memory_returns_with_its_bytes) {
  const int64_t n = 1 << 20;
  uint8_t *want = allocate_bytes(n);
  for (int k = 0; k < place_count(); k++) {
    rig_device_t *d = place(k);
    rig_buffer_t *src = new_patterned(d, n, 8 + (unsigned)k, want);
    rig_buffer_t *dst = create(rig_host(), n);
    CHECK_OK(rig_buffer_fill(dst, 0), "fill dst");
    rig_box_t row = rig_row(0, 0, n);
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_copy(src, dst, &row, 1, NULL, 0, &p), "%s", rig_device_name(d));
    bool of_another_machine = rig_device_capability(d, RIG_MACHINE_DEVICE) != NULL;
    if (of_another_machine) CHECK_OK(rig_point_wait(p));
    expect_same(rig_buffer_host(dst), want, n, "%s -> host: bytes %s", rig_device_name(d),
                of_another_machine ? "once its point is reached" : "on return");
    CHECK_OK(rig_point_wait(p));
    rig_buffer_unref(src);
    rig_buffer_unref(dst);
  }
  free(want);
}

/* ------------------------------------------------------------------------ */
/* Waits                                                                     */

/* A point that is reached only once a fill on test device 1 is done. */
static rig_point_t pending_fill(rig_buffer_t **keep) {
  *keep = create(test_device(1), 1 << 16);
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_fill(*keep, 0x42, NULL, 0, &p), "submit_fill for a wait");
  return p;
}

/* COPY-58: a copy of no bytes (no boxes, or only empty ones) waits on the
 * host for its waits and returns a reached host point; dst is untouched. */
Test(copies, copy_of_no_bytes_waits_and_returns_host_point) {
  const rig_box_t empty_boxes[] = {{INT64_MAX, 5, 0, 3, 0, 0}, {7, INT64_MAX, 9, 0, 9, 9}};
  const struct {
    const char *why;
    const rig_box_t *boxes;
    size_t n;
  } cases[] = {{"no boxes", empty_boxes, 0}, {"empty boxes", empty_boxes, 2}};
  for (size_t k = 0; k < NPAIRS; k++) {
    struct copy_pair c;
    pair_open(&c, pair_places[k][0], 64, pair_places[k][1], 64);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      rig_buffer_t *w;
      rig_point_t wait = pending_fill(&w);
      rig_point_t p;
      CHECK_OK(rig_buffer_submit_copy(c.src, c.dst, cases[i].boxes, cases[i].n, &wait, 1, &p), "%s",
               cases[i].why);
      expect_reached_host_point(p, cases[i].why);
      cr_expect(point_reached(wait), "%s, %s: returned before its wait was reached", c.name,
                cases[i].why);
      rig_buffer_unref(w);
    }
    expect_buffer(c.dst, c.dst_bytes, "%s: dst after copies of no bytes", c.name);
    pair_close(&c);
  }
}

/* COPY-53, COPY-91: submit_copy and submit_fill follow the points of their
 * waits: once their point is reached, so is each wait. */
Test(copies, copy_and_fill_follow_their_waits) {
  for (size_t k = 0; k < NPAIRS; k++) {
    struct copy_pair c;
    pair_open(&c, pair_places[k][0], 512, pair_places[k][1], 512);
    rig_buffer_t *w;
    rig_point_t wait = pending_fill(&w);
    rig_box_t row = rig_row(10, 20, 300);
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_copy(c.src, c.dst, &row, 1, &wait, 1, &p), "%s", c.name);
    CHECK_OK(rig_point_wait(p), "wait for the copy");
    cr_expect(point_reached(wait), "%s: copy reached before its wait", c.name);
    model_boxes(c.dst_bytes, c.src_bytes, &row, 1);
    expect_buffer(c.dst, c.dst_bytes, "%s: copy with waits", c.name);
    rig_buffer_unref(w);

    wait = pending_fill(&w);
    CHECK_OK(rig_buffer_submit_fill(c.dst, 0x27, &wait, 1, &p), "%s", c.name);
    CHECK_OK(rig_point_wait(p), "wait for the fill");
    cr_expect(point_reached(wait), "%s: fill reached before its wait", c.name);
    expect_all(c.dst, 0x27, c.name);
    rig_buffer_unref(w);
    pair_close(&c);
  }
}

/* LOSS-13, COPY-53: a point a lost device reached before its loss stays
 * reached, so a copy may wait on it.  COPY-80, COPY-86, COPY-90, COPY-99,
 * COPY-102: copy, the blits and the fills answer the Lost that a use of a
 * lost device's memory answers (LMEM-06), as submit_copy does. */
Test(copies, lost_device_points_and_memory) {
  rig_device_t *gone = NULL;
  CHECK_OK(rig_memory_device("MEM:47", &gone), "open MEM:47");
  rig_buffer_t *lost_mem = create(gone, 16);
  uint64_t last = rig_submitted(gone);
  CHECK_OK(rig_close(gone));
  const rig_point_t reached = rig_point_make(gone, last);
  struct copy_pair c;
  pair_open(&c, 1, 64, 2, 64);
  rig_box_t row = rig_row(0, 0, 64);
  rig_point_t p;

  CHECK_OK(rig_buffer_submit_copy(c.src, c.dst, &row, 1, &reached, 1, &p),
           "submit_copy waiting on a point reached before the loss");
  CHECK_OK(rig_point_wait(p));
  expect_buffer(c.dst, c.src_bytes, "copy after a reached point of a lost device");

  rig_buffer_t *h = new_patterned(rig_host(), 16, 17, NULL);
  uint8_t s[16] = {0};
  rig_box_t row16 = rig_row(0, 0, 16);
  CHECK_LOST(gone, rig_buffer_submit_copy(lost_mem, h, &row16, 1, NULL, 0, &p),
             "submit_copy from lost memory");
  CHECK_LOST(gone, rig_buffer_copy(lost_mem, h), "copy from lost memory");
  CHECK_LOST(gone, rig_buffer_copy(h, lost_mem), "copy into lost memory");
  CHECK_LOST(gone, rig_buffer_blit_from_bytes(s, 16, 0, lost_mem, 0, 16),
             "blit_from_bytes into lost memory");
  CHECK_LOST(gone, rig_buffer_blit_to_bytes(lost_mem, 0, s, 16, 0, 16),
             "blit_to_bytes from lost memory");
  CHECK_LOST(gone, rig_buffer_submit_fill(lost_mem, 1, NULL, 0, &p), "submit_fill of lost memory");
  CHECK_LOST(gone, rig_buffer_fill(lost_mem, 1), "fill of lost memory");
  rig_buffer_unref(h);
  rig_buffer_unref(lost_mem);
  pair_close(&c);
}

/* ------------------------------------------------------------------------ */
/* Refusals                                                                  */

/* WORD-06, WORD-05, COPY-62: views of one allocation that share a word but
 * no byte copy; sides that share a byte (views, the buffer itself, a view
 * and its buffer, a borrow) are refused, and nothing changes. */
Test(copies, views_sharing_a_word_copy_sharing_a_byte_refused) {
  for (int k = 0; k < place_count(); k++) {
    rig_device_t *d = place(k);
    const char *name = rig_device_name(d);
    uint8_t want[16];
    rig_buffer_t *b = new_patterned(d, 16, 9, want);

    rig_buffer_t *v01 = view(b, 0, 2), *v23 = view(b, 2, 2);
    cr_expect(rig_buffer_overlaps(v01, v23) && !rig_buffer_share_byte(v01, v23),
              "%s: views [0,2) and [2,4) should share a word and no byte", name);
    CHECK_OK(rig_buffer_copy(v01, v23), "copy [0,2) -> [2,4)");
    memcpy(want + 2, want + 0, 2);

    rig_buffer_t *v68 = view(b, 6, 3), *v911 = view(b, 9, 3);
    rig_box_t row = rig_row(0, 0, 3);
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_copy(v911, v68, &row, 1, NULL, 0, &p), "copy [9,12) -> [6,9)");
    CHECK_OK(rig_point_wait(p));
    memmove(want + 6, want + 9, 3);
    expect_buffer(b, want, "%s: copies between views sharing a word", name);

    rig_buffer_t *v03 = view(b, 0, 3), *v25 = view(b, 2, 3);
    cr_expect(rig_buffer_share_byte(v03, v25), "%s: [0,3) and [2,5) share byte 2", name);
    CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(v03, v25), "%s: copy [0,3) -> [2,5)", name);
    CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(v25, v03), "%s: copy [2,5) -> [0,3)", name);
    rig_box_t first_byte = rig_row(0, 0, 1); /* the box misses the shared byte */
    CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(v03, v25, &first_byte, 1, NULL, 0, &p),
                "%s: submit_copy between views sharing a byte", name);
    CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(b, b), "%s: copy of a buffer onto itself", name);
    CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(b, v25, &row, 1, NULL, 0, &p),
                "%s: copy from a buffer into its view", name);
    rig_buffer_t *borrow = NULL;
    CHECK_OK(rig_buffer_borrow(rig_host(), b, &borrow), "borrow on the host");
    if (borrow) {
      CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(borrow, b), "%s: copy from a borrow into its buffer",
                  name);
      CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(b, borrow, &row, 1, NULL, 0, &p),
                  "%s: copy from a buffer into its borrow", name);
      rig_buffer_unref(borrow);
    }
    expect_buffer(b, want, "%s: bytes after refused copies", name);

    rig_buffer_t *views[] = {v01, v23, v68, v911, v03, v25, b};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) rig_buffer_unref(views[i]);
  }
}

/* COPY-79, COPY-77: copy refuses sides of different lengths and changes
 * nothing; sides of equal length, empty ones included, copy. */
Test(copies, copy_lengths_must_match) {
  const int64_t lengths[][2] = {{16, 17}, {17, 16}, {0, 1}, {1, 0}};
  for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
    struct copy_pair c;
    pair_open(&c, 1, lengths[i][0], 2, lengths[i][1]);
    CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(c.src, c.dst), "copy of %lld bytes into %lld",
                (long long)lengths[i][0], (long long)lengths[i][1]);
    expect_buffer(c.src, c.src_bytes, "source after a refused copy");
    expect_buffer(c.dst, c.dst_bytes, "destination after a refused copy");
    pair_close(&c);
  }
  rig_buffer_t *e0 = create(test_device(0), 0), *e1 = create(test_device(1), 0);
  CHECK_OK(rig_buffer_copy(e0, e1), "copy between empty buffers");
  rig_buffer_unref(e0);
  rig_buffer_unref(e1);
}

/* rig.h: NULL sides, NULL boxes with boxes to read and NULL waits with
 * waits to read answer RIG_EINVAL, and nothing changes. */
Test(copies, null_arguments_refused) {
  struct copy_pair c;
  pair_open(&c, 1, 64, 2, 64);
  rig_box_t row = rig_row(0, 0, 8);
  rig_point_t p;
  uint8_t s[8] = {0};
  CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(NULL, c.dst, &row, 1, NULL, 0, &p),
              "submit_copy src NULL");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(c.src, NULL, &row, 1, NULL, 0, &p),
              "submit_copy dst NULL");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(c.src, c.dst, NULL, 1, NULL, 0, &p),
              "submit_copy boxes NULL, nboxes 1");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(c.src, c.dst, &row, 1, NULL, 2, &p),
              "submit_copy waits NULL, nwaits 2");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(NULL, c.dst), "copy src NULL");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(c.src, NULL), "copy dst NULL");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_fill(NULL, 1, NULL, 0, &p), "submit_fill NULL");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_fill(c.dst, 1, NULL, 1, &p),
              "submit_fill waits NULL, nwaits 1");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_fill(NULL, 1), "fill NULL");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_blit_from_bytes(s, 8, 0, NULL, 0, 8),
              "blit_from_bytes b NULL");
  CHECK_FAILS(RIG_EINVAL, rig_buffer_blit_to_bytes(NULL, 0, s, 8, 0, 8), "blit_to_bytes b NULL");
  expect_buffer(c.src, c.src_bytes, "source after refused calls");
  expect_buffer(c.dst, c.dst_bytes, "destination after refused calls");
  pair_close(&c);
}

/* ------------------------------------------------------------------------ */
/* Fills                                                                     */

/* COPY-91, COPY-101, COPY-42, COPY-35: submit_fill (read back with no wait)
 * and fill (done on return) set every byte, on every device. */
Test(copies, fill_sets_every_byte_on_every_device) {
  const int64_t n = 4099;
  uint8_t *want = allocate_bytes(n);
  for (int k = 0; k < place_count(); k++) {
    rig_device_t *d = place(k);
    rig_buffer_t *b = new_patterned(d, n, 11, NULL);
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_fill(b, 0x81, NULL, 0, &p), "%s", rig_device_name(d));
    expect_all(b, 0x81, rig_device_name(d));
    CHECK_OK(rig_buffer_fill(b, 0x7E), "%s", rig_device_name(d));
    memset(want, 0x7E, (size_t)n);
    if (rig_buffer_host(b))
      expect_same(rig_buffer_host(b), want, n, "%s: fill on return", rig_device_name(d));
    expect_buffer(b, want, "%s: fill", rig_device_name(d));
    rig_buffer_unref(b);
  }
  free(want);
}

/* COPY-91, COPY-101: a fill of a view sets the view's bytes only, also
 * where the view starts and ends inside words; an empty view or buffer
 * fills with nothing to set. */
Test(copies, fill_of_views_keeps_neighbours) {
  for (int k = 0; k < place_count(); k++) {
    rig_device_t *d = place(k);
    const char *name = rig_device_name(d);
    uint8_t want[64];
    rig_buffer_t *b = new_patterned(d, 64, 12, want);
    rig_buffer_t *v = view(b, 13, 21);   /* bytes 13 .. 33 */
    rig_buffer_t *one = view(b, 34, 1);  /* byte 34, in v's last word */
    rig_buffer_t *none = view(b, 40, 0);
    CHECK_OK(rig_buffer_fill(v, 0xC3), "fill view");
    rig_point_t p;
    CHECK_OK(rig_buffer_submit_fill(one, 0x3C, NULL, 0, &p), "submit_fill one-byte view");
    CHECK_OK(rig_buffer_fill(none, 0x99), "fill empty view");
    memset(want + 13, 0xC3, 21);
    want[34] = 0x3C;
    expect_buffer(b, want, "%s: fills of views", name);
    expect_all(v, 0xC3, name);

    rig_buffer_t *empty = create(d, 0);
    CHECK_OK(rig_buffer_fill(empty, 0x55), "fill empty buffer");
    CHECK_OK(rig_buffer_submit_fill(empty, 0x55, NULL, 0, &p), "submit_fill empty buffer");
    CHECK_OK(rig_point_wait(p), "wait for the empty fill");
    rig_buffer_t *all[] = {b, v, one, none, empty};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) rig_buffer_unref(all[i]);
  }
}

/* ------------------------------------------------------------------------ */
/* Blits                                                                     */

/* COPY-82, COPY-87: blits copy n bytes between offsets of both sides and
 * write nothing else; empty blits at either end are valid. */
Test(copies, blits_copy_the_ranges_they_name) {
  for (int k = 0; k < place_count(); k++) {
    rig_device_t *d = place(k);
    const char *name = rig_device_name(d);
    uint8_t want[40], s[32], out[32], expect_out[32];
    rig_buffer_t *b = new_patterned(d, 40, 13, want);
    make_pattern(s, 32, 14);
    CHECK_OK(rig_buffer_blit_from_bytes(s, 32, 5, b, 7, 11));
    memcpy(want + 7, s + 5, 11);
    CHECK_OK(rig_buffer_blit_from_bytes(s, 32, 0, b, 8, 32), "blit_from_bytes to the end");
    memcpy(want + 8, s, 32);
    CHECK_OK(rig_buffer_blit_from_bytes(s, 32, 32, b, 40, 0), "empty blit_from_bytes at ends");
    expect_buffer(b, want, "%s: blit_from_bytes", name);

    memset(out, 0xEE, sizeof out);
    memcpy(expect_out, out, sizeof out);
    CHECK_OK(rig_buffer_blit_to_bytes(b, 3, out, 32, 9, 13));
    memcpy(expect_out + 9, want + 3, 13);
    CHECK_OK(rig_buffer_blit_to_bytes(b, 40, out, 32, 32, 0), "empty blit_to_bytes at ends");
    expect_same(out, expect_out, 32, "%s: blit_to_bytes", name);
    rig_buffer_unref(b);
  }
}

/* Ranges against a buffer of 40 bytes and bytes of s_len. */
static const struct {
  const char *why;
  int64_t s_len, s_first, b_first, n;
} bad_ranges[] = {
    {"negative s_first", 32, -1, 0, 4},
    {"INT64_MIN s_first", 32, INT64_MIN, 0, 4},
    {"negative b_first", 32, 0, -1, 4},
    {"negative n", 32, 0, 0, -1},
    {"negative s_len", -1, 0, 0, 4},
    {"s range past s_len", 32, 30, 0, 3},
    {"b range past the buffer", 32, 0, 38, 3},
    {"s_first past s_len, n 0", 32, 33, 0, 0},
    {"b_first past the buffer, n 0", 32, 0, 41, 0},
    {"n longer than both", 32, 0, 0, 41},
    {"s_first + n overflows", 32, INT64_MAX - 1, 0, 4},
    {"b_first + n overflows", 32, 0, INT64_MAX - 1, 4},
    {"n of INT64_MAX", 32, 1, 1, INT64_MAX},
};

/* COPY-83, COPY-88: every invalid range, and s NULL with bytes to copy,
 * answer RIG_EINVAL; neither side changes. */
Test(copies, blits_refuse_invalid_ranges) {
  for (int k = 0; k < place_count(); k++) {
    rig_device_t *d = place(k);
    const char *name = rig_device_name(d);
    uint8_t want[40], s[32], s_was[32];
    rig_buffer_t *b = new_patterned(d, 40, 15, want);
    make_pattern(s, 32, 16);
    memcpy(s_was, s, sizeof s);
    for (size_t i = 0; i < sizeof bad_ranges / sizeof bad_ranges[0]; i++) {
      const int64_t s_len = bad_ranges[i].s_len, s_first = bad_ranges[i].s_first,
                    b_first = bad_ranges[i].b_first, n = bad_ranges[i].n;
      CHECK_FAILS(RIG_EINVAL, rig_buffer_blit_from_bytes(s, s_len, s_first, b, b_first, n),
                  "%s: blit_from_bytes, %s", name, bad_ranges[i].why);
      CHECK_FAILS(RIG_EINVAL, rig_buffer_blit_to_bytes(b, b_first, s, s_len, s_first, n),
                  "%s: blit_to_bytes, %s", name, bad_ranges[i].why);
    }
    CHECK_FAILS(RIG_EINVAL, rig_buffer_blit_from_bytes(NULL, 32, 0, b, 0, 4),
                "%s: blit_from_bytes s NULL", name);
    CHECK_FAILS(RIG_EINVAL, rig_buffer_blit_to_bytes(b, 0, NULL, 32, 0, 4),
                "%s: blit_to_bytes s NULL", name);
    expect_buffer(b, want, "%s: buffer after refused blits", name);
    expect_same(s, s_was, 32, "%s: bytes after refused blits", name);
    rig_buffer_unref(b);
  }
}
