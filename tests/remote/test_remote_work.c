/* The work, timeline and stop of proxies of another machine's devices
 * (rig-remote-proxy.txt: Work, Timeline, failure and stopping), against a
 * rigd --listen on loopback (remote_agent.h), in C against the public API.
 * SIM:0 runs with a latency, so that work is seen in flight.  Each test
 * names the PROXY rules it asserts. */
#include "remote_agent.h"

#include <criterion/criterion.h>
#include <rig/disk.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(remote_work, .init = remote_suite_start, .fini = remote_suite_stop, .timeout = 60);

static bool reached(rig_point_t p) {
  bool r = false;
  cr_assert_eq(rig_point_reached(p, &r), RIG_OK, "%s", rig_last_error());
  return r;
}

/* Each submit is one value, the first after the word at open; the word
 * reads the last value done (PROXY-02, PROXY-03, PROXY-10, PROXY-45,
 * PROXY-52, PROXY-80, PROXY-83). */
Test(remote_work, one_value_per_submit_after_the_word_at_open) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  uint64_t start = rig_submitted(mem);
  rig_buffer_t *b = remote_buffer(mem, 4096);
  rig_point_t first, second;
  cr_assert_eq(rig_buffer_submit_fill(b, 1, NULL, 0, &first), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_buffer_submit_fill(b, 2, NULL, 0, &second), RIG_OK, "%s", rig_last_error());
  cr_expect_eq(rig_point_value(first), start + 1, "PROXY-10: the first value is the word's at open plus one");
  cr_expect_eq(rig_point_value(second), rig_point_value(first) + 1, "PROXY-02, PROXY-45: one hand-over per value");
  cr_assert_eq(rig_point_wait(second), RIG_OK, "%s", rig_last_error());
  uint64_t seen = 0;
  cr_assert_eq(rig_signaled(mem, &seen), RIG_OK);
  cr_expect_geq(seen, rig_point_value(second), "PROXY-03, PROXY-80: the word reads the last value reported");
  uint64_t again = 0;
  cr_assert_eq(rig_signaled(mem, &again), RIG_OK);
  cr_expect_geq(again, seen, "PROXY-83: it never decreases");
  uint8_t byte = 0;
  cr_assert_eq(rig_buffer_blit_to_bytes(b, 17, &byte, 1, 0, 1), RIG_OK);
  cr_expect_eq(byte, 2, "PROXY-39: the agent ran the values in order");
  rig_buffer_unref(b);
}

/* Rows apart on either side, each byte checked (PROXY-51: in place where
 * rows lie end to end, packed otherwise; PROXY-38). */
Test(remote_work, copies_of_rows_apart) {
  enum { width = 1000, rows = 64, pitch = 4096 };
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *host = NULL, *back = NULL;
  host = remote_buffer(rig_host(), rows * pitch);
  back = remote_buffer(rig_host(), rows * pitch);
  uint8_t *h = rig_buffer_host(host), *k = rig_buffer_host(back);
  for (int i = 0; i < rows * pitch; i++) h[i] = (uint8_t)(i * 7 + 3);
  memset(k, 0, rows * pitch);
  rig_buffer_t *packed = remote_buffer(mem, width * rows), *apart = remote_buffer(mem, rows * pitch);
  rig_box_t to_packed = {0, 0, width, rows, pitch, width}, to_apart = {0, 0, width, rows, pitch, pitch};
  rig_point_t put;
  cr_assert_eq(rig_buffer_submit_copy(host, packed, &to_packed, 1, NULL, 0, &put), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_buffer_submit_copy(host, apart, &to_apart, 1, NULL, 0, &put), RIG_OK, "%s", rig_last_error());
  rig_box_t from_packed = {0, 0, width, rows, width, pitch};
  rig_point_t p;
  cr_assert_eq(rig_buffer_submit_copy(packed, back, &from_packed, 1, NULL, 0, &p), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_point_wait(p), RIG_OK);
  for (int r = 0; r < rows; r++)
    cr_assert(memcmp(h + r * pitch, k + r * pitch, width) == 0, "PROXY-51: row %d through the packed buffer", r);
  memset(k, 0, rows * pitch);
  cr_assert_eq(rig_buffer_submit_copy(apart, back, &to_apart, 1, NULL, 0, &p), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_point_wait(p), RIG_OK);
  for (int r = 0; r < rows; r++)
    cr_assert(memcmp(h + r * pitch, k + r * pitch, width) == 0, "PROXY-51: row %d through the rows apart", r);
  rig_buffer_unref(packed);
  rig_buffer_unref(apart);
  rig_buffer_unref(host);
  rig_buffer_unref(back);
}

