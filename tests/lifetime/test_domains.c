/* Lifetime: calls made inside a lock, and signals across driver calls.
 *
 * A signal handler or a driver's callback that calls rig while its thread
 * holds a lock of rig's, of a driver's or of an io library's makes a call
 * "inside a lock" (rig.txt, Domains).  rig_hold (edge.h) counts such a lock
 * as a driver does, which stands for it here.
 *
 * Asserts:
 *   DOM-10 DOM-12 DRV-10 (a lock-taking call inside a lock answers
 *   RIG_EINVAL as it starts, having done nothing), DOM-13 DOM-14 (the calls
 *   that take no lock answer as usual), ERR-23 (the refusal leaves the
 *   device serving), DOM-15 (outside the lock a call runs as any),
 *   DRV-22 ERR-06 (rig calls the driver with signals blocked but the fault
 *   signals; the exemption of signal-safe queue calls is test_signal_masks.c's), DRV-23 ERR-15 (the thread's mask after the call is the mask
 *   before it), DRV-09 (no lock of rig's across driver calls).
 * Not reached here, and why:
 *   DOM-11 (submit frees its run inside a lock): submissions are issue #5.
 *   ERR-08..10 (signals delivered inside a driver's wait): a signal's
 *     timing against the sim's condition wait cannot be set by a test.
 */
#include <rig/edge.h>
#include <rig/rig.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "check.h"
#include "helpers.h"
#include "sim_inject.h"

Test(domains, a_call_inside_a_lock_is_refused_having_done_nothing) { /* DOM-10 DOM-12 DRV-10 ERR-23 */
  rig_device_t *mem = open_named("MEM:95");
  rig_buffer_t *b = create(mem, 4096);
  uint64_t submitted = rig_submitted(rig_host());
  int64_t allocated = rig_allocated(mem);
  rig_hold(1);
  rig_buffer_t *made = NULL;
  rig_device_t *opened = NULL;
  rig_point_t p;
  rig_status_t create_status = rig_buffer_create(mem, 64, RIG_MEMORY_DEVICE, &made);
  rig_status_t open_status = rig_open("MEM:96", NULL, &opened);
  rig_status_t fill_status = rig_buffer_submit_fill(b, 1, NULL, 0, &p);
  rig_status_t close_status = rig_close(mem);
  rig_hold(0);
  cr_assert_eq(create_status, RIG_EINVAL);
  cr_assert_eq(open_status, RIG_EINVAL);
  cr_assert_eq(fill_status, RIG_EINVAL);
  cr_assert_eq(close_status, RIG_EINVAL);
  cr_assert_null(made);
  cr_assert_null(opened);
  cr_assert_eq(rig_allocated(mem), allocated, "a refused create allocated");
  cr_assert_eq(rig_submitted(rig_host()), submitted, "a refused fill took a value");
  cr_assert_null(rig_lost(mem), "a refused close closed");
  /* Outside the lock, the same calls run as any call does (DOM-15). */
  CHECK_OK(rig_buffer_fill(b, 2));
  rig_buffer_unref(b);
}

Test(domains, calls_that_take_no_lock_answer_inside_a_lock) { /* DOM-13 DOM-14 */
  rig_device_t *mem = open_named("MEM:97");
  rig_buffer_t *b = create(mem, 4096);
  rig_point_t p = rig_point_make(mem, rig_submitted(mem));
  rig_hold(1);
  const char *name = rig_device_name(mem);
  int64_t alignment = rig_device_alignment(mem);
  bool reaches = rig_reaches(mem, rig_host());
  uint64_t submitted = rig_submitted(mem);
  const char *lost = rig_lost(mem);
  int64_t budget = rig_budget(mem), allocated = rig_allocated(mem);
  rig_device_t *point_device = rig_point_device(p);
  bool reached = false;
  rig_status_t reached_status = rig_point_reached(p, &reached);
  rig_buffer_t *part = NULL;
  rig_status_t view_status = rig_buffer_view(b, 8, 8, &part);
  uint64_t signaled = 0;
  rig_status_t signaled_status = rig_signaled(mem, &signaled);
  int64_t bytes = rig_buffer_bytes(b);
  rig_hold(0);
  cr_assert_str_eq(name, "MEM:97");
  cr_assert_eq(alignment, 64);
  cr_assert(reaches);
  cr_assert_null(lost);
  cr_assert_eq(budget, INT64_MAX);
  cr_assert_gt(allocated, 0);
  cr_assert_eq(point_device, mem);
  cr_assert_eq(reached_status, RIG_OK);
  cr_assert(reached);
  cr_assert_eq(view_status, RIG_OK);
  cr_assert_eq(rig_buffer_bytes(part), 8);
  cr_assert_eq(signaled_status, RIG_OK);
  cr_assert_eq(signaled, submitted);
  cr_assert_eq(bytes, 4096);
  rig_buffer_unref(part);
  rig_buffer_unref(b);
}

Test(domains, driver_calls_run_with_signals_blocked_and_the_mask_comes_back) {
  /* DRV-22 ERR-06 DRV-23 ERR-15 DRV-09 */
  sigset_t none, before, after;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, &before);
  rig_device_t *d = open_with("SIM:92", "latency_us=3000");
  const rig_sim_inject_t *inj = sim_inject(d);
  rig_buffer_t *host = create(rig_host(), 1 << 20);
  rig_buffer_t *on_d = create(d, 1 << 20);
  rig_buffer_t *borrowed = borrow(d, host);
  CHECK_OK(rig_buffer_fill(on_d, 3));           /* submit, commit, sleep */
  CHECK_OK(rig_buffer_copy(on_d, borrowed));    /* map_host */
  CHECK_OK(rig_buffer_copy(host, on_d));        /* staging */
  rig_buffer_unref(borrowed);
  rig_buffer_unref(on_d);
  rig_buffer_unref(host);
  CHECK_OK(rig_free_cache(d));                  /* free */
  CHECK_OK(rig_close(d));                       /* stop */
  pthread_sigmask(SIG_SETMASK, NULL, &after);
  cr_assert_eq(inj->calls_unmasked(inj->device), 0, "a driver call ran with signals not blocked");
  cr_assert_eq(inj->calls_inside_lock(inj->device), 0, "a driver call ran inside a lock of rig's");
  cr_assert(!sigismember(&after, SIGINT) && !sigismember(&after, SIGTERM),
            "rig left the thread's signals blocked after its calls");
  pthread_sigmask(SIG_SETMASK, &before, NULL);
}
