/* Conformance: host access.
 *
 * rig-buffer.txt's Host access (rig_buffer_read, rig_buffer_write,
 * rig_buffer_wait, rig_buffer_reached, rig_buffer_export) and the rules of
 * rig.txt's Order about the host.  Each test runs on every device
 * RIG_TEST_DEVICES names and on a memory device of this file's own
 * ("MEM:21"); "MEM:42" is closed to lose it.  Device work that writes or
 * reads host memory goes through a borrow of it on the device, which a sim
 * or GPU device runs on its copy engine after submit returns.
 *
 * Asserts: HACC-01 HACC-02 HACC-03 HACC-04 HACC-05 HACC-06 HACC-07 HACC-08
 *   HACC-09 HACC-10 HACC-11 HACC-12 HACC-13 HACC-14 HACC-15 HACC-17 HACC-18
 *   HACC-20 HACC-21 HACC-22 HACC-23 HACC-24 HACC-26 HACC-27 HACC-28 HACC-29
 *   HACC-30 HACC-31 HACC-33 HACC-34 HACC-35 HACC-37 HACC-38, ORD-11 ORD-12
 *   ORD-13 ORD-15, BUF-02 BUF-14 BUF-55, LOW-02.
 *
 * Not reached here, and why:
 *   HACC-16 HACC-25: "allocates nothing" is not observable through rig.h.
 *   HACC-19: Submission.unordered refs are not in rig.h yet.
 *   HACC-32: Read-only buffers come from rig_claim_consume (Core II's
 *     semantics, outside this file's brief) and of_io.
 *   HACC-36: an exported array is a C pointer, which reads without any
 *     check by construction.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <pthread.h>
#include <rig/rig.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "devices.h"
#include "helpers.h"

#define KIB ((int64_t)1024)

/* ---- Devices and buffers ---------------------------------------------- */

/* The devices whose work a test runs: each test device, then a memory
 * device of this file's own, so that a memory device is covered whatever
 * RIG_TEST_DEVICES names.  rig_host() is added where a test needs it. */
static int device_count(void) { return test_device_count() + 1; }

static rig_device_t *device_at(int k) {
  if (k < test_device_count()) return test_device(k);
  rig_device_t *d = NULL;
  CHECK_OK(rig_memory_device("MEM:21", &d));
  return d;
}

/* A host buffer of 64 KiB (so on a page, which every device that reaches
 * host memory borrows) whose bytes are all byte. */
static rig_buffer_t *host_buffer(uint8_t byte) {
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  CHECK_OK(rig_buffer_fill(h, byte));
  return h;
}

/* Submits on d, without waiting for it, a copy of byte from d's own memory
 * into target through a borrow of target on d: work of d that writes
 * target's memory, which d's copy engine runs where the host does not
 * address d's memory.  False, with nothing submitted, where d does not
 * borrow target. */
static bool submit_device_write(rig_device_t *d, rig_buffer_t *target, uint8_t byte) {
  rig_buffer_t *on_d = borrow_or_null(d, target);
  if (!on_d) return false;
  rig_buffer_t *src = create(d, rig_buffer_bytes(target));
  CHECK_OK(rig_buffer_fill(src, byte));
  rig_box_t row = rig_row(0, 0, rig_buffer_bytes(target));
  rig_point_t done;
  CHECK_OK(rig_buffer_submit_copy(src, on_d, &row, 1, NULL, 0, &done));
  /* The queued copy's allocations wait for its point before they return. */
  rig_buffer_unref(src);
  rig_buffer_unref(on_d);
  return true;
}

/* A device's read of host memory, submitted and not waited for: h, a host
 * buffer of 64 KiB whose bytes are all 0x11; on_d, its borrow on the
 * device; dst, the device's own memory that the copy from on_d writes at
 * point copied. */
struct device_read {
  rig_buffer_t *h, *on_d, *dst;
  rig_point_t copied;
};

/* Submits r's copy on d, which d's copy engine runs where the host does not
 * address d's memory.  False, with nothing to release, where d does not
 * borrow host memory. */
static bool submit_device_read(rig_device_t *d, struct device_read *r) {
  r->h = host_buffer(0x11);
  r->on_d = borrow_or_null(d, r->h);
  if (!r->on_d) {
    rig_buffer_unref(r->h);
    return false;
  }
  r->dst = create(d, 64 * KIB);
  r->copied = submit_copy_all(r->on_d, r->dst);
  return true;
}

static void release_device_read(struct device_read *r) {
  rig_buffer_unref(r->dst);
  rig_buffer_unref(r->on_d);
  rig_buffer_unref(r->h);
}

/* ---- Bytes ------------------------------------------------------------ */

/* The index of the first of bytes[0, n) that is not byte, or -1. */
static int64_t first_other(const uint8_t *bytes, int64_t n, uint8_t byte) {
  for (int64_t i = 0; i < n; i++)
    if (bytes[i] != byte) return i;
  return -1;
}

#define EXPECT_ALL(bytes, n, byte)                                             \
  do {                                                                         \
    int64_t at_ = first_other((const uint8_t *)(bytes), (n), (uint8_t)(byte)); \
    cr_expect(at_ < 0, "byte %lld is %u, want %u", (long long)at_,             \
              at_ < 0 ? 0u : ((const uint8_t *)(bytes))[at_], (unsigned)(byte)); \
  } while (0)