/* A copy from this process's memory waits here for the wait's proxy's
 * word (PROXY-48) before its bytes go (PROXY-50). */
Test(remote_work, a_put_waits_for_the_proxies_it_follows) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "300000");
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *s = remote_buffer(sim, 4096), *b = remote_buffer(mem, 4096);
  rig_point_t filled;
  cr_assert_eq(rig_buffer_submit_fill(s, 7, NULL, 0, &filled), RIG_OK, "%s", rig_last_error());
  cr_assert(!reached(filled));
  static uint8_t bytes[4096];
  rig_buffer_t *host = NULL;
  host = remote_buffer(rig_host(), 4096);
  rig_box_t row = rig_row(0, 0, sizeof bytes);
  rig_point_t put;
  cr_assert_eq(rig_buffer_submit_copy(host, b, &row, 1, &filled, 1, &put), RIG_OK, "%s", rig_last_error());
  cr_expect(reached(filled), "PROXY-34, PROXY-48: the PUT's submit blocked until the SIM's word moved");
  rig_buffer_unref(host);
  rig_buffer_unref(s);
  rig_buffer_unref(b);
}

/* A copy from this process's memory waits for the proxy's own last value
 * with a copy into it (PROXY-49): here into the proxy's Pinned memory,
 * pages of this process's, which a copy into the host's own memory would
 * wait for before it returned (COPY-59).  The proxy's own memory has no
 * host address (PROXY-35). */
Test(remote_work, a_put_waits_for_the_last_get_of_its_proxy) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "300000");
  rig_buffer_t *s = remote_buffer(sim, 4096), *t = remote_buffer(sim, 4096);
  cr_expect_null(rig_buffer_host(s), "PROXY-35: the proxy's Device memory is the other machine's");
  rig_buffer_t *in = NULL, *out = NULL;
  in = remote_pinned(sim, 4096);
  cr_assert_not_null(rig_buffer_host(in), "the proxy's Pinned memory is this process's");
  out = remote_buffer(rig_host(), 4096);
  rig_box_t row = rig_row(0, 0, 4096);
  rig_point_t got;
  cr_assert_eq(rig_buffer_submit_copy(s, in, &row, 1, NULL, 0, &got), RIG_OK, "%s", rig_last_error());
  cr_assert(!reached(got), "the slow SIM has not run the GET yet");
  rig_point_t put;
  cr_assert_eq(rig_buffer_submit_copy(out, t, &row, 1, NULL, 0, &put), RIG_OK, "%s", rig_last_error());
  cr_expect(reached(got), "PROXY-49: the PUT's submit waited for the proxy's GET");
  rig_buffer_unref(in);
  rig_buffer_unref(out);
  rig_buffer_unref(s);
  rig_buffer_unref(t);
}

struct waiter {
  rig_point_t point;
  rig_status_t status;
};

static void *wait_for_point(void *arg) {
  struct waiter *w = arg;
  w->status = rig_point_wait(w->point);
  return NULL;
}

/* One thread waits for the slow SIM while another allocates, fills and
 * reads on MEM of the same link, done before the SIM's point (PROXY-05,
 * PROXY-06). */
