/* Conformance: buffers.
 *
 * rig-buffer.txt's sections Buffers, Making buffers and Properties, the Low
 * level calls of rig.h (rig_buffer_host, rig_buffer_bytes, rig_buffer_span,
 * rig_buffer_why, rig_buffer_claim, rig_buffer_release, rig_buffer_aligned,
 * rig_buffer_handle), and rig.txt's Words.  Each test runs on the host, on
 * every device RIG_TEST_DEVICES names, and on a memory device of this
 * file's own ("MEM:20"); "MEM:41" is closed to lose it.  Host access (read,
 * write, wait, reached, export) is test_host_access.c's.
 *
 * Asserts:
 *   Buffers:      BUF-01 BUF-04 BUF-12
 *   Making:       BUF-15 BUF-16 BUF-18 (host-addressed result) BUF-19 BUF-20
 *                 BUF-21 BUF-22 BUF-23 BUF-24 BUF-25 BUF-26 BUF-28 BUF-29
 *                 BUF-31 BUF-33 BUF-34 BUF-35 BUF-36 BUF-44 BUF-45 BUF-46
 *                 BUF-47 BUF-48 BUF-49 BUF-50 BUF-52 BUF-53 BUF-54 BUF-57
 *                 BUF-59 BUF-66 BUF-67 BUF-70, PROP-25 MACH-16 MACH-18
 *   Properties:   BPROP-01 BPROP-02 BPROP-03 BPROP-04 BPROP-06 BPROP-07
 *                 BPROP-08 BPROP-09 BPROP-10 BPROP-11 BPROP-13 BPROP-19
 *                 BPROP-20
 *   Low level:    LOW-01 LOW-02 LOW-03 LOW-04 LOW-05 LOW-06 LOW-07 LOW-08
 *                 LOW-13 LOW-14 LOW-17 LOW-19 LOW-33 LOW-34 LOW-35 LOW-36
 *   Words:        WORD-01 WORD-02 WORD-03 WORD-05 WORD-06 WORD-07 WORD-08
 *                 (the whole-word write fails under ASan only) WORD-09 WORD-10
 *
 * Not reached here, and why:
 *   BUF-02 BUF-14 BUF-55: host access orders them: test_host_access.c.
 *   BUF-03 BUF-58 BUF-63..65 BUF-68 BUF-69 BUF-71..80, BPROP-05 BPROP-14
 *     BPROP-21: the semantics of claims, consume, free and unborrow (Core
 *     II) are outside this file's brief; it uses free only to make dead
 *     buffers and claims only as the Low level calls.
 *   BPROP-15..18: Read-only buffers come only from rig_claim_consume
 *     (Core II, as above) and of_io.
 *   BUF-05 WORD-04: submissions and their parts are not in rig.h yet.
 *   BUF-06..11 BUF-56: which driver mappings are made and freed is not
 *     observable through rig.h: needs an instrumented driver.
 *   BUF-13 BUF-27 BUF-30 BUF-37..43 BUF-62, BPROP-12, LOW-10..12 LOW-18: io
 *     devices are not in rig.h.
 *   BUF-17: needs a device with a write-combined window (GPU suite); the
 *     fallback's budget is asserted under BUF-19.
 *   BUF-32 BUF-60 BUF-61: need driver faults or a driver without room for
 *     mappings (sim suite).
 *   BUF-51: needs a driver that never maps some pages (GPU suite).
 *   LOW-09 LOW-15 LOW-16 LOW-20: need handle-only memory; host, memory and
 *     sim devices give addresses.
 *   LOW-21..32: rig.h has no rig_buffer_dma.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <rig/rig.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "devices.h"
#include "helpers.h"

#define KIB ((int64_t)1024)
#define MIB (1024 * KIB)

/* The sizes every create test makes. */
static const int64_t sizes[] = {0, 1, 3, 127, 128, 4096, 64 * KIB, MIB};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* ---- Devices ---------------------------------------------------------- */

/* The devices a test runs on: the host, each test device, then a memory
 * device of this file's own, so that memory devices are covered whatever
 * RIG_TEST_DEVICES names. */
static int device_count(void) { return test_device_count() + 2; }

static rig_device_t *memory_device(void) {
  rig_device_t *d = NULL;
  CHECK_OK(rig_memory_device("MEM:20", &d));
  return d;
}

static rig_device_t *device_at(int k) {
  if (k == 0) return rig_host();
  if (k <= test_device_count()) return test_device(k - 1);
  return memory_device();
}

static bool is_host(const rig_device_t *d) { return rig_device_equal(d, rig_host()); }

/* A memory device of this process: a proxy of rigd's memory device has its
 * arch (PROP-17) but runs its work in rigd. */
static bool is_memory_device(const rig_device_t *d) {
  return strcmp(rig_device_arch(d), "memory") == 0 && rig_device_runs_on_host(d);
}

static int64_t page_bytes(void) { return (int64_t)sysconf(_SC_PAGESIZE); }

/* ---- Properties and bytes --------------------------------------------- */

/* The properties a Read_write buffer answers, live or dead (BPROP-01,
 * BPROP-11, BPROP-13). */
static void expect_properties(const rig_buffer_t *b, const rig_device_t *d, int64_t bytes,
                              bool spans, bool borrowed) {
  cr_expect(rig_device_equal(rig_buffer_device(b), d), "device %s, want %s",
            rig_device_name(rig_buffer_device(b)), rig_device_name(d));
  cr_expect(rig_buffer_bytes(b) == bytes, "bytes %lld, want %lld",
            (long long)rig_buffer_bytes(b), (long long)bytes);
  cr_expect(rig_buffer_spans(b) == spans, "spans %d, want %d", rig_buffer_spans(b), spans);
  cr_expect(rig_buffer_is_borrowed(b) == borrowed, "is_borrowed %d, want %d",
            rig_buffer_is_borrowed(b), borrowed);
  cr_expect(rig_buffer_access(b) == RIG_ACCESS_READ_WRITE);
}

/* The properties of a live buffer (BPROP-19). */
static void expect_buffer(const rig_buffer_t *b, const rig_device_t *d, int64_t bytes,
                          bool spans, bool borrowed) {
  expect_properties(b, d, bytes, spans, borrowed);
  cr_expect(rig_buffer_dead(b) == NULL);
}

