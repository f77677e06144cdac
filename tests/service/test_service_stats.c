/* rig_service_stats and rig_service_drop (rig/service.h): rigd's counters
 * read on its admin channel, by the C API, on the rigd of the CTest
 * fixture ($RIG_SERVICE), which the tests (root, or rigd's own user) may
 * administer.  Each test runs in a process of its own (Criterion's) and
 * finds itself among rigd's clients by its pid.
 *
 * No rule ID: rigd's counters and admin channel are the design's
 * (DESIGN.md "The per-host service", Operators) and rigd(8)'s. */
#include <criterion/criterion.h>

#include <rig/rig.h>
#include <rig/service.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A memory device of rigd's, by which this process is rigd's client. */
static rig_device_t *open_served(const char *name) {
  rig_device_t *d = NULL;
  rig_status_t status = rig_open(name, NULL, &d);
  cr_assert(status == RIG_OK && d, "rig_open(%s): %s: %s", name, rig_status_name(status), rig_last_error());
  return d;
}

static rig_service_stats_t *snapshot(void) {
  rig_service_stats_t *s = NULL;
  rig_status_t status = rig_service_stats(NULL, &s);
  cr_assert(status == RIG_OK && s, "rig_service_stats: %s: %s", rig_status_name(status), rig_last_error());
  return s;
}

/* This process's client in s, its index in *index; false where none. */
static bool find_self(const rig_service_stats_t *s, rig_service_client_info_t *out, size_t *index) {
  for (size_t i = 0; i < rig_service_stats_clients(s); i++) {
    out->size = sizeof *out;
    cr_assert_eq(rig_service_stats_client(s, i, out), RIG_OK, "%s", rig_last_error());
    if (out->pid == getpid()) {
      *index = i;
      return true;
    }
  }
  return false;
}

/* The bytes client i of s holds on the served device name, or -1 where it
 * does not use it. */
static int64_t bytes_on(const rig_service_stats_t *s, size_t i, size_t uses, const char *name) {
  for (size_t j = 0; j < uses; j++) {
    rig_service_use_info_t u = {.size = sizeof u};
    cr_assert_eq(rig_service_stats_use(s, i, j, &u), RIG_OK, "%s", rig_last_error());
    if (strcmp(u.device, name) == 0) {
      cr_assert_geq(u.instances, 1, "a device the client uses has its instance");
      return (int64_t)u.bytes;
    }
  }
  return -1;
}

Test(service_stats, a_client_appears_with_its_bytes_and_work) {
  rig_device_t *d = open_served("MEM:0@rigd");
  enum { bytes = 3 << 20 };
  rig_buffer_t *b = NULL;
  cr_assert_eq(rig_buffer_create(d, bytes, RIG_MEMORY_DEVICE, &b), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_buffer_fill(b, 7), RIG_OK);
  uint8_t seen[64];
  cr_assert_eq(rig_buffer_blit_to_bytes(b, 0, seen, sizeof seen, 0, sizeof seen), RIG_OK);

  rig_service_stats_t *s = snapshot();
  rig_service_client_info_t me;
  size_t i = 0;
  cr_assert(find_self(s, &me, &i), "the snapshot lists this process among %zu clients",
            rig_service_stats_clients(s));
  cr_assert_eq(me.uid, getuid());
  cr_assert_not_null(me.user);
  cr_assert(me.id != 0 && me.connected_ns > 0);
  cr_assert_eq(strncmp(me.command, "service_test_se", 15), 0, "the command is /proc/PID/comm: \"%s\"", me.command);
  cr_assert_eq(bytes_on(s, i, me.uses, "MEM:0"), bytes, "the client holds its buffer's bytes on MEM:0");
  cr_assert_geq(me.device_bytes, (uint64_t)bytes);
  cr_assert_eq(me.quota_bytes, RIG_SERVICE_UNBOUNDED, "the fixture's rigd sets no quota");
  cr_assert_geq(me.submissions, 1, "the fill and the copy were handed over");
  cr_assert_str_eq(me.lost, "");
  cr_assert_eq(me.faults, 0);

  bool served = false;
  for (size_t k = 0; k < rig_service_stats_devices(s); k++) {
    rig_service_device_info_t dev = {.size = sizeof dev};
    cr_assert_eq(rig_service_stats_device(s, k, &dev), RIG_OK);
    if (strcmp(dev.name, "MEM:0") != 0) continue;
    served = true;
    cr_assert_geq(dev.clients, 1);
    cr_assert_geq(dev.instances, 1);
    cr_assert_geq(dev.allocated, (uint64_t)bytes, "what rigd allocated holds the client's buffer");
  }
  cr_assert(served, "the snapshot lists the served device MEM:0");
  rig_service_stats_release(s);

  rig_buffer_unref(b);
  cr_assert_eq(rig_free_cache(d), RIG_OK);
  s = snapshot();
  cr_assert(find_self(s, &me, &i));
  cr_assert_eq(bytes_on(s, i, me.uses, "MEM:0"), 0, "the freed buffer's bytes went back");
  rig_service_stats_release(s);
}

