/* Lifetime: a wait on a device whose queue waits on another device's
 * word watches that device too, along every chain of queue waits.
 *
 * The wait here is always on the device downstream of the fault or hang,
 * never on the faulting device first: nothing else notices the loss.  The
 * upstream sim declares the hang bound under test; the downstream ones a
 * bound far above the time the test allows, so that only the watch of
 * the upstream device can end their waits.
 *
 * Asserts:
 *   Loss:  LOSS-04 (a queue waiting on a lost device's unreached value
 *          loses its device, "NAME lost"), LOSS-15 (along every chain)
 *   Hangs: HANG-02 HANG-06 (a wait checks the clock of every device it
 *          watches, the devices its point transitively waits on)
 *   Memory after a loss: LMEM-01 (a host read of memory whose last write
 *          a lost device never reached answers Lost)
 */
#define _GNU_SOURCE

#include <criterion/criterion.h>
#include <rig/rig.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "helpers.h"

#define KIB ((int64_t)1024)
/* Far above every wait here: no downstream clock fires in a test. */
#define DOWNSTREAM "commit_every=8,hang_ms=600000"
/* The upstream hang bound, and the most a wait may take past it on a
 * loaded machine (a wait checks the clock and polls for a fault a few
 * times per bound). */
#define HANG_MS 300
#define SLACK_MS 4000

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A chain of devices, each with a buffer and a borrow of the buffer of
 * the device before it. */
struct chain {
  rig_device_t *devices[3];
  rig_buffer_t *buffers[3];
  rig_buffer_t *borrows[3];
  int n;
};

/* Fills chain[0]'s buffer (at a value the caller made one that never
 * completes), then has each later device copy, through its borrow, the
 * bytes the device before it wrote last: each queue waits on the word of
 * the one before.  Returns the point of the last device's copy. */
static rig_point_t copy_along(struct chain *c) {
  rig_point_t p = submit_fill(c->buffers[0], 1);
  for (int i = 1; i < c->n; i++) {
    c->borrows[i] = borrow(c->devices[i], c->buffers[i - 1]);
    p = submit_copy_all(c->borrows[i], c->buffers[i]);
    cr_assert(rig_device_equal(rig_point_device(p), c->devices[i]), "%s copies from its borrow",
              rig_device_name(c->devices[i]));
  }
  return p;
}

static void open_chain(struct chain *c, int n, const char *upstream_config) {
  static const char *const names[] = {"SIM:60", "SIM:61", "SIM:62"};
  c->n = n;
  for (int i = 0; i < n; i++) {
    c->devices[i] = open_with(names[i], i == 0 ? upstream_config : DOWNSTREAM);
    /* The last device's buffer is pinned, for the host to read; the
     * others are device memory, which the next device borrows. */
    c->buffers[i] = create_kind(c->devices[i], 4 * KIB, i == n - 1 ? RIG_MEMORY_PINNED : RIG_MEMORY_DEVICE);
    c->borrows[i] = NULL;
  }
}

static void drop_chain(struct chain *c) {
  for (int i = c->n - 1; i >= 0; i--) {
    rig_buffer_unref(c->borrows[i]);
    rig_buffer_unref(c->buffers[i]);
  }
}

/* The reasons a loss spreading from chain[0] leaves along the chain. */
static void assert_spread(const struct chain *c, const char *first) {
  assert_lost_with(c->devices[0], first);
  for (int i = 1; i < c->n; i++) {
    char why[64];
    snprintf(why, sizeof why, "%s lost", rig_device_name(c->devices[i - 1]));
    assert_lost_with(c->devices[i], why);
  }
}

/* How the first device of a chain stops: a fault or a hang at its next
 * value. */
enum upstream { FAULT, HANG };
/* What waits on the last device: a point's wait or a host read. */
enum downstream { POINT_WAIT, HOST_READ };

/* Makes a chain of n devices whose first one stops as how says, then waits
 * on the last device alone, as what says: the wait answers Lost within
 * the upstream hang bound (and slack), the loss spread along the chain. */
static void assert_loss_spreads(int n, enum upstream how, enum downstream what) {
  struct chain c;
  char config[64];
  snprintf(config, sizeof config, "commit_every=8,hang_ms=%d", HANG_MS);
  open_chain(&c, n, config);
  if (how == HANG) {
    const rig_sim_inject_t *inj = sim_inject(c.devices[0]);
    inj->hang_at(inj->device, rig_submitted(c.devices[0]) + 1);
  } else {
    sim_fault_next(c.devices[0], "bus error");
  }
  rig_point_t p = copy_along(&c);
  rig_device_t *last = c.devices[n - 1];
  int64_t start = now_ms();
  if (what == HOST_READ) {
    cr_assert_not_null(rig_buffer_host(c.buffers[n - 1]), "the copy's destination is host-addressed");
    CHECK_LOST(last, rig_buffer_read(c.buffers[n - 1], 1, read_nothing, NULL), "a read of the copy's destination");
  } else {
    CHECK_LOST(last, rig_point_wait(p), "a wait on the last device alone");
  }
  int64_t took = now_ms() - start;
  cr_assert(took < HANG_MS + SLACK_MS, "the wait took %lld ms past a hang bound of %d ms", (long long)took,
            HANG_MS);
  char why[64];
  snprintf(why, sizeof why, "no progress for %d ms", HANG_MS);
  assert_spread(&c, how == HANG ? why : "bus error");
  drop_chain(&c);
}

/* ---- Faults ------------------------------------------------------------ */

Test(waits_downstream, a_wait_downstream_of_a_fault_answers_lost, .timeout = 30) { /* LOSS-04 */
  assert_loss_spreads(2, FAULT, POINT_WAIT);
}

Test(waits_downstream, a_host_read_downstream_of_a_fault_answers_lost, .timeout = 30) { /* LOSS-04 LMEM-01 */
  assert_loss_spreads(2, FAULT, HOST_READ);
}

Test(waits_downstream, a_wait_two_hops_downstream_of_a_fault_answers_lost, .timeout = 30) { /* LOSS-04 LOSS-15 */
  assert_loss_spreads(3, FAULT, POINT_WAIT);
}

/* ---- Hangs ------------------------------------------------------------- */

Test(waits_downstream, a_wait_downstream_of_a_hang_answers_lost_within_its_bound, .timeout = 30) { /* HANG-02 HANG-06 LOSS-04 */
  assert_loss_spreads(2, HANG, POINT_WAIT);
}

Test(waits_downstream, a_host_read_downstream_of_a_hang_answers_lost_within_its_bound, .timeout = 30) { /* HANG-02 HANG-06 LMEM-01 */
  assert_loss_spreads(2, HANG, HOST_READ);
}

Test(waits_downstream, a_wait_two_hops_downstream_of_a_hang_answers_lost_within_its_bound, .timeout = 30) { /* HANG-02 HANG-06 LOSS-15 */
  assert_loss_spreads(3, HANG, POINT_WAIT);
}