/* b's bytes, read with a blit (from any memory), are all byte. */
static void expect_buffer_all(rig_buffer_t *b, uint8_t byte) {
  int64_t n = rig_buffer_bytes(b);
  uint8_t *bytes = malloc((size_t)n + 1);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, bytes, n, 0, n));
  EXPECT_ALL(bytes, n, byte);
  free(bytes);
}

/* ---- Access functions ------------------------------------------------- */

/* What an access function saw. */
struct seen {
  int calls;
  void *bytes;
  int64_t n;
  /* check_all and set_all: the byte expected, and the byte to write. */
  uint8_t expect, set;
  int64_t first_other; /* check_all: -1 if every byte was expect */
  int result;          /* what the function returns */
};

static int record(void *bytes, int64_t n, void *context) {
  struct seen *s = context;
  s->calls++;
  s->bytes = bytes;
  s->n = n;
  return s->result;
}

/* Checks that every byte is s->expect, then sets every byte to s->set. */
static int check_then_set(void *bytes, int64_t n, void *context) {
  struct seen *s = context;
  record(bytes, n, s);
  s->first_other = first_other(bytes, n, s->expect);
  memset(bytes, s->set, (size_t)n);
  return 0;
}

static int check_all(void *bytes, int64_t n, void *context) {
  struct seen *s = context;
  record(bytes, n, s);
  s->first_other = first_other(bytes, n, s->expect);
  return 0;
}

/* rig_buffer_read of b calls f once, with every byte of b being byte. */
static void expect_read_all(rig_buffer_t *b, uint8_t byte) {
  struct seen s = {.expect = byte};
  CHECK_OK(rig_buffer_read(b, 1, check_all, &s));
  cr_expect(s.calls == 1);
  cr_expect(s.first_other < 0, "%s: read saw byte %lld other than %u",
            rig_device_name(rig_buffer_device(b)), (long long)s.first_other, byte);
}

/* ======================================================================= */

Test(host_access, is_in_place) {
  /* HACC-01 HACC-29 LOW-02: read, write and export give the memory itself,
   * at rig_buffer_host, for every memory the host addresses. */
  static _Alignas(64) uint8_t caller[256];
  rig_buffer_t *host_memory = create(rig_host(), 4096);
  rig_buffer_t *buffers[32];
  int nbuffers = 0;
  buffers[nbuffers++] = rig_buffer_ref(host_memory);
  buffers[nbuffers++] = view(host_memory, 16, 64);
  CHECK_OK(rig_buffer_of_memory(caller, sizeof caller, NULL, NULL, &buffers[nbuffers++]));
  CHECK_OK(rig_buffer_of_bytes(caller, sizeof caller, &buffers[nbuffers++]));
  for (int k = 0; k < device_count() && nbuffers < 28; k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *own = create(d, 4096);
    rig_buffer_t *on_host = borrow_or_null(rig_host(), own);
    rig_buffer_t *of_host = borrow_or_null(d, host_memory);
    if (rig_buffer_host(own)) buffers[nbuffers++] = rig_buffer_ref(own);
    if (on_host) buffers[nbuffers++] = on_host;
    if (of_host) buffers[nbuffers++] = of_host;
    rig_buffer_unref(own);
  }
  for (int i = 0; i < nbuffers; i++) {
    rig_buffer_t *b = buffers[i];
    const char *on = rig_device_name(rig_buffer_device(b));
    if (!rig_buffer_host(b)) {
      cr_expect_fail("buffer %d on %s has no host address", i, on);
      continue;
    }
    struct seen r = {0}, w = {0};
    CHECK_OK(rig_buffer_read(b, 1, record, &r));
    CHECK_OK(rig_buffer_write(b, 1, record, &w));
    cr_expect(r.calls == 1 && r.bytes == rig_buffer_host(b) && r.n == rig_buffer_bytes(b),
              "read of buffer %d on %s: %d calls, %p + %lld, want %p + %lld", i, on, r.calls,
              r.bytes, (long long)r.n, rig_buffer_host(b), (long long)rig_buffer_bytes(b));
    cr_expect(w.calls == 1 && w.bytes == rig_buffer_host(b) && w.n == rig_buffer_bytes(b),
              "write of buffer %d on %s: %d calls, %p + %lld", i, on, w.calls, w.bytes,
              (long long)w.n);
  }
  rig_export_t *e = NULL;
  int64_t n = 0;
  CHECK_OK(rig_buffer_export(host_memory, 1, &e));
  cr_expect(rig_export_bytes(e, &n) == rig_buffer_host(host_memory) && n == 4096);
  rig_export_unref(e);
  for (int i = 0; i < nbuffers; i++) rig_buffer_unref(buffers[i]);
  rig_buffer_unref(host_memory);
}