static void expect_span(const rig_buffer_t *b, int64_t offset, int64_t allocation_bytes) {
  int64_t got_offset = -1, got_bytes = -1;
  rig_buffer_span(b, &got_offset, &got_bytes);
  cr_expect(got_offset == offset && got_bytes == allocation_bytes,
            "span (%lld, %lld), want (%lld, %lld)", (long long)got_offset,
            (long long)got_bytes, (long long)offset, (long long)allocation_bytes);
}

/* Byte i of the pattern of seed: every byte value occurs (BUF-04). */
static uint8_t pattern_byte(int64_t i, int seed) { return (uint8_t)(i * 7 + seed); }

static void put_pattern(rig_buffer_t *b, int seed) {
  int64_t n = rig_buffer_bytes(b);
  uint8_t *bytes = malloc((size_t)n + 1);
  for (int64_t i = 0; i < n; i++) bytes[i] = pattern_byte(i, seed);
  CHECK_OK(rig_buffer_blit_from_bytes(bytes, n, 0, b, 0, n));
  free(bytes);
}

/* b's bytes are the pattern of seed from its byte `from` on. */
static void expect_pattern(rig_buffer_t *b, int seed, int64_t from) {
  int64_t n = rig_buffer_bytes(b);
  uint8_t *bytes = malloc((size_t)n + 1);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, bytes, n, 0, n));
  for (int64_t i = 0; i < n; i++) {
    if (bytes[i] != pattern_byte(from + i, seed)) {
      cr_expect_fail("byte %lld of %s's buffer is %u, want %u", (long long)i,
                     rig_device_name(rig_buffer_device(b)), bytes[i],
                     pattern_byte(from + i, seed));
      break;
    }
  }
  free(bytes);
}

static bool ranges_disjoint(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes) {
  uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return a0 + (uintptr_t)a_bytes <= b0 || b0 + (uintptr_t)b_bytes <= a0;
}

/* ---- Caller memory (of_memory) ---------------------------------------- */

/* Caller memory whose release frees it and counts the calls. */
struct caller_memory {
  uint8_t *bytes;
  int releases;
};

static void release_caller_memory(void *context) {
  struct caller_memory *m = context;
  m->releases++;
  free(m->bytes);
  m->bytes = NULL;
}

/* Runs the collection of every device the test used, so that memory with
 * no buffer left is given back. */
static void collect_everywhere(void) {
  for (int k = 0; k < device_count(); k++) CHECK_OK(rig_free_cache(device_at(k)));
}

/* ======================================================================= */
/* Making buffers: create                                                   */

Test(create, answers_each_size_on_each_device) {
  /* BUF-21 BUF-23 WORD-10 LOW-03 LOW-04 BPROP-02 BPROP-08 BPROP-09 */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    int64_t alignment = rig_device_alignment(d);
    for (size_t s = 0; s < NSIZES; s++) {
      int64_t n = sizes[s];
      rig_buffer_t *b = create(d, n);
      expect_buffer(b, d, n, true, false);
      expect_span(b, 0, n);
      if (n > 0) {
        bool on_alignment = false;
        CHECK_OK(rig_buffer_aligned(b, 0, alignment, &on_alignment));
        cr_expect(on_alignment, "%s: %lld bytes not on the alignment %lld",
                  rig_device_name(d), (long long)n, (long long)alignment);
        uintptr_t host = (uintptr_t)rig_buffer_host(b);
        if (host != 0 && rig_device_runs_on_host(d)) {
          cr_expect(host % (uintptr_t)alignment == 0, "%s: %p", rig_device_name(d),
                    rig_buffer_host(b));
        }
        if (host != 0 && alignment >= RIG_WORD_BYTES) cr_expect(host % RIG_WORD_BYTES == 0);
      }
      rig_buffer_unref(b);
    }
  }
}

Test(create, host_buffers_start_on_128_bytes_or_a_page) {
  /* BUF-25 BUF-26 PROP-25 */
  const int64_t page = page_bytes();
  const int64_t host_sizes[] = {16, 127, 128, 129, 1000, 4096, 64 * KIB - 4, 64 * KIB,
                                64 * KIB + 1, MIB};
  for (size_t s = 0; s < sizeof host_sizes / sizeof host_sizes[0]; s++) {
    int64_t n = host_sizes[s];
    rig_buffer_t *b = create(rig_host(), n);
    uintptr_t host = (uintptr_t)rig_buffer_host(b);
    cr_assert(host != 0);
    int64_t want = 16;
    if (n >= 64 * KIB && n >= 4 * page)
      want = page;
    else if (n >= 128)
      want = 128;
    cr_expect(host % (uintptr_t)want == 0, "a host buffer of %lld bytes at %p, not on %lld",
              (long long)n, rig_buffer_host(b), (long long)want);
    bool aligned = false;
    CHECK_OK(rig_buffer_aligned(b, 0, want, &aligned));
    cr_expect(aligned, "rig_buffer_aligned(%lld bytes, 0, %lld)", (long long)n, (long long)want);
    rig_buffer_unref(b);
  }
}

Test(create, counts_whole_words_and_nothing_for_empty) {
  /* BUF-22 BUF-24 WORD-07: each allocation counts by whole words in its
   * device's budget; the host's also counts the C library's padding. */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *kept[NSIZES];
    CHECK_OK(rig_free_cache(d)); /* no cached allocation for a create to reuse */
    for (size_t s = 0; s < NSIZES; s++) {
      int64_t n = sizes[s];
      int64_t before = rig_allocated(d);
      kept[s] = create(d, n);
      int64_t grew = rig_allocated(d) - before;
      if (n == 0)
        cr_expect(grew == 0, "%s: an empty buffer took %lld bytes", rig_device_name(d),
                  (long long)grew);
      else if (is_host(d))
        cr_expect(grew >= whole_words(n), "host: %lld bytes counted %lld", (long long)n,
                  (long long)grew);
      else
        cr_expect(grew == whole_words(n), "%s: %lld bytes counted %lld, want %lld",
                  rig_device_name(d), (long long)n, (long long)grew,
                  (long long)whole_words(n));
    }
    for (size_t s = 0; s < NSIZES; s++) rig_buffer_unref(kept[s]);
  }
}