Test(service_stats, an_info_struct_gets_only_what_its_size_holds) {
  rig_device_t *d = open_served("MEM:0@rigd");
  (void)d;
  rig_service_stats_t *s = snapshot();
  cr_assert_geq(rig_service_stats_clients(s), 1);
  rig_service_client_info_t short_info;
  memset(&short_info, 0xab, sizeof short_info);
  short_info.size = offsetof(rig_service_client_info_t, pid);
  cr_assert_eq(rig_service_stats_client(s, 0, &short_info), RIG_OK);
  cr_assert_eq(short_info.size, offsetof(rig_service_client_info_t, pid), "the caller's size stays");
  cr_assert(short_info.id != 0);
  cr_assert_eq(short_info.pid, (int64_t)0xabababababababab, "nothing past size is written");
  rig_service_stats_release(s);
}

Test(service_stats, misuse_answers_einval) {
  rig_service_stats_t *s = NULL;
  cr_assert_eq(rig_service_stats(NULL, NULL), RIG_EINVAL);
  rig_service_options_t small = {sizeof(size_t) - 1, NULL};
  cr_assert_eq(rig_service_stats(&small, &s), RIG_EINVAL);
  cr_assert_null(s);
  s = snapshot();
  size_t n = rig_service_stats_clients(s);
  rig_service_client_info_t c = {.size = sizeof c};
  cr_assert_eq(rig_service_stats_client(s, n, &c), RIG_EINVAL, "past the last client");
  cr_assert_eq(rig_service_stats_client(NULL, 0, &c), RIG_EINVAL);
  cr_assert_eq(rig_service_stats_client(s, 0, NULL), RIG_EINVAL);
  c.size = 0;
  cr_assert_eq(rig_service_stats_client(s, 0, &c), RIG_EINVAL, "a size less than a size_t");
  rig_service_device_info_t dev = {.size = sizeof dev};
  cr_assert_eq(rig_service_stats_device(s, rig_service_stats_devices(s), &dev), RIG_EINVAL);
  rig_service_export_info_t e = {.size = sizeof e};
  cr_assert_eq(rig_service_stats_export(s, rig_service_stats_exports(s), &e), RIG_EINVAL);
  cr_assert_eq(rig_service_stats_clients(NULL), 0);
  rig_service_stats_release(s);
  rig_service_stats_release(NULL);
  cr_assert_eq(rig_service_drop(NULL, UINT64_MAX), RIG_EINVAL, "no client of that id");
  cr_assert(strstr(rig_last_error(), "no client") != NULL, "%s", rig_last_error());
}

#define RELEASED "the snapshot was released"

/* Leaves a last error that is not RELEASED's, so that a call that answers
 * no status is seen to record its own. */
static void other_last_error(void) {
  cr_assert_eq(rig_service_stats(NULL, NULL), RIG_EINVAL);
  cr_assert_str_neq(rig_last_error(), RELEASED);
}

static void assert_said_released(const char *call) {
  cr_assert_str_eq(rig_last_error(), RELEASED, "%s: the last error names the snapshot", call);
}

/* Every rig_service_stats_* call given s, released or never made by
 * rig_service_stats, answers RIG_EINVAL naming the snapshot and writes
 * nothing; the counts answer 0 with that last error (service.h: a
 * snapshot is a checked handle). */
static void assert_answers_released(const rig_service_stats_t *s) {
  rig_service_client_info_t c;
  memset(&c, 0x5a, sizeof c);
  c.size = sizeof c;
  cr_assert_eq(rig_service_stats_client(s, 0, &c), RIG_EINVAL);
  assert_said_released("rig_service_stats_client");
  cr_assert_eq(c.id, 0x5a5a5a5a5a5a5a5aull, "nothing was written");
  rig_service_use_info_t u = {.size = sizeof u};
  cr_assert_eq(rig_service_stats_use(s, 0, 0, &u), RIG_EINVAL);
  assert_said_released("rig_service_stats_use");
  cr_assert_null(u.device);
  rig_service_device_info_t d = {.size = sizeof d};
  cr_assert_eq(rig_service_stats_device(s, 0, &d), RIG_EINVAL);
  assert_said_released("rig_service_stats_device");
  cr_assert_null(d.name);
  rig_service_export_info_t e = {.size = sizeof e};
  cr_assert_eq(rig_service_stats_export(s, 0, &e), RIG_EINVAL);
  assert_said_released("rig_service_stats_export");
  cr_assert_null(e.device);
  other_last_error();
  cr_assert_eq(rig_service_stats_clients(s), 0);
  assert_said_released("rig_service_stats_clients");
  other_last_error();
  cr_assert_eq(rig_service_stats_devices(s), 0);
  assert_said_released("rig_service_stats_devices");
  other_last_error();
  cr_assert_eq(rig_service_stats_exports(s), 0);
  assert_said_released("rig_service_stats_exports");
  other_last_error();
  rig_service_stats_release((rig_service_stats_t *)s);
  assert_said_released("rig_service_stats_release");
}