Test(host_access, read_follows_every_devices_last_write, .timeout = 60) {
  /* ORD-11 HACC-28 BUF-55: a fill of a device's memory and a device's copy
   * into a borrow of host memory, neither waited for, are seen by read. */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    if (host_addresses(d)) {
      rig_buffer_t *b = create(d, 4096);
      rig_point_t filled;
      CHECK_OK(rig_buffer_submit_fill(b, 0x5A, NULL, 0, &filled));
      expect_read_all(b, 0x5A);
      rig_buffer_unref(b);
    }
    rig_buffer_t *h = host_buffer(0);
    if (submit_device_write(d, h, 0xA7)) expect_read_all(h, 0xA7);
    rig_buffer_unref(h);
  }
}

Test(host_access, wait_and_reached_order_host_code, .timeout = 60) {
  /* ORD-13 HACC-17 HACC-23 HACC-24, and BUF-02: a wait on the whole buffer
   * covers a device write through a view (or a borrow of a view). */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *h = host_buffer(0);
    const uint8_t *bytes = rig_buffer_host(h);
    rig_buffer_t *part = view(h, 4096, 4096);
    if (submit_device_write(d, part, 0x3C)) {
      CHECK_OK(rig_buffer_wait(h, RIG_ACCESS_READ));
      EXPECT_ALL(bytes, 4096, 0);
      EXPECT_ALL(bytes + 4096, 4096, 0x3C);
      EXPECT_ALL(bytes + 8192, 64 * KIB - 8192, 0);

      cr_assert(submit_device_write(d, part, 0x4D));
      bool reached = false;
      while (!reached) CHECK_OK(rig_buffer_reached(h, RIG_ACCESS_READ_WRITE, &reached));
      EXPECT_ALL(bytes + 4096, 4096, 0x4D);
    }
    rig_buffer_unref(part);
    rig_buffer_unref(h);

    if (host_addresses(d)) {
      rig_buffer_t *b = create(d, 4096);
      CHECK_OK(rig_buffer_fill(b, 0));
      rig_buffer_t *b_part = view(b, 1024, 1024);
      rig_point_t filled;
      CHECK_OK(rig_buffer_submit_fill(b_part, 0x6E, NULL, 0, &filled));
      CHECK_OK(rig_buffer_wait(b, RIG_ACCESS_READ));
      const uint8_t *b_bytes = rig_buffer_host(b);
      EXPECT_ALL(b_bytes, 1024, 0);
      EXPECT_ALL(b_bytes + 1024, 1024, 0x6E);
      EXPECT_ALL(b_bytes + 2048, 2048, 0);
      rig_buffer_unref(b_part);
      rig_buffer_unref(b);
    }
  }
}

Test(host_access, wait_for_read_does_not_wait_for_device_reads, .timeout = 60) {
  /* HACC-14: with only a device's read of h queued, a Read access has
   * nothing to wait for; HACC-15: a Read_write one waits for the read. */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    struct device_read r;
    if (!submit_device_read(d, &r)) continue;
    rig_buffer_t *h = r.h, *dst = r.dst;
    bool reached = false;
    CHECK_OK(rig_buffer_reached(h, RIG_ACCESS_READ, &reached));
    cr_expect(reached, "%s: a Read access of h waits for a device's read of it",
              rig_device_name(d));
    CHECK_OK(rig_buffer_wait(h, RIG_ACCESS_READ));
    CHECK_OK(rig_buffer_wait(h, RIG_ACCESS_READ_WRITE));
    CHECK_OK(rig_buffer_reached(h, RIG_ACCESS_READ_WRITE, &reached));
    cr_expect(reached);
    CHECK_OK(rig_point_reached(r.copied, &reached));
    cr_expect(reached, "%s: wait Read_write returned before the device's read",
              rig_device_name(d));
    expect_buffer_all(dst, 0x11);
    release_device_read(&r);
  }
}

/* Writes the bytes of a pattern through a write access. */
static int write_pattern(void *bytes, int64_t n, void *context) {
  (void)context;
  for (int64_t i = 0; i < n; i++) ((uint8_t *)bytes)[i] = (uint8_t)(i * 13 + 5);
  return 0;
}

/* Copies src into a new buffer on d (through a borrow of src on d too,
 * where d has one) and checks that the copy holds write_pattern's bytes. */
static void expect_pattern_copied_to(rig_buffer_t *src, rig_device_t *d) {
  int64_t n = rig_buffer_bytes(src);
  rig_buffer_t *borrowed = borrow_or_null(d, src);
  rig_buffer_t *sources[] = {src, borrowed};
  for (int i = 0; i < 2 && sources[i]; i++) {
    rig_buffer_t *dst = create(d, n);
    CHECK_OK(rig_buffer_copy(sources[i], dst));
    uint8_t *bytes = malloc((size_t)n);
    CHECK_OK(rig_buffer_blit_to_bytes(dst, 0, bytes, n, 0, n));
    for (int64_t j = 0; j < n; j++) {
      if (bytes[j] != (uint8_t)(j * 13 + 5)) {
        cr_expect_fail("copy to %s%s: byte %lld is %u", rig_device_name(d),
                       i ? " through a borrow" : "", (long long)j, bytes[j]);
        break;
      }
    }
    free(bytes);
    rig_buffer_unref(dst);
  }
  rig_buffer_unref(borrowed);
}

