/* The main of a GPU suite: Criterion's own, but for its exit status where
 * every test skipped itself (no GPU here), which is SKIPPED_EXIT, so that
 * CTest reports the suite skipped (SKIP_RETURN_CODE) rather than passed: a
 * pass always means that something ran. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include <stdbool.h>
#include <stdio.h>

#include "skipped_main.h"

static size_t tests_run, tests_skipped;

ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
  tests_run = stats->nb_tests;
  tests_skipped = stats->tests_skipped;
}

int main(int argc, char *argv[]) {
  struct criterion_test_set *tests = criterion_initialize();
  int status = 0;
  if (criterion_handle_args(argc, argv, true)) status = criterion_run_all_tests(tests) ? 0 : 1;
  criterion_finalize(tests);
  if (status == 0 && tests_run > 0 && tests_skipped == tests_run) {
    printf("every one of the %zu tests skipped itself: the suite is skipped\n", tests_run);
    return SKIPPED_EXIT;
  }
  return status;
}