Test(service_stats, a_released_snapshot_answers_einval) {
  rig_service_stats_t *s = snapshot();
  cr_assert_geq(rig_service_stats_devices(s), 1, "rigd serves its devices");
  rig_service_stats_release(s);
  assert_answers_released(s); /* its last call releases it a second time */
  rig_service_stats_release(s);
  assert_said_released("a third release");
  /* The pool is whole: later snapshots answer as ever. */
  for (int i = 0; i < 4; i++) {
    rig_service_stats_t *next = snapshot();
    cr_assert_geq(rig_service_stats_devices(next), 1);
    rig_service_stats_release(next);
  }
  cr_assert_eq(rig_service_stats_client(NULL, 0, &(rig_service_client_info_t){.size = sizeof(rig_service_client_info_t)}),
               RIG_EINVAL);
  cr_assert_str_eq(rig_last_error(), "the snapshot is NULL");
}

Test(service_stats, memory_no_snapshot_was_made_in_answers_einval) {
  /* Random bytes, a pointer into them on a record's alignment and one off
   * it: neither is read as a snapshot, and their bytes stay. */
  enum { words = 512 };
  uint64_t *block = malloc(words * sizeof *block);
  cr_assert_not_null(block);
  srand(19);
  for (int i = 0; i < words; i++) block[i] = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 2) ^ (uint64_t)rand();
  uint64_t copy[words];
  memcpy(copy, block, sizeof copy);
  assert_answers_released((const rig_service_stats_t *)(block + words / 2));
  assert_answers_released((const rig_service_stats_t *)((char *)(block + words / 2) + 3));
  cr_assert_eq(memcmp(copy, block, sizeof copy), 0, "the memory was not written");
  free(block);
}

Test(service_stats, a_missing_rigd_answers_eopen_with_the_path) {
  rig_service_options_t o = {sizeof o, "/nonexistent/rigd.sock"};
  rig_service_stats_t *s = NULL;
  cr_assert_eq(rig_service_stats(&o, &s), RIG_EOPEN);
  cr_assert_null(s);
  cr_assert(strstr(rig_last_error(), "/nonexistent/rigd.sock") != NULL, "%s", rig_last_error());
  cr_assert_eq(rig_service_drop(&o, 1), RIG_EOPEN);
}

Test(service_stats, a_dropped_client_loses_its_proxies) {
  rig_device_t *d = open_served("MEM:0@rigd");
  rig_buffer_t *b = NULL;
  cr_assert_eq(rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b), RIG_OK);
  rig_service_stats_t *s = snapshot();
  rig_service_client_info_t me;
  size_t i;
  cr_assert(find_self(s, &me, &i));
  rig_service_stats_release(s);
  cr_assert_eq(rig_service_drop(NULL, me.id), RIG_OK, "%s", rig_last_error());
  /* Dropped, the client is connected no more, though its session may
   * still be ending: a second drop finds no such client. */
  cr_assert_eq(rig_service_drop(NULL, me.id), RIG_EINVAL, "a second drop of client %llu",
               (unsigned long long)me.id);
  /* The drop closes the connection: the proxy's next wait sees it lost. */
  rig_status_t status = RIG_OK;
  for (int tries = 0; tries < 2000 && status == RIG_OK; tries++) {
    status = rig_buffer_fill(b, 1);
    if (status == RIG_OK) usleep(5000);
  }
  cr_assert_eq(status, RIG_ELOST, "the dropped client's proxy is lost: %s", rig_last_error());
  cr_assert_not_null(rig_lost(d));
  /* Its session ends once what it held went back: then rigd lists it no
   * more. */
  bool listed = true;
  for (int tries = 0; tries < 2000 && listed; tries++) {
    s = snapshot();
    listed = find_self(s, &me, &i);
    rig_service_stats_release(s);
    if (listed) usleep(5000);
  }
  cr_assert(!listed, "rigd lists the dropped client no more");
  rig_buffer_unref(b);
}
