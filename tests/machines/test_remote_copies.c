/* Copies between this process's memory and a device of another machine:
 * MEM:0@peer, served by rigd --listen in side a of two hosts, driven from
 * side b through the C API (rig_machine_connect), over the veth alone.
 *
 * Asserts PROXY-37 (a copy into this process's memory lands where it
 * names), PROXY-38 (a copy's bytes cross the link once: the veth's byte
 * counters grow by the copy's bytes and at most a tenth more), PROXY-50
 * (bytes written into the source once a submit returned do not change what
 * it copied), PROXY-81 (once the wait of a copy into this process's memory
 * returns, its bytes are there), on 1 GiB each way in parts of 64 MiB
 * submitted back to back, verified byte for byte; and PROXY-44 (with
 * nothing in flight a proxy takes a submission past 64 MiB): one copy of
 * 256 MiB each way, verified. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <rig/rig.h>
#include <rig/service.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "byte_pattern.h"
#include "machine_client.h"
#include "machine_fixture.h"

#define MIB (INT64_C(1) << 20)

enum { parts = 16 };
static const int64_t part_bytes = 64 * MIB, copy_bytes = parts * 64 * MIB;

TestSuite(remote_copies, .fini = machine_fixture_down, .timeout = MACHINE_SUITE_TIMEOUT(120));

/* The byte counter name ("tx_bytes", "rx_bytes") of side b's veth end, as
 * side b's own sysfs shows it; -1 where it cannot be read. */
static int64_t veth_bytes(const char *counter) {
  char path[128];
  snprintf(path, sizeof path, "/sys/class/net/%s/statistics/%s", two_hosts_device(hosts, TWO_HOSTS_B), counter);
  FILE *f = fopen(path, "re");
  long long n = -1;
  if (f && fscanf(f, "%lld", &n) != 1) n = -1;
  if (f) fclose(f);
  return n;
}