/* Writes every byte of the last word of b's memory, past b's bytes. */
static int write_whole_last_word(void *bytes, int64_t n, void *context) {
  (void)context;
  uint8_t *last_word = (uint8_t *)bytes + (n - 1) / RIG_WORD_BYTES * RIG_WORD_BYTES;
  for (int i = 0; i < RIG_WORD_BYTES; i++) last_word[i] = 0xEE;
  return 0;
}

Test(create, memory_runs_on_to_a_whole_word) {
  /* WORD-07 WORD-08: host code may write the whole word that holds a
   * buffer's last byte (a write past the allocation fails under ASan). */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    if (!host_addresses(d)) continue;
    for (int64_t n = 1; n <= 7; n++) {
      rig_buffer_t *b = create(d, n);
      CHECK_OK(rig_buffer_write(b, 1, write_whole_last_word, NULL));
      rig_buffer_unref(b);
    }
  }
}

Test(create, refuses_negative_sizes_and_null_devices) {
  /* BUF-28 */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = NULL;
    CHECK_FAILS(RIG_EINVAL, rig_buffer_create(d, -1, RIG_MEMORY_DEVICE, &b));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_create(d, INT64_MIN, RIG_MEMORY_DEVICE, &b));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_create(d, -4, RIG_MEMORY_MAPPED, &b));
  }
  rig_buffer_t *b = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_create(NULL, 16, RIG_MEMORY_DEVICE, &b));
}

Test(create, pinned_is_refused_where_the_host_addresses_the_memory) {
  /* BUF-29 where the host addresses d's memory; BUF-15 elsewhere: Pinned
   * memory the host addresses, whose host writes a later copy sees. */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = NULL;
    if (host_addresses(d)) {
      CHECK_FAILS(RIG_EINVAL, rig_buffer_create(d, 4096, RIG_MEMORY_PINNED, &b));
      CHECK_FAILS(RIG_EINVAL, rig_buffer_create(d, 0, RIG_MEMORY_PINNED, &b));
      continue;
    }
    CHECK_OK(rig_buffer_create(d, 4096, RIG_MEMORY_PINNED, &b));
    expect_buffer(b, d, 4096, true, false);
    cr_expect(rig_buffer_host(b) != NULL, "%s: Pinned memory without a host address",
              rig_device_name(d));
    put_pattern(b, 3);
    rig_buffer_t *device_memory = create(d, 4096);
    CHECK_OK(rig_buffer_copy(b, device_memory));
    expect_pattern(device_memory, 3, 0);
    rig_buffer_unref(device_memory);
    rig_buffer_unref(b);
  }
}

Test(create, mapped_is_host_addressed_and_falls_back_to_device_memory) {
  /* BUF-16 BUF-18: Mapped memory, or the Pinned memory it falls back to, is
   * host-addressed.  BUF-19: where the host addresses d's memory, it falls
   * back to d's own memory, counted in d's budget and not the host's. */
  const int64_t n = 64 * KIB;
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    bool device_memory_addressed = host_addresses(d);
    CHECK_OK(rig_free_cache(d));
    int64_t device_before = rig_allocated(d);
    int64_t host_before = rig_allocated(rig_host());
    rig_buffer_t *b = NULL;
    CHECK_OK(rig_buffer_create(d, n, RIG_MEMORY_MAPPED, &b));
    expect_buffer(b, d, n, true, false);
    cr_expect(rig_buffer_host(b) != NULL, "%s: Mapped memory without a host address",
              rig_device_name(d));
    if (device_memory_addressed) {
      int64_t device_grew = rig_allocated(d) - device_before;
      if (is_host(d)) {
        cr_expect(device_grew >= n, "host: Mapped counted %lld", (long long)device_grew);
      } else {
        cr_expect(device_grew == n, "%s: Mapped counted %lld in its budget, want %lld",
                  rig_device_name(d), (long long)device_grew, (long long)n);
        cr_expect(rig_allocated(rig_host()) == host_before,
                  "%s: Mapped fell back to Pinned memory", rig_device_name(d));
      }
    }
    put_pattern(b, 5);
    rig_buffer_t *device_memory = create(d, n);
    CHECK_OK(rig_buffer_copy(b, device_memory));
    expect_pattern(device_memory, 5, 0);
    rig_buffer_unref(device_memory);
    rig_buffer_unref(b);
  }
}

Test(create, mapped_fallback_keeps_the_cache) {
  /* BUF-20: a cached allocation is still held after a Mapped create falls
   * back, so the device holds it and the new buffer both. */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    if (!host_addresses(d)) continue;
    rig_buffer_unref(create(d, 64 * KIB)); /* collected: enters d's cache */
    int64_t before = rig_allocated(d);
    rig_buffer_t *b = NULL;
    CHECK_OK(rig_buffer_create(d, 128 * KIB, RIG_MEMORY_MAPPED, &b));
    cr_expect(rig_allocated(d) >= before + 128 * KIB,
              "%s: held %lld before, %lld after a Mapped create of 128 KiB",
              rig_device_name(d), (long long)before, (long long)rig_allocated(d));
    rig_buffer_unref(b);
  }
}

Test(create, lost_device_answers_lost) {
  /* BUF-31 BUF-59 */
  rig_device_t *d = NULL;
  CHECK_OK(rig_memory_device("MEM:41", &d));
  rig_buffer_t *host_memory = create(rig_host(), 64 * KIB);
  CHECK_OK(rig_close(d));
  rig_buffer_t *b = NULL;
  CHECK_LOST(d, rig_buffer_create(d, 64, RIG_MEMORY_DEVICE, &b));
  CHECK_LOST(d, rig_buffer_borrow(d, host_memory, &b));
  rig_buffer_unref(host_memory);
}

/* ======================================================================= */
/* Making buffers: of_bytes and of_memory                                   */

