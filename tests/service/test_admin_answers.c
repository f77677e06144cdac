/* The client's side of rigd's admin channel (rig_service_stats and
 * rig_service_drop, rig/service.h) against a fake rigd that lies: it
 * answers each admin request once, with a reply and a snapshot of the
 * test's making.  A reply protocol.h's admin channel has no place for,
 * or a snapshot whose sizes lie, is refused RIG_EOPEN with a message that
 * names what was wrong, and the call leaves nothing behind (ERR-01);
 * none is read past its end nor makes the client take memory it does
 * not hold.  RULES.md numbers no rule of the admin channel itself: it is
 * the design's (DESIGN.md "The per-host service", Operators). */
#define _GNU_SOURCE 1 /* memfd_create */
#include <criterion/criterion.h>

#include <rig/rig.h>
#include <rig/service.h>

#include "protocol.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The fake rigd: a socket in a directory of its own, and the one answer
 * it gives, with snapshot attached where it is not -1. */
struct fake_rigd {
  char directory[64];
  char socket[96];
  int listening;
  struct rig_proxy_admin_reply reply;
  int snapshot;
  pthread_t thread;
};

static void *answer_once(void *arg) {
  struct fake_rigd *f = arg;
  int peer = accept(f->listening, NULL, NULL);
  if (peer < 0) return NULL;
  struct rig_proxy_admin_request request;
  if (recv(peer, &request, sizeof request, MSG_WAITALL) == (ssize_t)sizeof request) {
    struct iovec io = {&f->reply, sizeof f->reply};
    union {
      struct cmsghdr align;
      char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1};
    if (f->snapshot >= 0) {
      m.msg_control = control.bytes;
      m.msg_controllen = sizeof control.bytes;
      struct cmsghdr *c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      memcpy(CMSG_DATA(c), &f->snapshot, sizeof(int));
    }
    sendmsg(peer, &m, MSG_NOSIGNAL);
  }
  close(peer);
  return NULL;
}

/* Starts a fake rigd that answers reply, with snapshot attached (-1 for
 * none, else the fake's to close). */
static void start_fake(struct fake_rigd *f, struct rig_proxy_admin_reply reply, int snapshot) {
  snprintf(f->directory, sizeof f->directory, "/tmp/rig-fake-rigd-XXXXXX");
  cr_assert(mkdtemp(f->directory) != NULL);
  snprintf(f->socket, sizeof f->socket, "%s/rigd.sock", f->directory);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  snprintf(address.sun_path, sizeof address.sun_path, "%s", f->socket);
  f->listening = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  cr_assert(f->listening >= 0 && bind(f->listening, (struct sockaddr *)&address, sizeof address) == 0 &&
            listen(f->listening, 1) == 0);
  f->reply = reply;
  f->snapshot = snapshot;
  cr_assert(pthread_create(&f->thread, NULL, answer_once, f) == 0);
}

static void stop_fake(struct fake_rigd *f) {
  pthread_join(f->thread, NULL);
  close(f->listening);
  if (f->snapshot >= 0) close(f->snapshot);
  unlink(f->socket);
  rmdir(f->directory);
}

static struct rig_proxy_admin_reply reply_of(uint32_t magic, int32_t status) {
  struct rig_proxy_admin_reply r = {magic, RIG_PROXY_VERSION, status, 0, ""};
  return r;
}

/* Asks a fake rigd that answers reply, with snapshot attached (-1 for
 * none), for a drop of client 7 where drop says so, else a snapshot;
 * checks that a refused snapshot is NULL, and answers the status. */
static rig_status_t ask_fake(struct rig_proxy_admin_reply reply, int snapshot, bool drop) {
  struct fake_rigd f;
  start_fake(&f, reply, snapshot);
  rig_service_options_t opts = {sizeof opts, f.socket};
  rig_service_stats_t *s = (rig_service_stats_t *)&f;
  rig_status_t status = drop ? rig_service_drop(&opts, 7) : rig_service_stats(&opts, &s);
  stop_fake(&f);
  if (!drop && status != RIG_OK) cr_assert(s == NULL, "*out is NULL on error");
  if (!drop && status == RIG_OK) rig_service_stats_release(s);
  return status;
}

/* That the call answered RIG_EOPEN with a message naming what. */
static void assert_refused(rig_status_t status, const char *what) {
  cr_assert_eq(status, RIG_EOPEN, "%s: %s", rig_status_name(status), rig_last_error());
  cr_assert(strstr(rig_last_error(), what) != NULL, "the message names %s: %s", what, rig_last_error());
}

/* A welcome that admits is no answer to an admin request: only a refusal
 * at connect (a welcome of RIG_EOPEN) reads as one.  rig_service_drop
 * must not report a drop that rigd never answered (ERR-01). */
Test(admin_answers, a_welcome_that_admits_is_no_answer_to_a_drop) {
  assert_refused(ask_fake(reply_of(RIG_PROXY_MAGIC_WELCOME, RIG_OK), -1, true), "welcome of status 0");
}

/* An admin reply's status is RIG_OK, RIG_EOPEN or RIG_EINVAL
 * (protocol.h): another is refused, its number named (ERR-01). */
Test(admin_answers, a_status_no_admin_reply_has_is_refused) {
  assert_refused(ask_fake(reply_of(RIG_PROXY_MAGIC_ADMIN, 7), -1, false), "status 7");
  assert_refused(ask_fake(reply_of(RIG_PROXY_MAGIC_ADMIN, 7), -1, true), "status 7");
}

/* A snapshot whose header and memfd agree on 128 TiB (sparse): the
 * client reads no snapshot larger than rigd makes, and says so with its
 * size, rather than take the memory (ERR-01). */
Test(admin_answers, a_snapshot_that_claims_terabytes_is_refused) {
  const uint64_t claimed = UINT64_C(1) << 47;
  int memfd = memfd_create("fake-snapshot", MFD_CLOEXEC);
  struct rig_proxy_stats_header h;
  memset(&h, 0, sizeof h);
  h.segment.magic = RIG_PROXY_MAGIC_STATS;
  h.segment.version = RIG_PROXY_VERSION;
  h.segment.bytes = claimed;
  h.clients_offset = h.uses_offset = h.devices_offset = h.exports_offset = sizeof h;
  cr_assert(memfd >= 0 && write(memfd, &h, sizeof h) == (ssize_t)sizeof h && ftruncate(memfd, (off_t)claimed) == 0);
  assert_refused(ask_fake(reply_of(RIG_PROXY_MAGIC_ADMIN, RIG_OK), memfd, false), "140737488355328 bytes");
}
