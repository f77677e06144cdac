/* The fixture of the machines suites that drive a remote machine: two
 * hosts, and the agent (machine_agent.h) in side a, made for each test
 * (Criterion runs each in a process of its own) and taken down by its
 * fini; clients run in side b (machine_client.h), one at a time
 * (machine_run) or beside the test while it cuts the link or kills the
 * agent (machine_client_start). */
#ifndef RIG_TESTS_MACHINE_FIXTURE_H
#define RIG_TESTS_MACHINE_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>

#include "machine_agent.h"
#include "two_hosts.h"

/* Whether this is a sanitizers' build, which runs rig and rigd several
 * times slower: the suites' timeouts and bounds of their own grow. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MACHINE_SANITIZED 1
#else
#define MACHINE_SANITIZED 0
#endif
/* A suite's timeout of n seconds, five times that where sanitized. */
#define MACHINE_SUITE_TIMEOUT(n) ((MACHINE_SANITIZED ? 5.0 : 1.0) * (n))

extern struct two_hosts *hosts;
extern struct machine_agent agent;

/* Makes the two hosts, or skips the test with the reason they cannot be
 * made; then starts the agent on devices (the rigd built here), or fails
 * the test with its reason. */
void machine_fixture_up(const char *devices);
/* Criterion's fini: the agent stopped, the hosts down; also after a
 * failed test. */
void machine_fixture_down(void);

/* Runs fn(arg) in side b and asserts it answered 0 (its reason, on
 * stderr above, in the assertion's words). */
void machine_run(int (*fn)(void *arg), void *arg, const char *what);

/* A client of side b running beside the test, which it tells through
 * ready (machine_client_ready) when the test should act. */
struct machine_client {
  int (*fn)(struct machine_client *c);
  void *arg;
  int ready[2]; /* the client writes ready[1]; the test reads ready[0] */
  pthread_t thread;
  int answer;
  char error[512]; /* two_hosts_error() where answer is -1 */
};

/* Starts fn(c) in side b, from a thread of the test's that waits for it. */
void machine_client_start(struct machine_client *c, int (*fn)(struct machine_client *c), void *arg);
/* In the client: tells the test to act now. */
void machine_client_ready(struct machine_client *c);
/* In the test: asserts the client said ready within ms. */
void machine_client_await_ready(struct machine_client *c, int ms, const char *what);
/* In the test: waits for the client and asserts it answered 0. */
void machine_client_join(struct machine_client *c, const char *what);

#endif