Test(of_bytes, copies_the_bytes_onto_the_host) {
  /* BPROP-03 BPROP-08 BPROP-09 BPROP-11 */
  uint8_t source[100];
  for (int i = 0; i < 100; i++) source[i] = pattern_byte(i, 9);
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_of_bytes(source, 100, &b));
  expect_buffer(b, rig_host(), 100, true, false);
  expect_span(b, 0, 100);
  cr_expect(rig_buffer_host(b) != (void *)source, "of_bytes did not copy");
  memset(source, 0, sizeof source);
  expect_pattern(b, 9, 0);
  rig_buffer_unref(b);

  CHECK_OK(rig_buffer_of_bytes(source, 0, &b));
  expect_buffer(b, rig_host(), 0, true, false);
  rig_buffer_unref(b);
}

Test(of_bytes, refuses_bad_ranges) {
  uint8_t source[8] = {0};
  rig_buffer_t *b = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_of_bytes(source, -1, &b));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_of_bytes(NULL, 8, &b));
}

Test(of_memory, wraps_caller_memory_without_a_copy) {
  /* BUF-33 BPROP-03 BPROP-06 BPROP-09 BPROP-11 LOW-02 */
  static _Alignas(64) uint8_t memory[256];
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_of_memory(memory, sizeof memory, NULL, NULL, &b));
  expect_buffer(b, rig_host(), sizeof memory, true, true);
  cr_expect(rig_buffer_host(b) == (void *)memory);
  rig_buffer_t *part = view(b, 16, 32);
  expect_buffer(part, rig_host(), 32, false, true);
  cr_expect(rig_buffer_host(part) == (void *)(memory + 16));

  for (int i = 0; i < 256; i++) memory[i] = pattern_byte(i, 1);
  expect_pattern(b, 1, 0);
  put_pattern(b, 2);
  for (int i = 0; i < 256; i++) cr_expect(memory[i] == pattern_byte(i, 2));
  rig_buffer_unref(part);
  rig_buffer_unref(b);
}

Test(of_memory, releases_once_when_the_last_buffer_goes) {
  /* BUF-34: the memory lives while any buffer over it does (a view, a
   * borrow on every device that reaches it); release runs once, after. */
  /* On a page, so that every device that reaches host memory borrows it. */
  struct caller_memory m = {aligned_alloc((size_t)page_bytes(), 64 * KIB), 0};
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_of_memory(m.bytes, 64 * KIB, release_caller_memory, &m, &b));
  rig_buffer_t *holders[20];
  int nholders = 0;
  holders[nholders++] = view(b, 100, 1000);
  for (int k = 1; k < device_count(); k++) {
    rig_buffer_t *o = NULL;
    CHECK_OK(rig_buffer_borrow(device_at(k), b, &o));
    if (o) holders[nholders++] = o;
  }
  cr_assert(nholders >= 2, "the memory device made no borrow");
  rig_buffer_unref(b);
  for (int i = 0; i < nholders; i++) {
    collect_everywhere();
    cr_expect(m.releases == 0, "released while %d buffers remain", nholders - i);
    rig_buffer_unref(holders[i]);
  }
  collect_everywhere();
  cr_expect(m.releases == 1, "released %d times", m.releases);
  collect_everywhere();
  cr_expect(m.releases == 1, "released %d times", m.releases);
  if (m.releases == 0) free(m.bytes);
}

Test(of_memory, each_call_is_an_allocation_of_its_own) {
  /* BUF-36: two wraps of one memory share no memory in rig's order. */
  static _Alignas(64) uint8_t memory[64];
  rig_buffer_t *a = NULL, *b = NULL;
  CHECK_OK(rig_buffer_of_memory(memory, sizeof memory, NULL, NULL, &a));
  CHECK_OK(rig_buffer_of_memory(memory, sizeof memory, NULL, NULL, &b));
  cr_expect(a != b);
  cr_expect(rig_buffer_host(a) == rig_buffer_host(b));
  cr_expect(rig_buffer_spans(a) && rig_buffer_spans(b));
  cr_expect(!rig_buffer_overlaps(a, b), "two wraps of one memory overlap");
  cr_expect(!rig_buffer_share_byte(a, b), "two wraps of one memory share a byte");
  rig_buffer_unref(a);
  rig_buffer_unref(b);
}

Test(of_memory, refuses_bad_memory_and_wraps_empty_memory) {
  uint8_t memory[8];
  rig_buffer_t *b = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_of_memory(memory, -1, NULL, NULL, &b));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_of_memory(NULL, 8, NULL, NULL, &b));

  struct caller_memory empty = {NULL, 0};
  CHECK_OK(rig_buffer_of_memory(NULL, 0, release_caller_memory, &empty, &b));
  expect_buffer(b, rig_host(), 0, true, true);
  rig_buffer_unref(b);
  collect_everywhere();
  cr_expect(empty.releases == 1, "an empty wrap released %d times", empty.releases);
}

/* ======================================================================= */
/* Making buffers: view                                                     */

Test(view, is_the_bytes_of_its_buffer_in_its_memory) {
  /* BUF-01 BUF-04 BUF-44 BPROP-04 BPROP-08 BPROP-09 BPROP-10 BPROP-13
   * LOW-02 LOW-04 */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = create(d, 1000);
    put_pattern(b, 11);
    int64_t held = rig_allocated(d);

    rig_buffer_t *v = view(b, 100, 300);
    expect_buffer(v, d, 300, false, false);
    expect_span(v, 100, 1000);
    expect_pattern(v, 11, 100);
    if (rig_buffer_host(b))
      cr_expect(rig_buffer_host(v) == (uint8_t *)rig_buffer_host(b) + 100);

    rig_buffer_t *inner = view(v, 50, 10);
    expect_buffer(inner, d, 10, false, false);
    expect_span(inner, 150, 1000);
    expect_pattern(inner, 11, 150);

    rig_buffer_t *whole = view(b, 0, 1000);
    expect_buffer(whole, d, 1000, true, false);
    rig_buffer_t *empty_at_end = view(b, 1000, 0);
    expect_buffer(empty_at_end, d, 0, false, false);
    cr_expect(rig_allocated(d) == held, "%s: a view allocated", rig_device_name(d));

    /* Bytes written through the view are the buffer's, and only those. */
    put_pattern(v, 12);
    rig_buffer_t *again = view(b, 100, 300);
    rig_buffer_t *before = view(b, 0, 100);
    rig_buffer_t *after = view(b, 400, 600);
    expect_pattern(again, 12, 0);
    expect_pattern(before, 11, 0);
    expect_pattern(after, 11, 400);
    rig_buffer_unref(again);
    rig_buffer_unref(before);
    rig_buffer_unref(after);
    rig_buffer_unref(empty_at_end);
    rig_buffer_unref(whole);
    rig_buffer_unref(inner);
    rig_buffer_unref(v);
    rig_buffer_unref(b);
  }
}

