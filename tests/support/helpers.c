/* The helpers helpers.h declares, shared by the Criterion suites. */
#define _POSIX_C_SOURCE 200809L

#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "devices.h"

/* ---- Bytes -------------------------------------------------------------- */

uint8_t *allocate_bytes(int64_t n) {
  uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
  cr_assert(p != NULL, "malloc(%lld) failed", (long long)n);
  return p;
}

int64_t whole_words(int64_t n) {
  return (n + RIG_WORD_BYTES - 1) / RIG_WORD_BYTES * RIG_WORD_BYTES;
}

void nap_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* ---- Devices ------------------------------------------------------------ */

rig_device_t *open_named(const char *name) {
  rig_device_t *d = NULL;
  CHECK_OK(rig_open(name, NULL, &d), "%s", name);
  cr_assert(d != NULL, "open %s gave no device", name);
  return d;
}

rig_device_t *open_with(const char *name, const char *config) {
  rig_open_options_t options = {sizeof options, config};
  rig_device_t *d = NULL;
  CHECK_OK(rig_open(name, &options, &d), "%s with \"%s\"", name, config ? config : "");
  cr_assert(d != NULL, "open %s gave no device", name);
  return d;
}

rig_device_t *open_closable(int number, char name[32]) {
  const char *model = test_device_name(0);
  size_t prefix = strcspn(model, ":");
  rig_device_t *d = NULL;
  if (model[prefix] == ':' && prefix < 16) {
    snprintf(name, 32, "%.*s:%d", (int)prefix, model, number);
    if (rig_open(name, NULL, &d) == RIG_OK && d != NULL) return d;
  }
  snprintf(name, 32, "MEM:%d", number);
  return open_named(name);
}

bool host_addresses(rig_device_t *d) {
  rig_buffer_t *b = create(d, 64);
  bool addressed = rig_buffer_host(b) != NULL;
  rig_buffer_unref(b);
  CHECK_OK(rig_free_cache(d));
  return addressed;
}

bool same_slot(const rig_device_t *a, const rig_device_t *b) {
  return rig_point_make(a, 0).bits == rig_point_make(b, 0).bits;
}

void assert_kept_pointer_closed(rig_device_t *d) {
  const char *why = rig_lost(d);
  cr_assert(why != NULL && (strcmp(why, "the device was closed and its record retired") == 0 ||
                            strcmp(why, "closed") == 0),
            "DEV-41: the kept pointer answers %s", why ? why : "(not lost)");
  rig_status_t s = rig_close(d);
  cr_assert(s == RIG_OK || (s == RIG_ELOST && strcmp(rig_last_error(), "the device was closed and its record retired") == 0),
            "a close of the kept pointer answered %s (%s)", rig_status_name(s), rig_last_error());
}

/* ---- Images ------------------------------------------------------------- */

rig_function_t *function_of(rig_image_t *i, const char *name) {
  rig_function_t *f = NULL;
  CHECK_OK(rig_image_resolve(i, name, &f), "resolving %s", name);
  cr_assert_not_null(f, "the image has no function %s", name);
  return f;
}

/* ---- Buffers ------------------------------------------------------------ */

rig_buffer_t *create(rig_device_t *d, int64_t n) { return create_kind(d, n, RIG_MEMORY_DEVICE); }

rig_buffer_t *create_kind(rig_device_t *d, int64_t n, rig_memory_t kind) {
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_create(d, n, kind, &b), "%s", rig_device_name(d));
  cr_assert(b != NULL, "rig_buffer_create on %s gave no buffer", rig_device_name(d));
  return b;
}

rig_buffer_t *view(rig_buffer_t *b, int64_t first, int64_t length) {
  rig_buffer_t *v = NULL;
  CHECK_OK(rig_buffer_view(b, first, length, &v));
  cr_assert(v != NULL, "rig_buffer_view gave no view");
  return v;
}

rig_buffer_t *borrow(rig_device_t *d, rig_buffer_t *b) {
  rig_buffer_t *o = borrow_or_null(d, b);
  cr_assert(o != NULL, "no borrow of %s's buffer on %s", rig_device_name(rig_buffer_device(b)),
            rig_device_name(d));
  return o;
}

rig_buffer_t *borrow_or_null(rig_device_t *d, rig_buffer_t *b) {
  rig_buffer_t *o = NULL;
  CHECK_OK(rig_buffer_borrow(d, b, &o), "%s", rig_device_name(d));
  return o;
}

/* The answer of end (rig_buffer_free or rig_buffer_unborrow, named name) of
 * b, which must answer RIG_OK and write its answer. */