Test(host_access, write_is_seen_by_later_copies, .timeout = 60) {
  /* HACC-31 ORD-15: a host write into host memory, and into each memory the
   * host addresses, is seen by copies submitted after write returns, on
   * another device. */
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  CHECK_OK(rig_buffer_write(h, 1, write_pattern, NULL));
  for (int k = 0; k < device_count(); k++) expect_pattern_copied_to(h, device_at(k));
  rig_buffer_unref(h);

  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    if (!host_addresses(d)) continue;
    rig_buffer_t *b = create(d, 64 * KIB);
    CHECK_OK(rig_buffer_write(b, 4, write_pattern, NULL));
    expect_pattern_copied_to(b, device_at((k + 1) % device_count()));
    expect_pattern_copied_to(b, rig_host());
    rig_buffer_unref(b);
  }
}

Test(host_access, write_follows_every_use, .timeout = 60) {
  /* ORD-12 HACC-30: write's function runs after a device's queued read of
   * the memory (which so reads the old bytes) and after its queued write
   * (whose bytes the function sees). */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    struct device_read r;
    if (!submit_device_read(d, &r)) continue;
    rig_buffer_t *h = r.h, *dst = r.dst;
    struct seen s = {.expect = 0x11, .set = 0x22};
    CHECK_OK(rig_buffer_write(h, 1, check_then_set, &s));
    cr_expect(s.calls == 1 && s.first_other < 0);
    expect_buffer_all(dst, 0x11);

    cr_assert(submit_device_write(d, h, 0x33));
    s = (struct seen){.expect = 0x33, .set = 0x44};
    CHECK_OK(rig_buffer_write(h, 1, check_then_set, &s));
    cr_expect(s.first_other < 0, "%s: write ran before the device's write",
              rig_device_name(d));
    release_device_read(&r);
  }
}

Test(host_access, write_of_a_view_shares_its_parents_stamps, .timeout = 60) {
  /* BUF-02: a write through a view follows a device's write through the
   * parent's borrow, and a later device copy of the parent sees it. */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *h = host_buffer(0);
    if (!submit_device_write(d, h, 0x33)) {
      rig_buffer_unref(h);
      continue;
    }
    rig_buffer_t *part = view(h, 4096, 4096);
    struct seen s = {.expect = 0x33, .set = 0x44};
    CHECK_OK(rig_buffer_write(part, 4, check_then_set, &s));
    cr_expect(s.first_other < 0, "%s: the view's write ran before the device's write",
              rig_device_name(d));

    rig_buffer_t *on_d = borrow_or_null(d, h);
    rig_buffer_t *dst = create(d, 64 * KIB);
    CHECK_OK(rig_buffer_copy(on_d, dst));
    rig_buffer_t *dst_before = view(dst, 0, 4096);
    rig_buffer_t *dst_part = view(dst, 4096, 4096);
    rig_buffer_t *dst_after = view(dst, 8192, 64 * KIB - 8192);
    expect_buffer_all(dst_before, 0x33);
    expect_buffer_all(dst_part, 0x44);
    expect_buffer_all(dst_after, 0x33);
    rig_buffer_unref(dst_after);
    rig_buffer_unref(dst_part);
    rig_buffer_unref(dst_before);
    rig_buffer_unref(dst);
    rig_buffer_unref(on_d);
    rig_buffer_unref(part);
    rig_buffer_unref(h);
  }
}

Test(host_access, a_failing_function_answers_its_value) {
  /* HACC-04 */
  rig_buffer_t *buffers[] = {create(rig_host(), 64), create(device_at(device_count() - 1), 64)};
  for (size_t i = 0; i < 2; i++) {
    rig_buffer_t *b = buffers[i];
    struct seen s = {.result = 7};
    CHECK_FAILS(RIG_ECALLBACK, rig_buffer_read(b, 1, record, &s));
    cr_expect(rig_error_code() == 7, "rig_error_code %d", rig_error_code());
    s.result = -3;
    CHECK_FAILS(RIG_ECALLBACK, rig_buffer_write(b, 4, record, &s));
    cr_expect(rig_error_code() == -3, "rig_error_code %d", rig_error_code());
    cr_expect(s.calls == 2);
    /* The failed accesses let go of the memory. */
    s.result = 0;
    CHECK_OK(rig_buffer_write(b, 1, record, &s));
    CHECK_OK(rig_buffer_read(b, 1, record, &s));
    cr_expect(s.calls == 4);
    rig_buffer_unref(b);
  }
}

/* Every access of b with elem_size is refused, without calling f. */
static void expect_refused(rig_buffer_t *b, int64_t elem_size, bool exportable) {
  struct seen s = {0};
  CHECK_FAILS(RIG_EINVAL, rig_buffer_read(b, elem_size, record, &s));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_write(b, elem_size, record, &s));
  cr_expect(s.calls == 0, "a refused access called its function");
  if (exportable) {
    rig_export_t *e = NULL;
    CHECK_FAILS(RIG_EINVAL, rig_buffer_export(b, elem_size, &e));
  }
}

/* Every access of b with elem_size is made, with f given all b's bytes. */
static void expect_accepted(rig_buffer_t *b, int64_t elem_size, bool exportable) {
  struct seen s = {0};
  CHECK_OK(rig_buffer_read(b, elem_size, record, &s));
  cr_expect(s.n == rig_buffer_bytes(b));
  CHECK_OK(rig_buffer_write(b, elem_size, record, &s));
  cr_expect(s.calls == 2 && s.n == rig_buffer_bytes(b));
  if (exportable) {
    rig_export_t *e = NULL;
    CHECK_OK(rig_buffer_export(b, elem_size, &e));
    rig_export_unref(e);
  }
}

