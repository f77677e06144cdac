#include "suite_runner.h"

#include <stdio.h>
#include <stdlib.h>

struct two_hosts *suite_runner_hosts(int argc, char *argv[]) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SUITE [ARGUMENTS...]\n", argv[0]);
    exit(2);
  }
  struct two_hosts *h = two_hosts_up();
  if (!h) {
    printf("skipped: two hosts cannot be made here: %s\n", two_hosts_error());
    exit(suite_runner_skipped);
  }
  return h;
}