Test(view, refuses_ranges_outside_its_buffer) {
  /* BUF-46 BUF-47 BUF-48, with first + length overflowing int64 */
  for (int k = 0; k < device_count(); k++) {
    rig_buffer_t *b = create(device_at(k), 1000);
    rig_buffer_t *v = view(b, 100, 300);
    rig_buffer_t *out = NULL;
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, -1, 10, &out));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, INT64_MIN, 10, &out));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, 0, -1, &out));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, 0, 1001, &out));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, 1001, 0, &out));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, 500, 501, &out));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, INT64_MAX, 1, &out));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, 1, INT64_MAX, &out));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, INT64_MAX, INT64_MAX, &out));
    /* A view's bounds are its own, not its buffer's. */
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(v, 0, 301, &out));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_view(v, 300, 1, &out));
    rig_buffer_unref(v);
    rig_buffer_unref(b);
  }
  rig_buffer_t *out = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_view(NULL, 0, 0, &out));
}

/* ======================================================================= */
/* Making buffers: borrow                                                   */

/* Bytes written through either of b and o, buffers over the same bytes,
 * are read through the other (BUF-04 BUF-49). */
static void expect_shared_bytes(rig_buffer_t *b, rig_buffer_t *o) {
  put_pattern(b, 21);
  expect_pattern(o, 21, 0);
  put_pattern(o, 22);
  expect_pattern(b, 22, 0);
}

Test(borrow, of_host_memory_on_a_memory_device) {
  /* BUF-49 BPROP-02 BPROP-07 BPROP-09 BPROP-10 BPROP-13 MACH-16 LOW-04 */
  rig_device_t *m = memory_device();
  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  rig_buffer_t *o = borrow(m, h);
  expect_buffer(o, m, 64 * KIB, true, true);
  expect_span(o, 0, 64 * KIB);
  cr_expect(rig_buffer_host(o) == rig_buffer_host(h));
  expect_shared_bytes(h, o);

  rig_buffer_t *part = view(o, 4096, 100);
  expect_buffer(part, m, 100, false, true);
  expect_span(part, 4096, 64 * KIB);
  rig_buffer_t *host_part = view(h, 8192, 50);
  rig_buffer_t *of_part = borrow(m, host_part);
  expect_buffer(of_part, m, 50, false, true);
  expect_span(of_part, 8192, 64 * KIB);
  cr_expect(rig_buffer_host(of_part) == (uint8_t *)rig_buffer_host(h) + 8192);
  rig_buffer_unref(of_part);
  rig_buffer_unref(host_part);
  rig_buffer_unref(part);
  rig_buffer_unref(o);
  rig_buffer_unref(h);
}

Test(borrow, of_memory_device_memory_on_the_host) {
  /* BUF-49 BPROP-02 BPROP-07 BPROP-09 MACH-16 */
  rig_device_t *m = memory_device();
  rig_buffer_t *b = create(m, 4096);
  rig_buffer_t *o = borrow(rig_host(), b);
  expect_buffer(o, rig_host(), 4096, true, true);
  expect_span(o, 0, 4096);
  cr_expect(rig_buffer_host(o) == rig_buffer_host(b));
  expect_shared_bytes(b, o);
  rig_buffer_t *part = view(o, 64, 64);
  expect_buffer(part, rig_host(), 64, false, true);
  rig_buffer_unref(part);
  rig_buffer_unref(o);
  rig_buffer_unref(b);
}

Test(borrow, follows_reaches_between_every_pair_of_devices) {
  /* BUF-49 BUF-50 MACH-16: a borrow of created, page-aligned memory exists
   * iff the borrowing device reaches its owner, and shares its bytes. */
  for (int owner_k = 0; owner_k < device_count(); owner_k++) {
    rig_device_t *owner = device_at(owner_k);
    rig_buffer_t *b = create(owner, 64 * KIB);
    for (int k = 0; k < device_count(); k++) {
      rig_device_t *d = device_at(k);
      if (rig_device_equal(d, owner)) continue;
      rig_buffer_t *o = NULL;
      CHECK_OK(rig_buffer_borrow(d, b, &o));
      bool reaches = rig_reaches(d, owner);
      cr_expect((o != NULL) == reaches, "borrow on %s of %s's memory: %s, reaches %d",
                rig_device_name(d), rig_device_name(owner), o ? "made" : "NULL", reaches);
      if (!o) continue;
      expect_buffer(o, d, 64 * KIB, true, true);
      expect_shared_bytes(b, o);
      rig_buffer_unref(o);
    }
    rig_buffer_unref(b);
  }
}

Test(borrow, on_its_own_device_is_the_buffer_itself) {
  /* BUF-53 BPROP-08 */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = create(d, 256);
    rig_buffer_t *v = view(b, 8, 8);
    rig_buffer_t *o = NULL;
    CHECK_OK(rig_buffer_borrow(d, b, &o));
    cr_expect(o == b, "%s: borrow on b's own device is not b", rig_device_name(d));
    cr_expect(!rig_buffer_is_borrowed(o));
    rig_buffer_unref(o);
    CHECK_OK(rig_buffer_borrow(d, v, &o));
    cr_expect(o == v);
    rig_buffer_unref(o);
    /* Both references were the caller's: b and v still live. */
    expect_buffer(b, d, 256, true, false);
    expect_buffer(v, d, 8, false, false);
    rig_buffer_unref(v);
    rig_buffer_unref(b);
  }
}

/* Checks that borrow o keeps its memory alive once the caller released
 * every other buffer over it: its bytes still hold the pattern of seed and
 * a new allocation on the owner of bytes bytes lies elsewhere. */