Test(remote_work, a_wait_holds_up_no_other_thread) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "500000");
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *s = remote_buffer(sim, 4096);
  struct waiter w = {.status = RIG_EINVAL};
  cr_assert_eq(rig_buffer_submit_fill(s, 7, NULL, 0, &w.point), RIG_OK, "%s", rig_last_error());
  pthread_t thread;
  cr_assert_eq(pthread_create(&thread, NULL, wait_for_point, &w), 0);
  rig_buffer_t *b = remote_buffer(mem, 4096);
  cr_assert_eq(rig_buffer_fill(b, 5), RIG_OK, "%s", rig_last_error());
  uint8_t byte = 0;
  cr_assert_eq(rig_buffer_blit_to_bytes(b, 9, &byte, 1, 0, 1), RIG_OK);
  cr_expect_eq(byte, 5);
  cr_expect(!reached(w.point), "PROXY-06: MEM's calls ran while the other thread waited for the SIM");
  pthread_join(thread, NULL);
  cr_expect_eq(w.status, RIG_OK, "PROXY-05: the wait of the other thread ended");
  rig_buffer_unref(b);
  rig_buffer_unref(s);
}

/* Proxies of two links never reach each other; a proxy reaches its own
 * memory (PROXY-65, PROXY-66, PROXY-67: no borrow across links). */
Test(remote_work, proxies_of_two_links_are_no_peers) {
  rig_machine_t *m = remote_connect(&agent, NULL), *other = remote_connect(&agent, NULL);
  rig_device_t *a = remote_open(m, "MEM:0"), *b = remote_open(other, "MEM:0");
  cr_expect(rig_reaches(a, a));
  cr_expect(!rig_reaches(a, b), "PROXY-66: proxies of two links");
  rig_buffer_t *on_b = remote_buffer(b, 4096), *borrowed = NULL;
  cr_expect_eq(rig_buffer_borrow(a, on_b, &borrowed), RIG_OK, "%s", rig_last_error());
  cr_expect_null(borrowed, "PROXY-67: no mapping across links");
  rig_buffer_unref(on_b);
}

/* map_host is none and dma an error: the memory is another machine's
 * (PROXY-71, PROXY-72). */
Test(remote_work, no_host_mapping_and_no_dma) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *host = NULL, *borrowed = NULL;
  host = remote_buffer(rig_host(), 1 << 16);
  cr_expect_eq(rig_buffer_borrow(mem, host, &borrowed), RIG_OK, "%s", rig_last_error());
  cr_expect_null(borrowed, "PROXY-71: the proxy maps no host memory");
  rig_buffer_t *b = remote_buffer(mem, 4096);
  rig_dma_t dma = {.size = sizeof dma};
  cr_expect_eq(rig_buffer_dma(b, "0000:00:00.0", &dma), RIG_EOPEN);
  cr_expect(strstr(rig_last_error(), "another machine's") != NULL, "PROXY-72: %s", rig_last_error());
  rig_buffer_unref(b);
  rig_buffer_unref(host);
}

/* A proxy closed having handed work over leaves its account taken on the
 * link; one closed having handed none leaves it free (PROXY-13, PROXY-14,
 * PROXY-15). */
Test(remote_work, a_proxy_that_handed_work_over_is_made_once_per_link) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *idle = remote_open(m, "MEM:0");
  cr_assert_eq(rig_close(idle), RIG_OK, "%s", rig_last_error());
  rig_device_t *worked = remote_open(m, "MEM:0");
  cr_expect_neq(worked, NULL, "PROXY-15: made again after a close with no work");
  rig_buffer_t *b = remote_buffer(worked, 4096);
  cr_assert_eq(rig_buffer_fill(b, 1), RIG_OK, "%s", rig_last_error());
  rig_buffer_unref(b);
  cr_assert_eq(rig_close(worked), RIG_OK, "%s", rig_last_error());
  rig_device_t *again = NULL;
  cr_expect_eq(rig_machine_open(m, "MEM:0", NULL, &again), RIG_EINVAL,
               "PROXY-13, PROXY-14: the link had a proxy of MEM:0 that handed work over");
  rig_machine_t *other = remote_connect(&agent, NULL);
  cr_expect_not_null(remote_open(other, "MEM:0"), "another link makes its own");
}

/* The agent killed with work in flight: the lost proxy's stop writes the
 * last value submitted at once, the receiving side having ended (PROXY-82,
 * PROXY-95, PROXY-96); submit faults (PROXY-53), and so does an image on
 * the machine's host, which the agent refused while the job worked
 * (PROXY-76, PROXY-89). */
