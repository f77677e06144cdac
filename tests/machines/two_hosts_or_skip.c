/* Runs a machines suite where the two hosts can be made here, and answers
 * 77 (the suite's SKIP_RETURN_CODE) with the reason where they cannot, so
 * that CTest reports such a suite skipped, never passed.  After the suite
 * it removes the namespaces that its tests' processes left: those that
 * crashed or ran past their timeout before their teardown.
 * Usage: two_hosts_or_skip SUITE [ARGUMENTS...] */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suite_runner.h"
#include "two_hosts.h"

int main(int argc, char *argv[]) {
  struct two_hosts *probe = suite_runner_hosts(argc, argv);
  if (two_hosts_down(probe) != 0) {
    fprintf(stderr, "%s: the probe's two hosts would not go: %s\n", argv[0], two_hosts_error());
    return 1;
  }
  fflush(NULL);
  pid_t suite = fork();
  if (suite == 0) {
    execv(argv[1], argv + 1);
    fprintf(stderr, "%s: execv %s: %s\n", argv[0], argv[1], strerror(errno));
    _exit(127);
  }
  if (suite < 0) fprintf(stderr, "%s: fork: %s\n", argv[0], strerror(errno));
  int status = 0;
  while (suite > 0 && waitpid(suite, &status, 0) < 0 && errno == EINTR) continue;
  int answer = suite < 0 ? 1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (two_hosts_sweep() < 0) {
    fprintf(stderr, "%s: after the suite: %s\n", argv[0], two_hosts_error());
    if (answer == 0) answer = 1;
  }
  return answer;
}