static void expect_kept_alive(rig_buffer_t *o, rig_device_t *owner, int64_t bytes, int seed) {
  cr_expect(rig_buffer_dead(o) == NULL);
  collect_everywhere();
  rig_buffer_t *fresh = create(owner, bytes);
  cr_expect(ranges_disjoint(rig_buffer_host(fresh), bytes, rig_buffer_host(o), bytes),
            "%s reused memory a borrow holds", rig_device_name(owner));
  put_pattern(fresh, seed + 1);
  expect_pattern(o, seed, 0);
  rig_buffer_unref(fresh);
}

Test(borrow, keeps_the_memory_alive) {
  /* BUF-54: releasing the original leaves the borrow and its bytes. */
  rig_device_t *m = memory_device();
  rig_buffer_t *b = create(m, 64 * KIB);
  put_pattern(b, 31);
  rig_buffer_t *on_host = borrow(rig_host(), b);
  rig_buffer_unref(b);
  expect_kept_alive(on_host, m, 64 * KIB, 31);
  rig_buffer_unref(on_host);

  rig_buffer_t *h = create(rig_host(), 64 * KIB);
  put_pattern(h, 33);
  rig_buffer_t *on_memory_device = borrow(m, h);
  rig_buffer_unref(h);
  expect_kept_alive(on_memory_device, rig_host(), 64 * KIB, 33);
  rig_buffer_unref(on_memory_device);
}

Test(borrow, empty_memory_borrows_on_every_device) {
  /* BUF-12, whatever rig_reaches says */
  for (int owner_k = 0; owner_k < device_count(); owner_k++) {
    rig_device_t *owner = device_at(owner_k);
    rig_buffer_t *b = create(owner, 0);
    for (int k = 0; k < device_count(); k++) {
      rig_device_t *d = device_at(k);
      rig_buffer_t *o = NULL;
      CHECK_OK(rig_buffer_borrow(d, b, &o));
      cr_expect(o != NULL, "no borrow on %s of %s's empty memory", rig_device_name(d),
                rig_device_name(owner));
      if (!o) continue;
      cr_expect(rig_device_equal(rig_buffer_device(o), d));
      cr_expect(rig_buffer_bytes(o) == 0);
      rig_buffer_unref(o);
    }
    rig_buffer_unref(b);
  }
}

Test(borrow, host_memory_off_a_page) {
  /* MACH-18: the host and memory devices borrow host memory that does not
   * start on a page (a 100-byte host buffer, caller memory 16 bytes past a
   * page); BUF-52: a driver's device does not. */
  const int64_t page = page_bytes();
  uint8_t *pages = aligned_alloc((size_t)page, (size_t)(2 * page));
  rig_buffer_t *wrapped = NULL;
  CHECK_OK(rig_buffer_of_memory(pages + 16, 100, NULL, NULL, &wrapped));
  rig_buffer_t *small = create(rig_host(), 100);
  rig_buffer_t *off_page[] = {wrapped, small};
  for (size_t i = 0; i < 2; i++) {
    rig_buffer_t *b = off_page[i];
    bool on_a_page = (uintptr_t)rig_buffer_host(b) % (uintptr_t)page == 0;
    for (int k = 1; k < device_count(); k++) {
      rig_device_t *d = device_at(k);
      rig_buffer_t *o = NULL;
      CHECK_OK(rig_buffer_borrow(d, b, &o));
      if (is_memory_device(d)) {
        cr_expect(o != NULL, "%s did not borrow host memory off a page", rig_device_name(d));
        if (o) expect_shared_bytes(b, o);
      } else if (!on_a_page) {
        cr_expect(o == NULL, "%s borrowed host memory off a page", rig_device_name(d));
      }
      rig_buffer_unref(o);
    }
  }
  rig_buffer_unref(small);
  rig_buffer_unref(wrapped);
  collect_everywhere();
  free(pages);
}

Test(borrow, refuses_null_handles) {
  rig_buffer_t *b = create(rig_host(), 64);
  rig_buffer_t *o = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_borrow(memory_device(), NULL, &o));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_borrow(NULL, b, &o));
  rig_buffer_unref(b);
}

/* ======================================================================= */
/* Words                                                                    */

struct word_case {
  int64_t a_first, a_length, b_first, b_length;
  bool overlaps, share_byte;
};

/* Views of one buffer starting on a word: which share a word, a byte. */
static const struct word_case word_cases[] = {
    {0, 1, 1, 1, true, false},   /* bytes of one word, no common byte */
    {0, 2, 2, 2, true, false},
    {1, 2, 3, 5, true, false},   /* the second runs into the next word */
    {0, 4, 4, 4, false, false},  /* neighbouring words */
    {0, 3, 2, 3, true, true},
    {4, 8, 0, 16, true, true},
    {0, 0, 0, 4, false, false},  /* an empty view holds no word */
    {5, 3, 8, 4, false, false},
};

Test(words, overlap_is_a_common_word_and_share_byte_a_common_byte) {
  /* WORD-01 WORD-03 WORD-09 */
  cr_expect(rig_word() == 4 && RIG_WORD_BYTES == 4);
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = create(d, 16);
    rig_buffer_t *other = create(d, 16);
    for (size_t i = 0; i < sizeof word_cases / sizeof word_cases[0]; i++) {
      const struct word_case *c = &word_cases[i];
      rig_buffer_t *x = view(b, c->a_first, c->a_length);
      rig_buffer_t *y = view(b, c->b_first, c->b_length);
      cr_expect(rig_buffer_overlaps(x, y) == c->overlaps && rig_buffer_overlaps(y, x) == c->overlaps,
                "%s: [%lld,+%lld) and [%lld,+%lld) overlap %d, want %d", rig_device_name(d),
                (long long)c->a_first, (long long)c->a_length, (long long)c->b_first,
                (long long)c->b_length, rig_buffer_overlaps(x, y), c->overlaps);
      cr_expect(rig_buffer_share_byte(x, y) == c->share_byte &&
                    rig_buffer_share_byte(y, x) == c->share_byte,
                "%s: [%lld,+%lld) and [%lld,+%lld) share a byte %d, want %d",
                rig_device_name(d), (long long)c->a_first, (long long)c->a_length,
                (long long)c->b_first, (long long)c->b_length, rig_buffer_share_byte(x, y),
                c->share_byte);
      rig_buffer_unref(x);
      rig_buffer_unref(y);
    }
    cr_expect(rig_buffer_overlaps(b, b) && rig_buffer_share_byte(b, b));
    cr_expect(!rig_buffer_overlaps(b, other) && !rig_buffer_share_byte(b, other));
    rig_buffer_unref(other);
    rig_buffer_unref(b);
  }
}