Test(remote_work, stop_after_the_agent_died_writes_the_last_value) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "2000000");
  rig_device_t *host = remote_open(m, "CPU");
  static const uint8_t junk[64] = {1};
  rig_image_t *image = NULL;
  cr_assert_eq(rig_image_load(host, junk, sizeof junk, &image), RIG_EIMAGE, "the agent's refusal: %s",
               rig_last_error());
  rig_buffer_t *s = remote_buffer(sim, 4096);
  rig_point_t pending;
  cr_assert_eq(rig_buffer_submit_fill(s, 3, NULL, 0, &pending), RIG_OK, "%s", rig_last_error());
  remote_agent_kill(&agent);
  cr_expect_eq(rig_point_wait(pending), RIG_ELOST);
  rig_point_t after;
  cr_expect_eq(rig_buffer_submit_fill(s, 4, NULL, 0, &after), RIG_ELOST, "PROXY-53: no submit after the failure");
  const char *why = rig_machine_lost(m);
  cr_assert_not_null(why, "the machine is lost");
  cr_expect_eq(rig_image_load(host, junk, sizeof junk, &image), RIG_ELOST, "PROXY-76: image faults, no refusal: %s",
               rig_last_error());
  cr_expect(strstr(rig_last_error(), why) != NULL, "PROXY-76, PROXY-89: the fault's message %s names %s",
            rig_last_error(), why);
  uint64_t last = rig_submitted(sim);
  rig_buffer_unref(s);
  cr_assert_eq(rig_close(sim), RIG_OK, "%s", rig_last_error());
  uint64_t word = 0;
  rig_signaled(sim, &word);
  cr_expect_eq(word, last, "PROXY-82, PROXY-95, PROXY-96: the word holds the last value submitted");
}

/* Submits a words part of the n writes on d, slot j the memory of write
 * j, after waits; answers rig_submit's status. */
static rig_status_t submit_words(rig_device_t *d, rig_word_write_t *writes, size_t n, rig_buffer_t **slots,
                                 const rig_point_t *waits, size_t nwaits, rig_point_t *out) {
  rig_part_t words = {.kind = RIG_WORDS};
  words.u.words.writes = writes;
  words.u.words.count = n;
  rig_submission_t *submission = NULL;
  cr_assert_eq(rig_submission_make(d, &words, 1, NULL, &submission), RIG_OK, "%s", rig_last_error());
  rig_run_t *run = NULL;
  cr_assert_eq(rig_submission_take(submission, &run), RIG_OK, "%s", rig_last_error());
  rig_status_t status = rig_submit(run, slots, n, waits, nwaits, out);
  rig_submission_unref(submission);
  return status;
}

/* The machine's host runs words parts, in order, after the SIM's slow
 * fill they wait for (PROXY-32, PROXY-36, PROXY-39); another proxy
 * refuses them (PROXY-41). */
Test(remote_work, words_run_on_the_machines_host_alone) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "200000");
  rig_device_t *cpu = remote_open(m, "CPU");
  rig_buffer_t *s = remote_buffer(sim, 4096), *on_cpu = remote_buffer(cpu, 64);
  rig_point_t slow;
  cr_assert_eq(rig_buffer_submit_fill(s, 5, NULL, 0, &slow), RIG_OK, "%s", rig_last_error());
  rig_word_write_t writes[] = {{{0, NULL}, 0, 0xfeed}, {{1, NULL}, 8, 1}, {{2, NULL}, 8, 2}};
  rig_buffer_t *slots[] = {on_cpu, on_cpu, on_cpu};
  rig_point_t written;
  cr_assert_eq(submit_words(cpu, writes, 3, slots, &slow, 1, &written), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_point_wait(written), RIG_OK, "%s", rig_last_error());
  cr_expect(reached(slow), "PROXY-39: the words ran after the fill they wait for");
  uint64_t seen[2] = {0, 0};
  cr_assert_eq(rig_buffer_blit_to_bytes(on_cpu, 0, seen, sizeof seen, 0, sizeof seen), RIG_OK);
  cr_expect(seen[0] == 0xfeed && seen[1] == 2, "PROXY-32, PROXY-36: the words, in order: %#lx %#lx",
            (unsigned long)seen[0], (unsigned long)seen[1]);

  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *b = remote_buffer(mem, 64);
  rig_word_write_t write = {{0, NULL}, 0, 7};
  rig_point_t p;
  cr_expect_eq(submit_words(mem, &write, 1, &b, NULL, 0, &p), RIG_EINVAL, "PROXY-41: words ran on MEM:0@machine");
  rig_buffer_unref(b);
  rig_buffer_unref(on_cpu);
  rig_buffer_unref(s);
}