struct elem_case {
  int64_t first, length, elem_size;
  bool accepted;
};

/* Views of a buffer that starts on 16 bytes or more. */
static const struct elem_case elem_cases[] = {
    {0, 10, 4, false}, /* HACC-10: not a whole number of elements */
    {0, 6, 4, false},
    {1, 8, 4, false},  /* HACC-12: not starting on a multiple of 4 */
    {2, 8, 4, false},
    {4, 8, 8, false},
    {4, 8, 4, true},
    {2, 6, 2, true},
    {1, 7, 1, true},
    {0, 64, 16, true},
    {8, 0, 4, true},   /* an empty view starting on a multiple */
};

Test(host_access, checks_the_element_size) {
  /* HACC-10 HACC-12, for read, write and (host memory) export */
  rig_device_t *devices[16];
  int ndevices = 0;
  devices[ndevices++] = rig_host();
  for (int k = 0; k < device_count() && ndevices < 16; k++)
    if (host_addresses(device_at(k))) devices[ndevices++] = device_at(k);
  for (int i = 0; i < ndevices; i++) {
    rig_buffer_t *b = create(devices[i], 64);
    bool exportable = i == 0;
    for (size_t c = 0; c < sizeof elem_cases / sizeof elem_cases[0]; c++) {
      const struct elem_case *e = &elem_cases[c];
      rig_buffer_t *v = view(b, e->first, e->length);
      if (e->accepted)
        expect_accepted(v, e->elem_size, exportable);
      else
        expect_refused(v, e->elem_size, exportable);
      rig_buffer_unref(v);
    }
    rig_buffer_unref(b);
  }
}

/* Calls read and write on b, which must give an empty range. */
static void expect_empty_access(rig_buffer_t *b) {
  const int64_t elem_sizes[] = {1, 4, 8};
  for (size_t i = 0; i < 3; i++) {
    struct seen s = {.n = -1};
    CHECK_OK(rig_buffer_read(b, elem_sizes[i], record, &s));
    cr_expect(s.calls == 1 && s.n == 0, "read of an empty buffer: %d calls, %lld bytes",
              s.calls, (long long)s.n);
    s = (struct seen){.n = -1};
    CHECK_OK(rig_buffer_write(b, elem_sizes[i], record, &s));
    cr_expect(s.calls == 1 && s.n == 0, "write of an empty buffer: %d calls, %lld bytes",
              s.calls, (long long)s.n);
  }
}

Test(host_access, of_an_empty_buffer_is_an_empty_range) {
  /* HACC-05, whatever the memory */
  for (int k = -1; k < device_count(); k++) {
    rig_device_t *d = k < 0 ? rig_host() : device_at(k);
    rig_buffer_t *empty = create(d, 0);
    rig_buffer_t *b = create(d, 64);
    rig_buffer_t *empty_view = view(b, 8, 0);
    expect_empty_access(empty);
    expect_empty_access(empty_view);
    rig_buffer_unref(empty_view);
    rig_buffer_unref(b);
    rig_buffer_unref(empty);
  }
}

Test(host_access, refuses_memory_the_host_does_not_address) {
  /* HACC-11; HACC-08: the blits still reach it. */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    if (host_addresses(d)) continue;
    rig_buffer_t *b = create(d, 4096);
    expect_refused(b, 1, true);
    uint8_t in[4096], out[4096];
    memset(in, 0x5E, sizeof in);
    CHECK_OK(rig_buffer_blit_from_bytes(in, 4096, 0, b, 0, 4096));
    CHECK_OK(rig_buffer_blit_to_bytes(b, 0, out, 4096, 0, 4096));
    EXPECT_ALL(out, 4096, 0x5E);
    rig_buffer_unref(b);
  }
}

/* ---- No values, fresh memory ------------------------------------------ */

struct submitted {
  rig_device_t *device;
  uint64_t value;
};

/* Host access through b of each kind rig allows on it, all taking no
 * value. */
static void access_every_way(rig_buffer_t *b) {
  bool reached = false;
  CHECK_OK(rig_buffer_wait(b, RIG_ACCESS_READ));
  CHECK_OK(rig_buffer_wait(b, RIG_ACCESS_READ_WRITE));
  CHECK_OK(rig_buffer_reached(b, RIG_ACCESS_READ, &reached));
  CHECK_OK(rig_buffer_reached(b, RIG_ACCESS_READ_WRITE, &reached));
  if (!rig_buffer_host(b)) return;
  struct seen s = {0};
  CHECK_OK(rig_buffer_read(b, 1, record, &s));
  CHECK_OK(rig_buffer_write(b, 1, record, &s));
}