Test(words, host_memory_words_start_at_multiples_of_the_word) {
  /* WORD-02: host memory's words are counted from address 0, not from the
   * allocation's first byte, here 1 byte past a word. */
  static _Alignas(64) uint8_t memory[16];
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_of_memory(memory + 1, 8, NULL, NULL, &b));
  rig_buffer_t *at_3 = view(b, 2, 1);  /* memory[3]: word 0 */
  rig_buffer_t *at_4 = view(b, 3, 1);  /* memory[4]: word 1 */
  rig_buffer_t *at_5 = view(b, 4, 1);  /* memory[5]: word 1 */
  cr_expect(!rig_buffer_overlaps(at_3, at_4), "bytes of two host words overlap");
  cr_expect(rig_buffer_overlaps(at_4, at_5), "bytes of one host word do not overlap");
  cr_expect(!rig_buffer_share_byte(at_4, at_5));
  rig_buffer_unref(at_5);
  rig_buffer_unref(at_4);
  rig_buffer_unref(at_3);
  rig_buffer_unref(b);
}

Test(words, copy_refuses_a_common_byte_but_not_a_common_word) {
  /* WORD-05 WORD-06 */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = create(d, 16);
    put_pattern(b, 41);
    rig_buffer_t *low = view(b, 0, 2), *high = view(b, 2, 2);
    CHECK_OK(rig_buffer_copy(low, high));
    expect_pattern(high, 41, 0);
    expect_pattern(low, 41, 0);

    rig_buffer_t *x = view(b, 0, 3), *y = view(b, 2, 3);
    CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(x, y));
    rig_point_t p;
    rig_box_t box = rig_row(0, 0, 3);
    CHECK_FAILS(RIG_EINVAL, rig_buffer_submit_copy(x, y, &box, 1, NULL, 0, &p));
    CHECK_FAILS(RIG_EINVAL, rig_buffer_copy(b, b));
    rig_buffer_unref(x);
    rig_buffer_unref(y);
    rig_buffer_unref(low);
    rig_buffer_unref(high);
    rig_buffer_unref(b);
  }
}

/* ======================================================================= */
/* Low level: aligned, handle                                               */

static const int64_t some_ats[] = {0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 63, 64, 100, 4095, 4096,
                                   -1, -3, -64, -4096, 1000000007};

Test(aligned, is_arithmetic_on_the_work_address) {
  /* LOW-13 LOW-14: for devices whose work is this process's code the work
   * address is the host address; on every device a view at first answers as
   * its buffer does at at + first. */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = create(d, 256);
    rig_buffer_t *v = view(b, 3, 100);
    uintptr_t host = rig_device_runs_on_host(d) ? (uintptr_t)rig_buffer_host(b) : 0;
    for (size_t i = 0; i < sizeof some_ats / sizeof some_ats[0]; i++) {
      int64_t at = some_ats[i];
      for (int64_t n = 1; n <= rig_device_alignment(d); n *= 2) {
        bool of_view = false, of_buffer = false;
        CHECK_OK(rig_buffer_aligned(v, at, n, &of_view));
        CHECK_OK(rig_buffer_aligned(b, at + 3, n, &of_buffer));
        cr_expect(of_view == of_buffer, "%s: view at %lld, n %lld", rig_device_name(d),
                  (long long)at, (long long)n);
        if (n == 1) cr_expect(of_buffer);
      }
      if (!host) continue;
      for (int shift = 0; shift <= 62; shift++) {
        int64_t n = (int64_t)1 << shift;
        bool got = false;
        CHECK_OK(rig_buffer_aligned(v, at, n, &got));
        bool want = (host + 3 + (uintptr_t)at) % (uintptr_t)n == 0;
        cr_expect(got == want, "%s: aligned(view, %lld, %lld) %d, want %d", rig_device_name(d),
                  (long long)at, (long long)n, got, want);
      }
    }
    if (host) {
      const int64_t extremes[] = {INT64_MAX, INT64_MIN, INT64_MIN + 1};
      for (size_t i = 0; i < 3; i++) {
        for (int64_t n = 1; n <= 4096; n *= 2) {
          bool got = false;
          CHECK_OK(rig_buffer_aligned(b, extremes[i], n, &got));
          cr_expect(got == ((host + (uintptr_t)extremes[i]) % (uintptr_t)n == 0));
        }
      }
    }
    rig_buffer_unref(v);
    rig_buffer_unref(b);
  }
}

Test(aligned, refuses_n_that_is_not_a_positive_power_of_two) {
  /* LOW-19 */
  const int64_t bad[] = {0, -1, -8, 3, 6, 12, 96, INT64_MAX, INT64_MIN};
  for (int k = 0; k < device_count(); k++) {
    rig_buffer_t *b = create(device_at(k), 64);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      bool out = false;
      CHECK_FAILS(RIG_EINVAL, rig_buffer_aligned(b, 0, bad[i], &out));
    }
    rig_buffer_unref(b);
  }
  bool out = false;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_aligned(NULL, 0, 4, &out));
}