/* Submits the copies from[j] to to[j] (slots 2j, 2j + 1) as one
 * submission on d; answers rig_submit's status, or make's where it
 * refuses. */
static rig_status_t submit_copies(rig_device_t *d, rig_buffer_t **from, rig_buffer_t **to, size_t n) {
  rig_part_t parts[4];
  rig_buffer_t *slots[8];
  for (size_t j = 0; j < n; j++) {
    parts[j] = (rig_part_t){.kind = RIG_COPY};
    parts[j].u.copy.src = (rig_operand_t){(uint32_t)(2 * j), NULL};
    parts[j].u.copy.dst = (rig_operand_t){(uint32_t)(2 * j + 1), NULL};
    slots[2 * j] = from[j];
    slots[2 * j + 1] = to[j];
  }
  rig_submission_t *submission = NULL;
  rig_status_t made = rig_submission_make(d, parts, n, NULL, &submission);
  if (made != RIG_OK) return made;
  rig_run_t *run = NULL;
  cr_assert_eq(rig_submission_take(submission, &run), RIG_OK, "%s", rig_last_error());
  rig_point_t p;
  rig_status_t status = rig_submit(run, slots, 2 * n, NULL, 0, &p);
  if (status == RIG_OK) cr_assert_eq(rig_point_wait(p), RIG_OK, "%s", rig_last_error());
  rig_submission_unref(submission);
  return status;
}

/* One submission may copy from this process's memory then into it, but
 * not into it then from it: submit reads a PUT's bytes before the agent
 * runs an earlier GET (PROXY-42). */
Test(remote_work, no_copy_from_host_memory_after_a_copy_into_it) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *a = remote_buffer(mem, 4096), *b = remote_buffer(mem, 4096);
  rig_buffer_t *in = NULL, *out = NULL;
  in = remote_pinned(mem, 4096);
  out = remote_pinned(mem, 4096);
  memset(rig_buffer_host(out), 0x42, 4096);
  rig_buffer_t *put_then_get_from[] = {out, a}, *put_then_get_to[] = {a, in};
  cr_expect_eq(submit_copies(mem, put_then_get_from, put_then_get_to, 2), RIG_OK, "a PUT, then a GET: %s",
               rig_last_error());
  cr_expect_eq(((uint8_t *)rig_buffer_host(in))[4095], 0x42, "the GET read what the PUT wrote");
  rig_buffer_t *get_then_put_from[] = {a, out}, *get_then_put_to[] = {in, b};
  cr_expect_eq(submit_copies(mem, get_then_put_from, get_then_put_to, 2), RIG_EINVAL,
               "PROXY-42: a GET, then a PUT, in one submission");
  rig_buffer_unref(a);
  rig_buffer_unref(b);
  rig_buffer_unref(in);
  rig_buffer_unref(out);
}

/* free releases the agent's object: with no cache, 16 buffers of 64 MiB
 * one after the other fit a quota of 256 MiB (PROXY-61). */
Test(remote_work, free_releases_the_agents_object) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  cr_assert_eq(rig_set_cache_limit(mem, 0), RIG_OK, "%s", rig_last_error());
  for (int i = 0; i < 16; i++) {
    rig_buffer_t *b = NULL;
    rig_status_t s = rig_buffer_create(mem, (int64_t)64 << 20, RIG_MEMORY_DEVICE, &b);
    cr_assert_eq(s, RIG_OK, "PROXY-61: buffer %d of 64 MiB: %s", i, rig_last_error());
    cr_assert_eq(rig_buffer_fill(b, (uint8_t)i), RIG_OK, "%s", rig_last_error());
    rig_buffer_unref(b);
  }
}