Test(host_access, takes_no_value, .timeout = 60) {
  /* HACC-06: host access leaves every device's submitted value as it is,
   * also on memory that devices wrote and borrowed. */
  rig_buffer_t *buffers[40];
  int nbuffers = 0;
  rig_buffer_t *h = host_buffer(0);
  buffers[nbuffers++] = rig_buffer_ref(h);
  buffers[nbuffers++] = view(h, 100, 100);
  for (int k = 0; k < device_count() && nbuffers < 36; k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = create(d, 4096);
    CHECK_OK(rig_buffer_fill(b, 1));
    buffers[nbuffers++] = b;
    submit_device_write(d, h, (uint8_t)k);
    rig_buffer_t *on_d = borrow_or_null(d, h);
    if (on_d) buffers[nbuffers++] = on_d;
    rig_buffer_t *on_host = borrow_or_null(rig_host(), b);
    if (on_host) buffers[nbuffers++] = on_host;
  }
  CHECK_OK(rig_buffer_wait(h, RIG_ACCESS_READ_WRITE));
  for (int i = 0; i < nbuffers; i++) CHECK_OK(rig_buffer_wait(buffers[i], RIG_ACCESS_READ_WRITE));

  struct submitted before[17];
  int ndevices = 0;
  before[ndevices++] = (struct submitted){rig_host(), rig_submitted(rig_host())};
  for (int k = 0; k < device_count() && ndevices < 17; k++)
    before[ndevices++] = (struct submitted){device_at(k), rig_submitted(device_at(k))};

  for (int i = 0; i < nbuffers; i++) access_every_way(buffers[i]);
  rig_export_t *e = NULL;
  CHECK_OK(rig_buffer_export(h, 4, &e));
  rig_export_unref(e);

  for (int i = 0; i < ndevices; i++)
    cr_expect(rig_submitted(before[i].device) == before[i].value,
              "%s: submitted moved from %llu to %llu", rig_device_name(before[i].device),
              (unsigned long long)before[i].value,
              (unsigned long long)rig_submitted(before[i].device));
  for (int i = 0; i < nbuffers; i++) rig_buffer_unref(buffers[i]);
  rig_buffer_unref(h);
}

/* A new allocation has nothing to wait for. */
static void expect_fresh(rig_buffer_t *b) {
  const rig_access_t accesses[] = {RIG_ACCESS_READ, RIG_ACCESS_READ_WRITE};
  for (size_t i = 0; i < 2; i++) {
    bool reached = false;
    CHECK_OK(rig_buffer_reached(b, accesses[i], &reached));
    cr_expect(reached, "fresh memory of %s is not reached for %d",
              rig_device_name(rig_buffer_device(b)), accesses[i]);
    CHECK_OK(rig_buffer_wait(b, accesses[i]));
  }
}

Test(host_access, fresh_memory_has_nothing_to_wait_for) {
  /* BUF-14; HACC-18: host memory that a device borrowed but used not. */
  static uint8_t caller[64];
  for (int k = -1; k < device_count(); k++) {
    rig_device_t *d = k < 0 ? rig_host() : device_at(k);
    const int64_t sizes[] = {0, 64, 64 * KIB};
    for (size_t i = 0; i < 3; i++) {
      rig_buffer_t *b = create(d, sizes[i]);
      expect_fresh(b);
      rig_buffer_unref(b);
    }
  }
  rig_buffer_t *copied = NULL, *wrapped = NULL;
  CHECK_OK(rig_buffer_of_bytes(caller, sizeof caller, &copied));
  CHECK_OK(rig_buffer_of_memory(caller, sizeof caller, NULL, NULL, &wrapped));
  expect_fresh(copied);
  expect_fresh(wrapped);
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  for (int k = 0; k < device_count(); k++) {
    rig_buffer_t *on_d = borrow_or_null(device_at(k), h);
    if (on_d) expect_fresh(on_d);
    rig_buffer_unref(on_d);
  }
  expect_fresh(h);
  rig_buffer_unref(h);
  rig_buffer_unref(wrapped);
  rig_buffer_unref(copied);
}

/* ---- Export ----------------------------------------------------------- */

Test(export, refuses_memory_that_is_not_the_hosts) {
  /* HACC-37 HACC-38: even where the host addresses it */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = create(d, 4096);
    rig_buffer_t *part = view(b, 0, 1024);
    rig_buffer_t *on_host = borrow_or_null(rig_host(), b);
    rig_buffer_t *refused[] = {b, part, on_host};
    for (size_t i = 0; i < 3 && refused[i]; i++) {
      rig_export_t *e = NULL;
      CHECK_FAILS(RIG_EINVAL, rig_buffer_export(refused[i], 1, &e));
    }
    rig_buffer_unref(on_host);
    rig_buffer_unref(part);
    rig_buffer_unref(b);
  }
  rig_export_t *e = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_export(NULL, 1, &e));
}