static void *host_bytes(int64_t n) {
  void *p = mmap(NULL, (size_t)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Submits the copy of src into dst part by part (64 MiB each, at the same
 * offsets) and waits for every part's point; after each submit returns it
 * overwrites the part's bytes in scribble (NULL: none), the source of a
 * PUT.  0, or 1 with the reason on stderr. */
static int copy_in_parts(rig_buffer_t *src, rig_buffer_t *dst, uint8_t *scribble, const char *what) {
  rig_point_t done[parts];
  for (int k = 0; k < parts; k++) {
    rig_box_t box = rig_row(k * part_bytes, k * part_bytes, part_bytes);
    rig_status_t s = rig_buffer_submit_copy(src, dst, &box, 1, NULL, 0, &done[k]);
    EXPECT(s == RIG_OK, "%s: the submit of part %d answered %s: %s", what, k, rig_status_name(s), rig_last_error());
    if (scribble) memset(scribble + k * part_bytes, 0xee, (size_t)part_bytes);
  }
  for (int k = 0; k < parts; k++) {
    rig_status_t s = rig_point_wait(done[k]);
    EXPECT(s == RIG_OK, "%s: the wait of part %d answered %s: %s", what, k, rig_status_name(s), rig_last_error());
  }
  return 0;
}

/* The veth carried at least bytes and at most a tenth more (PROXY-38). */
static int crossed_once(int64_t before, int64_t after, int64_t bytes, const char *what) {
  EXPECT(before >= 0 && after >= 0, "%s: the veth's counters cannot be read", what);
  EXPECT(after - before >= bytes && after - before <= bytes + bytes / 10,
         "%s: the veth carried %" PRId64 " bytes for a copy of %" PRId64 " (PROXY-38: once, framing aside)", what,
         after - before, bytes);
  fprintf(stderr, "%s: the veth carried %" PRId64 " bytes for a copy of %" PRId64 "\n", what, after - before, bytes);
  return 0;
}

/* One copy of the pattern's first 256 MiB in from into remote's second
 * 256 MiB (which held the pattern's bytes of there), then one of those
 * back into to's first, whose bytes (scribbled before) must be the
 * pattern's first again (PROXY-44: each a submission past 64 MiB with
 * nothing in flight). */
static int one_large_copy_each_way(rig_buffer_t *from, rig_buffer_t *remote, rig_buffer_t *to, uint8_t *to_bytes) {
  const int64_t n = 4 * part_bytes;
  rig_box_t there = rig_row(0, n, n), back = rig_row(n, 0, n);
  rig_point_t put, get;
  rig_status_t s = rig_buffer_submit_copy(from, remote, &there, 1, NULL, 0, &put);
  EXPECT(s == RIG_OK, "one PUT of 256 MiB: %s: %s (PROXY-44)", rig_status_name(s), rig_last_error());
  s = rig_buffer_submit_copy(remote, to, &back, 1, NULL, 0, &get);
  EXPECT(s == RIG_OK, "one GET of 256 MiB: %s: %s (PROXY-44)", rig_status_name(s), rig_last_error());
  s = rig_point_wait(get);
  EXPECT(s == RIG_OK, "the wait of the GET of 256 MiB: %s: %s", rig_status_name(s), rig_last_error());
  size_t differs = byte_pattern_differs(to_bytes, 0, (size_t)n);
  EXPECT(differs == (size_t)n, "byte %zu of the GET of 256 MiB differs from the PUT's: 0x%02x", differs,
         to_bytes[differs]);
  return 0;
}

/* In side b: 1 GiB of the pattern from this process's memory into
 * MEM:0@peer, then back into other memory of this process, verified. */
static int copies_each_way(void *arg) {
  (void)arg;
  rig_device_t *d = machine_device(&agent, "peer", "MEM:0");
  EXPECT(d, "no MEM:0@peer (above)");
  EXPECT(strcmp(rig_device_name(d), "MEM:0@peer") == 0, "the proxy is named %s", rig_device_name(d));
  uint8_t *out = host_bytes(copy_bytes), *back = host_bytes(copy_bytes);
  EXPECT(out && back, "no 2 GiB of host memory");
  byte_pattern_fill(out, 0, (size_t)copy_bytes);
  rig_buffer_t *source = NULL, *remote = NULL, *landing = NULL;
  EXPECT(rig_buffer_of_memory(out, copy_bytes, NULL, NULL, &source) == RIG_OK, "%s", rig_last_error());
  EXPECT(rig_buffer_of_memory(back, copy_bytes, NULL, NULL, &landing) == RIG_OK, "%s", rig_last_error());
  rig_status_t made = rig_buffer_create(d, copy_bytes, RIG_MEMORY_DEVICE, &remote);
  EXPECT(made == RIG_OK, "1 GiB on MEM:0@peer: %s: %s", rig_status_name(made), rig_last_error());

  int64_t sent = veth_bytes("tx_bytes");
  if (copy_in_parts(source, remote, out, "PUT") != 0) return 1;
  if (crossed_once(sent, veth_bytes("tx_bytes"), copy_bytes, "PUT") != 0) return 1;

  int64_t received = veth_bytes("rx_bytes");
  if (copy_in_parts(remote, landing, NULL, "GET") != 0) return 1;
  if (crossed_once(received, veth_bytes("rx_bytes"), copy_bytes, "GET") != 0) return 1;

  size_t differs = byte_pattern_differs(back, 0, (size_t)copy_bytes);
  EXPECT(differs == (size_t)copy_bytes,
         "byte %zu of the 1 GiB that came back differs from what went (PROXY-37/50/81): 0x%02x", differs,
         back[differs]);
  if (one_large_copy_each_way(landing, remote, source, out) != 0) return 1;
  rig_buffer_unref(source);
  rig_buffer_unref(remote);
  rig_buffer_unref(landing);
  EXPECT(rig_close(d) == RIG_OK, "close: %s", rig_last_error());
  munmap(out, (size_t)copy_bytes);
  munmap(back, (size_t)copy_bytes);
  return 0;
}

Test(remote_copies, a_gigabyte_each_way_arrives_whole_crossing_the_link_once) {
  machine_fixture_up("MEM:0,SIM:0");
  machine_run(copies_each_way, NULL, "1 GiB each way");
}
