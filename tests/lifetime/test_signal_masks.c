/* Lifetime: which driver calls rig masks signals around (ERR-06, and its
 * exemption for drivers whose queue calls are signal-safe).
 *
 * The test interposes pthread_sigmask (mask_calls.h): it counts exactly
 * the system calls of the masks rig makes on the test's thread.
 *
 * Asserts:
 *   ERR-06 (a sim device's queue calls run masked: two mask calls, at least,
 *   around each submission, as the sim's own check in test_domains.c
 *   asserts from inside the driver);
 *   ERR-06's exemption (DESIGN.md's table: a driver whose facts say its
 *   room, submit, commit and sleep are signal-safe gets no mask around
 *   them): a stream of submits and waits on a memory device, and on a
 *   proxy of rigd's (MEM:0@rigd, on the rigd of the CTest fixture,
 *   $RIG_SERVICE), makes no mask call at all, and a signal sent to the
 *   thread during the stream runs its handler inside the stream, not after
 *   it;
 *   ERR-07 (reads of the word: rig_signaled and a reached point make none).
 */
#define _GNU_SOURCE

#include <rig/rig.h>

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"
#include "helpers.h"
#include "mask_calls.h"

/* A submission on b's device of one part over b (slot 0) that its driver's
 * room and submit run: a words part writing b's first word where the host
 * addresses b (a fill or copy of such memory runs on the host, calling no
 * driver), else a fill (a proxy of a device not the host runs no words). */
static rig_submission_t *work_on(rig_buffer_t *b) {
  static const rig_word_write_t write = {{0, NULL}, 0, 7};
  rig_part_t part = {0};
  if (host_addresses(rig_buffer_device(b))) {
    part.kind = RIG_WORDS;
    part.u.words.writes = &write;
    part.u.words.count = 1;
  } else {
    part.kind = RIG_FILL;
    part.u.fill.value = 7;
  }
  rig_submission_t *s = NULL;
  CHECK_OK(rig_submission_make(rig_buffer_device(b), &part, 1, NULL, &s));
  return s;
}

/* n submits of s over b; each waited for where wait. */
static void submit_work(rig_submission_t *s, rig_buffer_t *b, int n, bool wait) {
  for (int i = 0; i < n; i++) {
    rig_run_t *run = NULL;
    rig_point_t p;
    CHECK_OK(rig_submission_take(s, &run));
    CHECK_OK(rig_submit(run, &b, 1, NULL, 0, &p));
    if (wait) CHECK_OK(rig_point_wait(p));
  }
}

/* 1000 submits and waits on the device name opens make no mask call. */
static void queue_calls_make_no_mask(const char *name) {
  rig_device_t *d = open_named(name);
  rig_buffer_t *b = create(d, 4096);
  rig_submission_t *s = work_on(b);
  submit_work(s, b, 8, true); /* warm: the thread's scratch is made */
  long before = (long)mask_calls();
  submit_work(s, b, 1000, true);
  uint64_t signaled = 0;
  CHECK_OK(rig_signaled(d, &signaled));
  cr_assert_eq(signaled, rig_submitted(d));
  long masks = (long)mask_calls() - before;
  cr_assert_eq(masks, 0, "1000 submits and waits on %s made %ld mask calls", name, masks);
  rig_submission_unref(s);
  rig_buffer_unref(b);
}

Test(signal_masks, a_memory_devices_queue_calls_make_no_mask) { /* ERR-06's exemption, ERR-07 */
  queue_calls_make_no_mask("MEM:90");
}

Test(signal_masks, a_proxys_queue_calls_make_no_mask) { /* ERR-06's exemption, ERR-07 */
  queue_calls_make_no_mask("MEM:0@rigd");
}

Test(signal_masks, a_sim_devices_queue_calls_stay_masked) { /* ERR-06 */
  rig_device_t *sim = open_named("SIM:90");
  rig_buffer_t *b = create(sim, 4096);
  rig_submission_t *s = work_on(b);
  submit_work(s, b, 8, true);
  long before = (long)mask_calls();
  submit_work(s, b, 100, true);
  long masks = (long)mask_calls() - before;
  cr_assert_geq(masks, 200, "100 submits on SIM:90 made only %ld mask calls", masks);
  rig_submission_unref(s);
  rig_buffer_unref(b);
}

static atomic_int handled;
static atomic_int stream_running;
static atomic_int seen_running;

static void on_usr1(int sig) {
  (void)sig;
  /* Whether the stream was still under way as the handler ran. */
  atomic_store(&seen_running, atomic_load(&stream_running));
  atomic_store(&handled, 1);
}

struct target {
  pthread_t thread;
  atomic_int *go;
};

static void *send_usr1(void *arg) {
  struct target *t = arg;
  while (!atomic_load(t->go)) usleep(100);
  pthread_kill(t->thread, SIGUSR1);
  return NULL;
}

/* A signal sent to the thread during a stream of submits on the device name
 * opens runs its handler inside the stream, which makes no mask call. */
static void a_signal_runs_inside_a_stream(const char *name) {
  rig_device_t *d = open_named(name);
  rig_buffer_t *b = create(d, 4096);
  rig_submission_t *s = work_on(b);
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, NULL);
  atomic_int go = 0;
  struct target t = {pthread_self(), &go};
  pthread_t sender;
  pthread_create(&sender, NULL, send_usr1, &t);
  atomic_store(&stream_running, 1);
  long before = (long)mask_calls();
  /* The stream goes on until the handler ran, within a bound. */
  int i = 0;
  for (; i < 2000000 && !atomic_load(&handled); i++) {
    if (i == 100) atomic_store(&go, 1);
    submit_work(s, b, 1, false);
  }
  long masks = (long)mask_calls() - before;
  atomic_store(&stream_running, 0);
  pthread_join(sender, NULL);
  cr_assert(atomic_load(&handled), "the signal's handler did not run during %d submits on %s", i, name);
  cr_assert(atomic_load(&seen_running), "the handler ran after the stream on %s", name);
  cr_assert_eq(masks, 0, "the stream on %s made %ld mask calls", name, masks);
  signal(SIGUSR1, SIG_DFL);
  rig_submission_unref(s);
  rig_buffer_unref(b);
}

Test(signal_masks, a_signal_during_a_stream_of_submits_runs_inside_it) { /* ERR-06's exemption */
  a_signal_runs_inside_a_stream("MEM:91");
}

Test(signal_masks, a_signal_during_a_stream_of_proxy_submits_runs_inside_it) { /* ERR-06's exemption */
  a_signal_runs_inside_a_stream("MEM:0@rigd");
}
