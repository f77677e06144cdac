/* The run suite: handles used after their release (rig.h, Handles).  Each
 * handle type of rig.h that a caller releases (buffers, exported arrays,
 * images, functions, submissions, runs) is used after its last release,
 * and the use answers RIG_EINVAL naming what was released, or what a NULL
 * handle answers where the function has no status, and crashes nothing:
 * no SIGBUS of unmapped memory, no use after free under ASan.  A closed
 * device answers RIG_ELOST.  Machines and devices live for the process,
 * so no use of theirs comes after a release.
 *
 * Asserts rig.h's rule that no input, however wrong, crashes the library,
 * and its Handles paragraph; of RULES.md: DEV-43 (a closed device answers
 * RIG_ELOST), SUB-03 (a released submission's memory returns only after
 * its last work), RECL-02 (the allocation stays while a buffer over it
 * remains).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <rig/disk.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "helpers.h"
#include "run_support.h"

/* call answers RIG_EINVAL with a message that says what was released. */
#define FAILS_RELEASED(what, call)                                                                  \
  do {                                                                                              \
    CHECK_FAILS(RIG_EINVAL, call);                                                                  \
    cr_assert(strstr(check_error_copy(), what " was released") != NULL, "%s: \"%s\" does not say " \
              "\"%s was released\"", #call, check_error_copy(), what);                              \
  } while (0)

static int count_calls(void *bytes, int64_t n, void *context) {
  (void)bytes, (void)n;
  (*(int *)context)++;
  return 0;
}

/* Every use of the released buffer b answers as released; none calls f. */
static void assert_buffer_released(rig_buffer_t *b, rig_device_t *d) {
  int calls = 0;
  FAILS_RELEASED("the buffer", rig_buffer_read(b, 1, count_calls, &calls));
  FAILS_RELEASED("the buffer", rig_buffer_write(b, 1, count_calls, &calls));
  cr_assert_eq(calls, 0, "a released buffer's bytes were accessed");
  FAILS_RELEASED("the buffer", rig_buffer_fill(b, 1));
  FAILS_RELEASED("the buffer", rig_buffer_wait(b, RIG_ACCESS_READ));
  rig_buffer_t *out = NULL;
  FAILS_RELEASED("the buffer", rig_buffer_view(b, 0, 1, &out));
  FAILS_RELEASED("the buffer", rig_buffer_borrow(d, b, &out));
  cr_assert_null(out);
  uint8_t byte = 0;
  FAILS_RELEASED("the buffer", rig_buffer_blit_to_bytes(b, 0, &byte, 1, 0, 1));
  bool answer = true;
  FAILS_RELEASED("the buffer", rig_buffer_free(b, NULL, &answer));
  FAILS_RELEASED("the buffer", rig_claim_begin(b, &answer));
  cr_assert_not(answer);
  FAILS_RELEASED("the buffer", rig_claim_hold(b));
  FAILS_RELEASED("the buffer", rig_claim_end(b));
  cr_assert_eq(rig_buffer_claim(b, RIG_ACCESS_READ), RIG_CLAIM_INVALID);
  rig_buffer_release(b);
  /* Properties answer as for NULL, but dead, which says why. */
  cr_assert_eq(rig_buffer_bytes(b), 0);
  cr_assert_null(rig_buffer_device(b));
  cr_assert_null(rig_buffer_host(b));
  cr_assert_str_eq(rig_buffer_dead(b), "released");
  cr_assert_null(rig_buffer_ref(b), "a released buffer takes no reference");
  rig_buffer_unref(b); /* a second release is ignored */
}

Test(released, a_buffer_of_host_memory) {
  rig_buffer_t *b = create(rig_host(), 4096);
  CHECK_OK(rig_buffer_fill(b, 7));
  rig_buffer_unref(b);
  assert_buffer_released(b, rig_host());
}

Test(released, a_buffer_of_a_sim_device_in_a_submit) { /* RECL-02 */
  rig_device_t *sim = open_with("SIM:36", SIM_QUICK);
  rig_buffer_t *b = create(sim, 4096), *keep = create(sim, 4096);
  rig_buffer_t *part = view(b, 0, 64);
  rig_part_t fill = fill_part(slot(0), 3);
  rig_submission_t *s = make(sim, &fill, 1);
  rig_buffer_unref(b);
  /* The view keeps the allocation; the released handle is refused. */
  rig_run_t *r = take(s);
  FAILS_RELEASED("slot 0's buffer", rig_submit(r, &b, 1, NULL, 0, NULL));
  CHECK_OK(rig_buffer_fill(part, 1), "the view lives on");
  rig_buffer_unref(part);
  assert_buffer_released(b, sim);
  r = take(s);
  CHECK_OK(rig_submit(r, &keep, 1, NULL, 0, NULL), "the run was freed by the refused submit");
  rig_submission_unref(s);
  rig_buffer_unref(keep);
  CHECK_OK(rig_close(sim));
}

Test(released, a_buffer_of_an_io_device_and_its_borrow_on_the_host) {
  char path[] = "/var/tmp/rig-released-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  static uint8_t bytes[65536];
  memset(bytes, 5, sizeof bytes);
  cr_assert_eq(write(fd, bytes, sizeof bytes), (ssize_t)sizeof bytes);
  close(fd);
  rig_device_t *disk = NULL;
  CHECK_OK(rig_disk_device(&disk));
  rig_buffer_t *file = NULL;
  CHECK_OK(rig_disk_open(path, RIG_DISK_READ_WRITE, 0, -1, &file));
  /* The host borrows the file's pages: host access reads them in place. */
  rig_buffer_t *on_host = borrow(rig_host(), file);
  rig_buffer_unref(file);
  assert_buffer_released(file, disk);
  uint8_t five = 5;
  CHECK_OK(rig_buffer_read(on_host, 1, all_bytes_are, &five), "the borrow keeps the memory");
  rig_buffer_unref(on_host);
  assert_buffer_released(on_host, rig_host());
  unlink(path);
}

Test(released, an_exported_array) {
  rig_buffer_t *b = create(rig_host(), 4096);
  rig_export_t *e = NULL;
  CHECK_OK(rig_buffer_export(b, 1, &e));
  rig_buffer_unref(b);
  cr_assert_not_null(rig_export_bytes(e, NULL));
  rig_export_unref(e);
  int64_t n = 1;
  cr_assert_null(rig_export_bytes(e, &n), "a released array has no bytes");
  cr_assert_eq(n, 0);
  rig_export_unref(e); /* ignored */
}

Test(released, an_image_and_its_functions) {
  rig_device_t *sim = open_with("SIM:37", SIM_QUICK);
  rig_image_t *image = load_kernels(sim, RUN_KERNEL("work"));
  rig_function_t *set = function_of(image, "set");
  rig_image_unref(image);
  rig_function_t *f = NULL;
  FAILS_RELEASED("the image", rig_image_resolve(image, "set", &f));
  cr_assert_null(f);
  FAILS_RELEASED("the image", rig_image_prepare(image, "set"));
  cr_assert_null(rig_image_device(image));
  cr_assert_null(rig_image_ref(image));
  rig_image_unref(image); /* ignored */
  /* Its functions went with it. */
  cr_assert_null(rig_function_name(set));
  cr_assert_null(rig_function_image(set));
  cr_assert_eq(rig_function_max_threads(set), 0);
  rig_ref_t refs[1];
  rig_part_t launch = set_launch(set, refs, RIG_REF_WRITE, slot(0));
  rig_submission_t *s = NULL;
  FAILS_RELEASED("part 0's function", rig_submission_make(sim, &launch, 1, NULL, &s));
  cr_assert_null(s);
  CHECK_OK(rig_close(sim));
}

Test(released, a_submission_and_its_runs) { /* SUB-03 */
  rig_device_t *sim = open_with("SIM:38", SIM_QUICK);
  rig_buffer_t *b = create(sim, 4096);
  rig_part_t fill = fill_part(slot(0), 3);
  rig_submission_t *s = make(sim, &fill, 1);
  rig_run_t *r = take(s);
  CHECK_OK(rig_run_fill(r, 0, 4));
  rig_submission_unref(s);
  FAILS_RELEASED("the run", rig_run_fill(r, 0, 5));
  FAILS_RELEASED("the run", rig_run_int64(r, 0, 0, 1));
  FAILS_RELEASED("the run", rig_submit(r, &b, 1, NULL, 0, NULL));
  cr_assert_null(rig_run_submission(r));
  rig_run_t *again = NULL;
  FAILS_RELEASED("the submission", rig_submission_take(s, &again));
  cr_assert_null(again);
  cr_assert_eq(rig_submission_slots(s), 0);
  cr_assert_eq(rig_submission_block(s, 0), -1);
  cr_assert_null(rig_submission_ref(s));
  rig_submission_unref(s); /* ignored */
  rig_buffer_unref(b);
  CHECK_OK(rig_close(sim));
}

Test(released, a_closed_device_answers_lost) { /* DEV-43 */
  rig_device_t *sim = open_with("SIM:39", SIM_QUICK);
  CHECK_OK(rig_close(sim));
  rig_buffer_t *b = NULL;
  CHECK_FAILS(RIG_ELOST, rig_buffer_create(sim, 64, RIG_MEMORY_DEVICE, &b));
  cr_assert_null(b);
}