static bool early_return(rig_status_t (*end)(rig_buffer_t *, const char *, bool *),
                         const char *name, rig_buffer_t *b, const char *why) {
  /* The answer starts as neither false nor true, so that one the call did
   * not write shows. */
  union {
    bool answer;
    unsigned char byte;
  } ended = {.byte = 2};
  CHECK_OK(end(b, why, &ended.answer), "%s", name);
  cr_assert(ended.byte <= 1, "%s answered RIG_OK without its answer", name);
  return ended.byte == 1;
}

bool try_free(rig_buffer_t *b, const char *why) {
  return early_return(rig_buffer_free, "rig_buffer_free", b, why);
}

bool try_unborrow(rig_buffer_t *b, const char *why) {
  return early_return(rig_buffer_unborrow, "rig_buffer_unborrow", b, why);
}

/* ---- Work and points ---------------------------------------------------- */

rig_point_t submit_fill(rig_buffer_t *b, uint8_t c) { return submit_fill_after(b, c, NULL, 0); }

rig_point_t submit_fill_after(rig_buffer_t *b, uint8_t c, const rig_point_t *waits, size_t nwaits) {
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_fill(b, c, waits, nwaits, &p));
  return p;
}

rig_point_t submit_copy(rig_buffer_t *src, rig_buffer_t *dst, const rig_box_t *boxes, size_t n) {
  rig_point_t p;
  CHECK_OK(rig_buffer_submit_copy(src, dst, boxes, n, NULL, 0, &p));
  return p;
}

rig_point_t submit_copy_all(rig_buffer_t *src, rig_buffer_t *dst) {
  rig_box_t row = rig_row(0, 0, rig_buffer_bytes(src));
  return submit_copy(src, dst, &row, 1);
}

bool point_reached(rig_point_t p) {
  bool reached = false;
  CHECK_OK(rig_point_reached(p, &reached));
  return reached;
}

/* ---- Host access functions ---------------------------------------------- */

int read_nothing(void *bytes, int64_t n, void *context) {
  (void)bytes, (void)n, (void)context;
  return 0;
}

int write_nothing(void *bytes, int64_t n, void *context) {
  (void)bytes, (void)n, (void)context;
  return 0;
}

int all_bytes_are(void *bytes, int64_t n, void *context) {
  uint8_t want = *(const uint8_t *)context;
  const uint8_t *p = bytes;
  for (int64_t i = 0; i < n; i++)
    if (p[i] != want) return (int)i + 1;
  return 0;
}

int set_bytes(void *bytes, int64_t n, void *context) {
  memset(bytes, *(const uint8_t *)context, (size_t)n);
  return 0;
}

/* ---- Lost devices and sim devices --------------------------------------- */

void assert_lost_with(const rig_device_t *d, const char *why) {
  const char *lost = rig_lost(d);
  cr_assert(lost != NULL && strcmp(lost, why) == 0, "%s: lost answers \"%s\", want \"%s\"",
            rig_device_name(d), lost ? lost : "(live)", why);
}

void await_stopped(rig_device_t *d) {
  uint64_t signaled = 0;
  for (int i = 0; i < 5000; i++) {
    CHECK_OK(rig_signaled(d, &signaled), "%s, lost", rig_device_name(d));
    if (signaled >= rig_submitted(d)) return;
    nap_ms(1);
  }
  cr_assert_fail("%s reports %llu after its stop, not its last value %llu (STOP-01, TL-19)",
                 rig_device_name(d), (unsigned long long)signaled,
                 (unsigned long long)rig_submitted(d));
}

const rig_sim_inject_t *sim_inject(const rig_device_t *d) {
  const rig_sim_inject_t *inj = rig_device_capability(d, RIG_SIM_INJECT_KEY);
  cr_assert_not_null(inj, "%s declares no %s capability", rig_device_name(d), RIG_SIM_INJECT_KEY);
  return inj;
}

int64_t sim_stops(const rig_device_t *d) {
  const rig_sim_inject_t *inj = sim_inject(d);
  return inj->stops(inj->device);
}

int64_t sim_frees(const rig_device_t *d) {
  const rig_sim_inject_t *inj = sim_inject(d);
  return inj->frees(inj->device);
}

int64_t sim_live_mappings(const rig_device_t *d) {
  const rig_sim_inject_t *inj = sim_inject(d);
  return inj->maps(inj->device) - inj->unmaps(inj->device);
}

void sim_fault_next(const rig_device_t *d, const char *why) {
  const rig_sim_inject_t *inj = sim_inject(d);
  inj->fault_at(inj->device, rig_submitted(d) + 1, why);
}

rig_point_t lose_by_fault(rig_device_t *d, rig_buffer_t *b, const char *why) {
  sim_fault_next(d, why);
  rig_point_t p = submit_fill(b, 0xee);
  CHECK_LOST(d, rig_point_wait(p));
  assert_lost_with(d, why);
  return p;
}
