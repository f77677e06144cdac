/* Conformance: rig.txt's Local (values per device), on test device 0 of
 * RIG_TEST_DEVICES.
 *
 * Asserts: LOCAL-01 (init runs at the first get), LOCAL-02 (later gets
 *   answer the same value), LOCAL-03 (init runs once per device, also for
 *   two threads that first get the key on the device at once); a get of a
 *   key from inside that key's own init on the same device answers
 *   RIG_EINVAL, as a call made inside a lock (rig.txt, Callbacks), where it
 *   would otherwise recurse without end.
 *
 * Not reached here: LOCAL-04, LOCAL-05 (drops after the stop) are the sim
 *   suite's (test_lifecycle.c); LOCAL-06 (a reopened name) test_stops.c's.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <rig/rig.h>
#include <stdatomic.h>

#include "check.h"
#include "devices.h"
#include "helpers.h"

/* ---- Two first gets at once ---------------------------------------------- */

struct race {
  atomic_int inits;
  rig_local_key_t *key;
  rig_device_t *device;
  void *got[2];
  rig_status_t status[2];
};

/* Counts its runs, then stays until a second run has started (at most
 * 300 ms), so that two gets running init at once both do. */
static void *counting_init(rig_device_t *d, void *context) {
  (void)d;
  struct race *r = context;
  int mine = atomic_fetch_add(&r->inits, 1) + 1;
  for (int i = 0; i < 300 && atomic_load(&r->inits) < 2; i++) nap_ms(1);
  return (void *)(intptr_t)mine;
}

struct getter {
  struct race *race;
  int index;
};

static void *get_in_thread(void *arg) {
  struct getter *g = arg;
  struct race *r = g->race;
  r->status[g->index] = rig_local_get(r->key, r->device, &r->got[g->index]);
  return NULL;
}

Test(locals, two_first_gets_at_once_run_init_once) { /* LOCAL-02 LOCAL-03 */
  struct race r = {.device = test_device(0)};
  atomic_init(&r.inits, 0);
  r.key = rig_local_new_key(counting_init, NULL, &r);
  cr_assert_not_null(r.key);
  pthread_t threads[2];
  struct getter getters[2] = {{&r, 0}, {&r, 1}};
  for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&threads[i], NULL, get_in_thread, &getters[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
  for (int i = 0; i < 2; i++) cr_assert_eq(r.status[i], RIG_OK, "get %d: %s", i, rig_status_name(r.status[i]));
  cr_assert_eq(atomic_load(&r.inits), 1, "init ran %d times on %s for one key", atomic_load(&r.inits),
               rig_device_name(r.device));
  cr_assert_eq(r.got[0], r.got[1], "the two gets answered different values");
  void *again = NULL;
  CHECK_OK(rig_local_get(r.key, r.device, &again));
  cr_assert_eq(again, r.got[0], "a later get answers the value the first made");
  cr_assert_eq(atomic_load(&r.inits), 1);
}

/* ---- A get from inside its own init -------------------------------------- */

struct nested {
  rig_local_key_t *key;
  int inits;
  rig_status_t inner;
  char why[256];
};

static int nested_value;

/* Gets its own key on the same device, once: the old library recursed. */
static void *getting_init(rig_device_t *d, void *context) {
  struct nested *n = context;
  if (n->inits++ == 0) {
    void *inner = &nested_value;
    n->inner = rig_local_get(n->key, d, &inner);
    snprintf(n->why, sizeof n->why, "%s", rig_last_error());
    cr_assert_null(inner, "a refused get answers NULL");
  }
  return &nested_value;
}

Test(locals, a_get_from_inside_its_own_init_is_refused) { /* LOCAL-01 LOCAL-03 */
  rig_device_t *d = test_device(0);
  struct nested n = {.inner = RIG_OK};
  n.key = rig_local_new_key(getting_init, NULL, &n);
  void *value = NULL;
  CHECK_OK(rig_local_get(n.key, d, &value));
  cr_assert_eq(n.inner, RIG_EINVAL, "the get inside init answered %s, want RIG_EINVAL", rig_status_name(n.inner));
  cr_assert(strstr(n.why, rig_device_name(d)) != NULL, "the message names the device: %s", n.why);
  cr_assert_eq(n.inits, 1, "init ran %d times", n.inits);
  cr_assert_eq(value, &nested_value, "the outer get answers init's value");
  CHECK_OK(rig_local_get(n.key, d, &value));
  cr_assert_eq(n.inits, 1);
}
