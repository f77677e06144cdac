#define _GNU_SOURCE
#include "machine_fixture.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct two_hosts *hosts;
struct machine_agent agent;

void machine_fixture_up(const char *devices) {
  hosts = two_hosts_up();
  if (!hosts) cr_skip_test("two hosts cannot be made here: %s", two_hosts_error());
  cr_assert_eq(machine_agent_start(&agent, hosts, RIGD_PATH, devices), 0, "the agent in side a: %s",
               machine_agent_error());
}

void machine_fixture_down(void) {
  machine_agent_stop(&agent);
  two_hosts_down(hosts);
  hosts = NULL;
}

void machine_run(int (*fn)(void *arg), void *arg, const char *what) {
  int answer = two_hosts_run(hosts, TWO_HOSTS_B, fn, arg);
  if (answer != 0) machine_agent_ended(&agent);
  cr_assert_eq(answer, 0, "%s: the client in side b answered %d (%s)", what, answer,
               answer < 0 ? two_hosts_error() : "its reason above");
}

static int run_client(void *arg) {
  struct machine_client *c = arg;
  close(c->ready[0]);
  return c->fn(c);
}

static void *wait_for_client(void *arg) {
  struct machine_client *c = arg;
  c->answer = two_hosts_run(hosts, TWO_HOSTS_B, run_client, c);
  if (c->answer < 0) snprintf(c->error, sizeof c->error, "%s", two_hosts_error());
  /* The test's read of ready ends once no client can write it. */
  close(c->ready[1]);
  return NULL;
}

void machine_client_start(struct machine_client *c, int (*fn)(struct machine_client *c), void *arg) {
  c->fn = fn;
  c->arg = arg;
  c->answer = -1;
  cr_assert_eq(pipe2(c->ready, O_CLOEXEC), 0, "pipe: %s", strerror(errno));
  cr_assert_eq(pthread_create(&c->thread, NULL, wait_for_client, c), 0, "the client's thread");
}

void machine_client_ready(struct machine_client *c) {
  char go = 1;
  ssize_t written = write(c->ready[1], &go, 1);
  (void)written;
}

void machine_client_await_ready(struct machine_client *c, int ms, const char *what) {
  struct pollfd ready = {c->ready[0], POLLIN, 0};
  char go = 0;
  int polled = poll(&ready, 1, ms);
  cr_assert(polled == 1 && read(c->ready[0], &go, 1) == 1 && go == 1,
            "%s: the client in side b was not ready within %d ms (it ended, its reason above, or hangs)", what, ms);
}

void machine_client_join(struct machine_client *c, const char *what) {
  pthread_join(c->thread, NULL);
  close(c->ready[0]);
  if (c->answer != 0) machine_agent_ended(&agent);
  cr_assert_eq(c->answer, 0, "%s: the client in side b answered %d (%s)", what, c->answer,
               c->answer < 0 ? c->error : "its reason above");
}