Test(handle, refuses_host_memory) {
  /* LOW-36: host memory, however made or borrowed, has no driver object. */
  static uint8_t caller[64];
  rig_buffer_t *created = create(rig_host(), 4096);
  rig_buffer_t *copied = NULL, *wrapped = NULL;
  CHECK_OK(rig_buffer_of_bytes(caller, sizeof caller, &copied));
  CHECK_OK(rig_buffer_of_memory(caller, sizeof caller, NULL, NULL, &wrapped));
  rig_buffer_t *part = view(created, 16, 16);
  rig_buffer_t *on_memory_device = borrow(memory_device(), created);
  rig_buffer_t *host_memory[] = {created, copied, wrapped, part, on_memory_device};
  for (size_t i = 0; i < sizeof host_memory / sizeof host_memory[0]; i++) {
    uint64_t handle = 0;
    int64_t offset = 0;
    CHECK_FAILS(RIG_EINVAL, rig_buffer_handle(host_memory[i], &handle, &offset));
  }
  for (size_t i = 0; i < sizeof host_memory / sizeof host_memory[0]; i++)
    rig_buffer_unref(host_memory[i]);
  uint64_t handle = 0;
  int64_t offset = 0;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_handle(NULL, &handle, &offset));
}

Test(handle, names_a_driver_devices_memory) {
  /* LOW-33: a view starts its offset further into the same object; LOW-34:
   * an empty created buffer's object is 0. */
  for (int k = 1; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    if (is_host(d)) continue;
    rig_buffer_t *b = create(d, 4096);
    rig_buffer_t *v = view(b, 100, 200);
    uint64_t handle = 1, view_handle = 2;
    int64_t offset = -1, view_offset = -1;
    CHECK_OK(rig_buffer_handle(b, &handle, &offset));
    CHECK_OK(rig_buffer_handle(v, &view_handle, &view_offset));
    cr_expect(view_handle == handle, "%s: a view's object differs", rig_device_name(d));
    cr_expect(view_offset == offset + 100, "%s: view offset %lld, buffer's %lld",
              rig_device_name(d), (long long)view_offset, (long long)offset);
    rig_buffer_unref(v);
    rig_buffer_unref(b);

    rig_buffer_t *empty = create(d, 0);
    handle = 1;
    CHECK_OK(rig_buffer_handle(empty, &handle, &offset));
    cr_expect(handle == 0, "%s: an empty buffer's object is %llu", rig_device_name(d),
              (unsigned long long)handle);
    rig_buffer_unref(empty);
  }
}

/* ======================================================================= */
/* Dead buffers and claims (rig_buffer_free, rig_buffer_claim)              */

/* Frees b's memory with why, which must succeed. */
static void free_memory(rig_buffer_t *b, const char *why) {
  cr_assert(try_free(b, why), "rig_buffer_free of %s's buffer refused",
            rig_device_name(rig_buffer_device(b)));
}

/* Every use of the dead buffer b is refused; its properties still answer. */
static void expect_dead(rig_buffer_t *b, const char *why) {
  const char *dead = rig_buffer_dead(b);
  cr_expect(dead && strcmp(dead, why) == 0, "dead %s, want %s", dead ? dead : "NULL", why);
  const char *low = rig_buffer_why(b);
  cr_expect(low && strcmp(low, why) == 0, "rig_buffer_why %s, want %s", low ? low : "NULL",
            why);
  rig_buffer_t *out = NULL;
  bool answer = false;
  uint64_t handle = 0;
  int64_t offset = 0;
  CHECK_FAILS(RIG_EINVAL, rig_buffer_view(b, 0, 0, &out));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_borrow(rig_host(), b, &out));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_borrow(rig_buffer_device(b), b, &out));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_aligned(b, 0, 1, &answer));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_handle(b, &handle, &offset));
  CHECK_FAILS(RIG_EINVAL, rig_buffer_free(b, NULL, &answer));
  cr_expect(rig_buffer_claim(b, RIG_ACCESS_READ) == RIG_CLAIM_DEAD);
}

Test(dead, buffers_keep_their_properties_and_refuse_every_use) {
  /* BPROP-01 BPROP-20 BUF-45 BUF-57 BUF-66 BUF-70 LOW-05 LOW-17 LOW-35: a
   * freed buffer, its views and its borrows are dead with free's reason. */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = create(d, 4096);
    rig_buffer_t *part = view(b, 100, 200);
    rig_device_t *borrower = is_host(d) ? memory_device() : rig_host();
    rig_buffer_t *borrowed = NULL;
    CHECK_OK(rig_buffer_borrow(borrower, b, &borrowed));
    free_memory(b, "retired");

    expect_dead(b, "retired");
    expect_properties(b, d, 4096, true, false);
    expect_dead(part, "retired");
    expect_properties(part, d, 200, false, false);
    if (borrowed) {
      expect_dead(borrowed, "retired");
      expect_properties(borrowed, borrower, 4096, true, true);
    }
    rig_buffer_unref(borrowed);
    rig_buffer_unref(part);
    rig_buffer_unref(b);
  }
  rig_buffer_t *b = create(rig_host(), 64);
  free_memory(b, NULL);
  expect_dead(b, "freed"); /* BUF-67 */
  rig_buffer_unref(b);
}

Test(claims, a_claim_keeps_the_memory_from_free) {
  /* LOW-01 LOW-06 LOW-07 LOW-08 */
  for (int k = 0; k < device_count(); k++) {
    rig_device_t *d = device_at(k);
    rig_buffer_t *b = create(d, 4096);
    rig_buffer_t *part = view(b, 0, 100);
    cr_expect(rig_buffer_claim(part, RIG_ACCESS_READ) == RIG_CLAIMED,
              "%s: fresh memory has work to wait for", rig_device_name(d));
    bool freed = true;
    CHECK_OK(rig_buffer_free(b, NULL, &freed));
    cr_expect(!freed && rig_buffer_dead(b) == NULL, "%s: freed under a claim", rig_device_name(d));
    CHECK_OK(rig_buffer_wait(part, RIG_ACCESS_READ));
    rig_buffer_release(part);
    free_memory(b, NULL);
    rig_buffer_unref(part);
    rig_buffer_unref(b);
  }
}

Test(of_memory, is_outside_the_claims) {
  /* BUF-35 */
  static uint8_t caller[64];
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_of_memory(caller, sizeof caller, NULL, NULL, &b));
  bool freed = true;
  CHECK_OK(rig_buffer_free(b, NULL, &freed));
  cr_expect(!freed && rig_buffer_dead(b) == NULL, "caller memory was freed");
  bool exclusive = false;
  CHECK_FAILS(RIG_EINVAL, rig_claim_begin(b, &exclusive));
  rig_buffer_unref(b);
}
