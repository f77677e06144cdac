/* The start both runners of the machines suites share (two_hosts_or_skip,
 * with_remote_peer): their usage, `RUNNER SUITE [ARGUMENTS...]`, and the
 * two hosts, without which a suite shows skipped, never passed. */
#ifndef RIG_TESTS_SUITE_RUNNER_H
#define RIG_TESTS_SUITE_RUNNER_H

#include "two_hosts.h"

/* The exit status CTest's SKIP_RETURN_CODE of the machines suites names. */
enum { suite_runner_skipped = 77 };

/* The two hosts (two_hosts_up); exits 2 with the usage where argv names no
 * suite, and suite_runner_skipped with the reason where the hosts cannot
 * be made here. */
struct two_hosts *suite_runner_hosts(int argc, char *argv[]);

#endif