Test(export, keeps_the_memory_until_released) {
  /* HACC-34: the exported bytes outlive every buffer over them. */
  rig_buffer_t *b = create(rig_host(), 64 * KIB);
  rig_buffer_t *part = view(b, 4096, 4096);
  rig_export_t *e = NULL;
  CHECK_OK(rig_buffer_export(b, 8, &e));
  int64_t n = 0;
  uint8_t *bytes = rig_export_bytes(e, &n);
  cr_assert(bytes == rig_buffer_host(b) && n == 64 * KIB);
  memset(bytes, 0x7C, (size_t)n);
  rig_buffer_unref(part);
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(rig_host()));

  /* Memory that had returned could be handed out again. */
  rig_buffer_t *fresh = create(rig_host(), 64 * KIB);
  uintptr_t fresh_at = (uintptr_t)rig_buffer_host(fresh), exported_at = (uintptr_t)bytes;
  cr_expect(fresh_at + 64 * KIB <= exported_at || exported_at + 64 * KIB <= fresh_at,
            "a new buffer lies over exported bytes");
  CHECK_OK(rig_buffer_fill(fresh, 0));
  EXPECT_ALL(bytes, n, 0x7C);
  rig_buffer_unref(fresh);
  rig_export_unref(e);
}

static void count_release(void *context) { ++*(int *)context; }

Test(export, of_caller_memory_releases_it_after_the_export) {
  /* HACC-34 */
  static _Alignas(64) uint8_t caller[4096];
  int releases = 0;
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_of_memory(caller, sizeof caller, count_release, &releases, &b));
  rig_export_t *e = NULL;
  CHECK_OK(rig_buffer_export(b, 1, &e));
  cr_expect(rig_export_bytes(e, NULL) == (void *)caller);
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(rig_host()));
  cr_expect(releases == 0, "released while exported");
  rig_export_unref(e);
  CHECK_OK(rig_free_cache(rig_host()));
  cr_expect(releases == 1, "released %d times", releases);
}

Test(export, follows_every_use, .timeout = 60) {
  /* HACC-33: the exported bytes are those of a device's queued write. */
  for (int k = 0; k < device_count(); k++) {
    rig_buffer_t *h = host_buffer(0);
    if (submit_device_write(device_at(k), h, 0x6B)) {
      rig_export_t *e = NULL;
      CHECK_OK(rig_buffer_export(h, 4, &e));
      int64_t n = 0;
      const uint8_t *bytes = rig_export_bytes(e, &n);
      EXPECT_ALL(bytes, n, 0x6B);
      rig_export_unref(e);
    }
    rig_buffer_unref(h);
  }
}

/* ---- Work during an access, loss -------------------------------------- */

struct copy_job {
  rig_buffer_t *src, *dst;
  rig_status_t status;
};

static void *run_copy(void *context) {
  struct copy_job *job = context;
  job->status = rig_buffer_copy(job->src, job->dst);
  return NULL;
}

/* Sets the bytes to 0x11, has another thread copy them out, then sets them
 * to 0x22. */
static int write_around_a_copy(void *bytes, int64_t n, void *context) {
  memset(bytes, 0x11, (size_t)n);
  pthread_t thread;
  if (pthread_create(&thread, NULL, run_copy, context) != 0) return 1;
  pthread_join(thread, NULL);
  memset(bytes, 0x22, (size_t)n);
  return 0;
}

Test(host_access, work_submitted_during_a_write_is_not_ordered_after_it, .timeout = 30) {
  /* HACC-07: a copy from the memory, submitted on another thread while
   * write's function runs, is not delayed until the function returns: it
   * copies the bytes the function had written by then. */
  rig_device_t *m = device_at(device_count() - 1); /* a memory device */
  struct copy_job job = {create(rig_host(), 4096), create(m, 4096), RIG_EINVAL};
  CHECK_OK(rig_buffer_write(job.src, 1, write_around_a_copy, &job));
  cr_expect(job.status == RIG_OK, "the copy answered %s", rig_status_name(job.status));
  expect_buffer_all(job.dst, 0x11);
  rig_buffer_unref(job.dst);
  rig_buffer_unref(job.src);
}

Test(host_access, of_a_lost_devices_memory_answers_lost) {
  /* HACC-22 HACC-27: every use of a lost device's memory, through any
   * buffer over it, answers RIG_ELOST. */
  rig_device_t *d = NULL;
  CHECK_OK(rig_memory_device("MEM:42", &d));
  rig_buffer_t *b = create(d, 64);
  rig_buffer_t *on_host = borrow_or_null(rig_host(), b);
  cr_assert(on_host != NULL);
  CHECK_OK(rig_close(d));
  rig_buffer_t *buffers[] = {b, on_host};
  for (size_t i = 0; i < 2; i++) {
    struct seen s = {0};
    bool reached = false;
    CHECK_LOST(d, rig_buffer_read(buffers[i], 1, record, &s));
    CHECK_LOST(d, rig_buffer_write(buffers[i], 1, record, &s));
    CHECK_LOST(d, rig_buffer_wait(buffers[i], RIG_ACCESS_READ));
    CHECK_LOST(d, rig_buffer_wait(buffers[i], RIG_ACCESS_READ_WRITE));
    CHECK_LOST(d, rig_buffer_reached(buffers[i], RIG_ACCESS_READ, &reached));
    cr_expect(s.calls == 0);
  }
  rig_buffer_unref(on_host);
  rig_buffer_unref(b);
}

/* ---- Dead buffers and claims ------------------------------------------ */