/* A borrow across proxies of one link maps the memory on the agent, as a
 * new object, where the agent's device reaches it (PROXY-65, PROXY-69):
 * 1 MiB, which starts on a page, as the agent's sim maps a memory
 * device's memory (rig.txt, Machines); once the job failed, asking
 * faults (PROXY-70). */
Test(remote_work, a_borrow_across_proxies_of_a_link_asks_the_agent) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0"), *sim = remote_slow_sim(m, "0");
  rig_device_t *by = rig_reaches(mem, sim) ? mem : rig_reaches(sim, mem) ? sim : NULL;
  if (!by) cr_skip_test("neither of the agent's MEM:0 and SIM:0 reaches the other");
  rig_device_t *owner = by == mem ? sim : mem;
  rig_buffer_t *b = remote_buffer(owner, 1 << 20), *borrowed = NULL;
  cr_assert_eq(rig_buffer_fill(b, 0x3c), RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_buffer_borrow(by, b, &borrowed), RIG_OK, "%s", rig_last_error());
  cr_assert_not_null(borrowed, "PROXY-69: %s maps %s's memory", rig_device_name(by), rig_device_name(owner));
  uint8_t byte = 0;
  cr_assert_eq(rig_buffer_blit_to_bytes(borrowed, 100, &byte, 1, 0, 1), RIG_OK, "%s", rig_last_error());
  cr_expect_eq(byte, 0x3c, "PROXY-69: the mapping is the same memory");
  rig_buffer_t *c = remote_buffer(owner, 4096), *late = NULL;
  remote_agent_kill(&agent);
  cr_expect_neq(rig_buffer_borrow(by, c, &late), RIG_OK, "PROXY-70: a mapping asked once the job failed");
  rig_buffer_unref(borrowed);
  rig_buffer_unref(b);
  rig_buffer_unref(c);
}

/* A proxy's capability is the account the agent gave for its device, which
 * it was made with (PROXY-17, PROXY-29); the machine's host is id 0, and
 * this process's host declares none. */
Test(remote_work, the_capability_is_the_agents_account) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_device_t *cpu = remote_open(m, "CPU");
  const rig_machine_device_t *r = rig_device_capability(mem, RIG_MACHINE_DEVICE);
  cr_assert_not_null(r, "PROXY-17: MEM:0@machine declares RIG_MACHINE_DEVICE");
  cr_expect_eq(r->size, sizeof *r);
  cr_expect_str_eq(r->name, "MEM:0", "PROXY-29: the account's name");
  cr_expect_neq(r->id, 0, "PROXY-29: MEM:0 is not the machine's host");
  cr_expect_str_eq(r->arch, rig_device_arch(mem), "PROXY-18, PROXY-29: the account's arch");
  cr_expect_eq(r->budget, rig_budget(mem), "PROXY-19, PROXY-29: the account's budget");
  cr_expect_eq(r->cache_bytes, rig_device_cache_bytes(mem), "PROXY-28, PROXY-29: its cache's bytes");
  cr_expect_str_eq(r->address, agent.address, "the agent's address");
  const rig_machine_device_t *h = rig_device_capability(cpu, RIG_MACHINE_DEVICE);
  cr_assert_not_null(h, "PROXY-17: CPU@machine declares it too");
  cr_expect_eq(h->id, 0, "PROXY-01, PROXY-29: the machine's host is the agent's id 0");
  cr_expect_null(rig_device_capability(rig_host(), RIG_MACHINE_DEVICE), "this process's host is no machine's");
}

/* A copy by a device of another machine into this process's memory is
 * queued: submit_copy returns before its bytes are there (COPY-60), and
 * they are there once its point is reached (PROXY-37, PROXY-81). */
