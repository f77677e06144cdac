/* The runner of criterion.h's tests in ThreadSanitizer builds: runs each
 * registered test, in the order of suite and name, in a child process of
 * its own (its suite's and its own .init before it, .fini after, also
 * after a failed cr_assert ends the test, as Criterion runs them), and
 * reports each as Criterion does.  A test passes where its process exits 0
 * (or with its .exit_code, or by its .signal), fails where a check failed,
 * it crashed or it ran past its .timeout.  The exit status is 0 where no
 * test failed.  Options: --filter PATTERN (a glob over suite/name, as
 * Criterion's), --jobs N (accepted: the tests run one at a time). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { exit_failed = 1, exit_skipped = 77 };

static struct rig_cr_test *tests;
static struct rig_cr_suite *suites;
static bool failed_check;  /* in a test's process: a cr_expect failed */
/* In a test's process: where a failed cr_assert or a cr_skip on the
 * test's thread ends the test, so that its .fini still runs (a test's
 * rigd, say, is stopped, not left behind). */
static sigjmp_buf end_of_test;
static bool in_test;
static pthread_t test_thread;
enum { ended_failed = 1, ended_skipped = 2 };

/* Ends the test as ended says: back to its runner where the test's own
 * thread calls, else (another thread, an .init or .fini) the process. */
__attribute__((noreturn)) static void end_test(int ended) {
  if (in_test && pthread_equal(pthread_self(), test_thread)) siglongjmp(end_of_test, ended);
  _exit(ended == ended_skipped ? exit_skipped : exit_failed);
}

void rig_cr_register_test(struct rig_cr_test *test) {
  test->next = tests;
  tests = test;
}

void rig_cr_register_suite(struct rig_cr_suite *suite) {
  suite->next = suites;
  suites = suite;
}

void rig_cr_fail(const char *file, int line, bool fatal, const char *expression, const char *format, ...) {
  char message[4096] = "";
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  fprintf(stderr, "[----] %s:%d: %s\n[----]   %s\n", file, line, fatal ? "Assertion Failed" : "Expectation Failed",
          message[0] ? message : expression);
  fflush(NULL);
  failed_check = true;
  if (fatal) end_test(ended_failed);
}

void rig_cr_skip(const char *format, ...) {
  char message[4096] = "";
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  fprintf(stderr, "[----] skipped: %s\n", message);
  fflush(NULL);
  end_test(ended_skipped);
}

static const struct rig_cr_options *suite_options(const char *name) {
  for (struct rig_cr_suite *s = suites; s; s = s->next)
    if (strcmp(s->name, name) == 0) return s->options;
  static const struct rig_cr_options none;
  return &none;
}

static int by_suite_and_name(const void *a, const void *b) {
  const struct rig_cr_test *x = *(struct rig_cr_test *const *)a, *y = *(struct rig_cr_test *const *)b;
  int c = strcmp(x->suite, y->suite);
  return c ? c : strcmp(x->name, y->name);
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs the test in a child; answers its wait status, or -1 past timeout
 * seconds (0: none), once the child is killed. */
static int run_in_child(const struct rig_cr_test *t, const struct rig_cr_options *suite, double timeout) {
  fflush(NULL);
  pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "[----] fork: %s\n", strerror(errno));
    return W_EXITCODE(exit_failed, 0);
  }
  if (child == 0) {
    if (suite->init) suite->init();
    if (t->options->init) t->options->init();
    test_thread = pthread_self();
    int ended = sigsetjmp(end_of_test, 0);
    if (ended == 0) {
      in_test = true;
      t->run();
    }
    in_test = false;
    if (t->options->fini) t->options->fini();
    if (suite->fini) suite->fini();
    fflush(NULL);
    _exit(ended == ended_skipped ? exit_skipped : failed_check ? exit_failed : 0);
  }
  double until = seconds_now() + timeout;
  for (;;) {
    int status;
    pid_t ended = waitpid(child, &status, timeout > 0 ? WNOHANG : 0);
    if (ended == child) return status;
    if (ended < 0 && errno != EINTR) return W_EXITCODE(exit_failed, 0);
    if (timeout > 0 && seconds_now() > until) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return -1;
    }
    if (ended == 0) usleep(5000);
  }
}

int main(int argc, char **argv) {
  const char *filter = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
      filter = argv[++i];
    else if (strncmp(argv[i], "--filter=", 9) == 0)
      filter = argv[i] + 9;
    else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
      i++;
    else if (strncmp(argv[i], "--jobs=", 7) != 0 && strncmp(argv[i], "-j", 2) != 0) {
      fprintf(stderr, "%s: unknown option %s (this runner takes --filter and --jobs)\n", argv[0], argv[i]);
      return 2;
    }
  }
  size_t count = 0;
  for (struct rig_cr_test *t = tests; t; t = t->next) count++;
  struct rig_cr_test **order = calloc(count ? count : 1, sizeof *order);
  if (!order) return 2;
  size_t n = 0;
  for (struct rig_cr_test *t = tests; t; t = t->next) order[n++] = t;
  qsort(order, count, sizeof *order, by_suite_and_name);

  size_t tested = 0, passing = 0, failing = 0, crashing = 0, skipped = 0;
  for (size_t i = 0; i < count; i++) {
    const struct rig_cr_test *t = order[i];
    char full[512];
    snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
    if (filter && fnmatch(filter, full, 0) != 0) continue;
    const struct rig_cr_options *suite = suite_options(t->suite);
    if (t->options->disabled || suite->disabled) {
      printf("[SKIP] %s::%s: disabled\n", t->suite, t->name);
      skipped++;
      continue;
    }
    double timeout = t->options->timeout > 0 ? t->options->timeout : suite->timeout;
    int expected_signal = t->options->signal ? t->options->signal : suite->signal;
    int expected_exit = t->options->exit_code ? t->options->exit_code : suite->exit_code;
    double start = seconds_now();
    int status = run_in_child(t, suite, timeout);
    double took = seconds_now() - start;
    tested++;
    const char *verdict;
    if (status == -1) {
      verdict = "FAIL";
      printf("[----] %s::%s: timed out after %.0f s\n", t->suite, t->name, timeout);
      failing++;
    } else if (WIFSIGNALED(status)) {
      bool expected = WTERMSIG(status) == expected_signal;
      verdict = expected ? "PASS" : "FAIL";
      if (!expected) printf("[----] %s::%s: CRASH! signal %d\n", t->suite, t->name, WTERMSIG(status));
      if (expected)
        passing++;
      else
        crashing++;
    } else if (WEXITSTATUS(status) == exit_skipped && !expected_exit) {
      verdict = "SKIP";
      skipped++;
      tested--;
    } else {
      bool expected = !expected_signal && WEXITSTATUS(status) == expected_exit;
      verdict = expected ? "PASS" : "FAIL";
      if (expected)
        passing++;
      else
        failing++;
    }
    printf("[%s] %s::%s: (%.2fs)\n", verdict, t->suite, t->name, took);
    fflush(stdout);
  }
  free(order);
  printf("[====] Synthesis: Tested: %zu | Passing: %zu | Failing: %zu | Crashing: %zu | Skipped: %zu\n", tested,
         passing, failing, crashing, skipped);
  return failing || crashing ? 1 : 0;
}