Test(host_access, refuses_dead_buffers) {
  /* HACC-09 HACC-21 HACC-26 */
  for (int k = -1; k < device_count(); k++) {
    rig_device_t *d = k < 0 ? rig_host() : device_at(k);
    rig_buffer_t *b = create(d, 4096);
    rig_buffer_t *part = view(b, 0, 64);
    cr_assert(try_free(b, NULL));
    rig_buffer_t *dead[] = {b, part};
    for (size_t i = 0; i < 2; i++) {
      expect_refused(dead[i], 1, true);
      bool reached = false;
      CHECK_FAILS(RIG_EINVAL, rig_buffer_wait(dead[i], RIG_ACCESS_READ));
      CHECK_FAILS(RIG_EINVAL, rig_buffer_wait(dead[i], RIG_ACCESS_READ_WRITE));
      CHECK_FAILS(RIG_EINVAL, rig_buffer_reached(dead[i], RIG_ACCESS_READ, &reached));
    }
    rig_buffer_unref(part);
    rig_buffer_unref(b);
  }
}

struct free_job {
  rig_buffer_t *b;
  bool freed;
};

static void *run_free(void *context) {
  struct free_job *job = context;
  job->freed = true;
  if (rig_buffer_free(job->b, NULL, &job->freed) != RIG_OK) job->freed = true;
  return NULL;
}

/* Tries, from another thread, to free the memory under access. */
static int free_from_another_thread(void *bytes, int64_t n, void *context) {
  (void)bytes, (void)n;
  pthread_t thread;
  if (pthread_create(&thread, NULL, run_free, context) != 0) return 1;
  pthread_join(thread, NULL);
  return 0;
}

Test(host_access, holds_a_read_claim_while_the_function_runs, .timeout = 30) {
  /* HACC-02 HACC-03: free from another thread is refused during read's and
   * write's function, and succeeds once it has returned. */
  for (int k = -1; k < device_count(); k++) {
    rig_device_t *d = k < 0 ? rig_host() : device_at(k);
    if (!host_addresses(d)) continue;
    for (int writing = 0; writing < 2; writing++) {
      struct free_job job = {create(d, 4096), false};
      rig_buffer_t *part = view(job.b, 64, 64);
      if (writing)
        CHECK_OK(rig_buffer_write(part, 1, free_from_another_thread, &job));
      else
        CHECK_OK(rig_buffer_read(part, 1, free_from_another_thread, &job));
      cr_expect(!job.freed, "%s: freed during %s", rig_device_name(d),
                writing ? "write" : "read");
      cr_expect(try_free(job.b, NULL), "%s: not freed after %s", rig_device_name(d),
                writing ? "write" : "read");
      rig_buffer_unref(part);
      rig_buffer_unref(job.b);
    }
  }
}

Test(host_access, a_failed_function_lets_go_of_the_memory) {
  /* HACC-04: the claim ends with a failing function too. */
  rig_buffer_t *b = create(rig_host(), 64);
  struct seen s = {.result = 1};
  CHECK_FAILS(RIG_ECALLBACK, rig_buffer_read(b, 1, record, &s));
  CHECK_FAILS(RIG_ECALLBACK, rig_buffer_write(b, 1, record, &s));
  cr_expect(try_free(b, NULL), "a failed access kept its claim");
  rig_buffer_unref(b);
}

Test(host_access, refuses_memory_held_exclusive) {
  /* HACC-13, through the buffer and through a view of it */
  for (int k = -1; k < device_count(); k++) {
    rig_device_t *d = k < 0 ? rig_host() : device_at(k);
    if (!host_addresses(d)) continue;
    rig_buffer_t *b = create(d, 4096);
    rig_buffer_t *part = view(b, 0, 64);
    bool exclusive = false;
    CHECK_OK(rig_claim_begin(b, &exclusive));
    cr_assert(exclusive);
    expect_refused(b, 1, k < 0);
    expect_refused(part, 1, k < 0);
    CHECK_OK(rig_claim_end(b));
    expect_accepted(part, 1, false);
    rig_buffer_unref(part);
    rig_buffer_unref(b);
  }
}

Test(host_access, wait_takes_no_claim) {
  /* HACC-20 */
  for (int k = -1; k < device_count(); k++) {
    rig_device_t *d = k < 0 ? rig_host() : device_at(k);
    rig_buffer_t *b = create(d, 4096);
    CHECK_OK(rig_buffer_fill(b, 1));
    bool reached = false;
    CHECK_OK(rig_buffer_wait(b, RIG_ACCESS_READ));
    CHECK_OK(rig_buffer_wait(b, RIG_ACCESS_READ_WRITE));
    CHECK_OK(rig_buffer_reached(b, RIG_ACCESS_READ_WRITE, &reached));
    cr_expect(try_free(b, NULL), "%s: a wait kept a claim", rig_device_name(d));
    rig_buffer_unref(b);
  }
}

Test(export, takes_the_memory_out_of_the_claims) {
  /* HACC-35 */
  rig_buffer_t *b = create(rig_host(), 4096);
  rig_export_t *e = NULL;
  CHECK_OK(rig_buffer_export(b, 1, &e));
  cr_expect(!try_free(b, NULL), "exported memory was freed");
  cr_expect(rig_buffer_dead(b) == NULL);
  bool exclusive = false;
  CHECK_FAILS(RIG_EINVAL, rig_claim_begin(b, &exclusive));
  rig_export_unref(e);
  rig_buffer_unref(b);
}