Test(remote_work, a_copy_into_host_memory_is_queued) {
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *sim = remote_slow_sim(m, "300000");
  rig_buffer_t *src = remote_buffer(sim, 4096);
  rig_buffer_t *host = remote_buffer(rig_host(), 4096);
  cr_assert_eq(rig_buffer_fill(host, 0), RIG_OK, "%s", rig_last_error());
  rig_point_t filled, copied;
  cr_assert_eq(rig_buffer_submit_fill(src, 7, NULL, 0, &filled), RIG_OK, "%s", rig_last_error());
  rig_box_t row = rig_row(0, 0, 4096);
  cr_assert_eq(rig_buffer_submit_copy(src, host, &row, 1, NULL, 0, &copied), RIG_OK, "%s", rig_last_error());
  const uint8_t *bytes = rig_buffer_host(host);
  cr_expect(!reached(copied) && bytes[4095] == 0, "COPY-60: the copy returned queued, its bytes not yet there");
  cr_assert_eq(rig_point_wait(copied), RIG_OK, "%s", rig_last_error());
  cr_expect(bytes[0] == 7 && bytes[4095] == 7, "PROXY-37, PROXY-81: the bytes are there at its point");
  rig_buffer_unref(host);
  rig_buffer_unref(src);
}

/* A file loads into a device of another machine through staging
 * (COPY-15): the io device reads it into this process's staging a part at
 * a time on several threads, and each part is handed over to the proxy as
 * soon as it is read, from those threads at once.  Every byte is checked,
 * on a length that is no multiple of a staging allocation, a part or a
 * page.  (Whether staging is refilled too early, COPY-25, the rigd_loads
 * suite shows: this driver's hand-over returns only once the link has
 * sent a PUT's bytes, so an early refill changes nothing here.) */
Test(remote_work, a_file_loads_into_a_device_of_the_machine_byte_for_byte) {
  const int64_t n = 2 * (INT64_C(32) << 20) + 3 * 4096 + 123;
  char path[400];
  snprintf(path, sizeof path, "%s/load.bin", agent.dir);
  uint8_t *want = malloc((size_t)n), *got = malloc((size_t)n);
  cr_assert(want && got);
  for (int64_t i = 0; i < n; i++) want[i] = (uint8_t)(i * 131 + (i >> 9) + (i >> 23) * 7);
  FILE *f = fopen(path, "wb");
  cr_assert(f && fwrite(want, 1, (size_t)n, f) == (size_t)n && fclose(f) == 0, "cannot write %s", path);
  rig_machine_t *m = remote_connect(&agent, NULL);
  rig_device_t *mem = remote_open(m, "MEM:0");
  rig_buffer_t *file = NULL;
  cr_assert_eq(rig_disk_open(path, RIG_DISK_READ, 0, -1, &file), RIG_OK, "%s", rig_last_error());
  rig_buffer_t *into = remote_buffer(mem, n);
  cr_assert_eq(rig_buffer_copy(file, into), RIG_OK, "COPY-15: %s", rig_last_error());
  cr_assert_eq(rig_buffer_blit_to_bytes(into, 0, got, n, 0, n), RIG_OK, "%s", rig_last_error());
  for (int64_t i = 0; i < n; i++)
    if (got[i] != want[i]) cr_assert_fail("byte %lld is %u, the file's is %u", (long long)i, got[i], want[i]);
  rig_buffer_unref(into);
  rig_buffer_unref(file);
  unlink(path);
  free(want);
  free(got);
}

/* A connection loads the link's libraries (UCX, whose constructors install
 * handlers of their own) and leaves the process's signal actions as they
 * were: a program's handlers stay its own. */
static void on_signal(int signal) { (void)signal; }

Test(remote_work, a_connection_leaves_the_signal_actions_as_they_were) {
  const int signals[] = {SIGHUP, SIGILL, SIGBUS, SIGFPE, SIGSEGV};
  struct sigaction mine = {.sa_handler = on_signal};
  cr_assert_eq(sigaction(SIGHUP, &mine, NULL), 0);
  struct sigaction before[5];
  for (int i = 0; i < 5; i++) sigaction(signals[i], NULL, &before[i]);
  rig_machine_t *m = remote_connect(&agent, NULL);
  cr_assert_null(rig_machine_lost(m));
  for (int i = 0; i < 5; i++) {
    struct sigaction after;
    sigaction(signals[i], NULL, &after);
    cr_expect(after.sa_handler == before[i].sa_handler, "signal %d's handler is the program's", signals[i]);
  }
}
