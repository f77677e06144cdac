/* rig share: the service's main job.  Two client processes of the rigd
 * listening at --service share a buffer of one of its devices: the filler
 * creates it, sets every byte to a pattern and shares it as a token; the
 * reader imports the token, verifies the pattern and writes the second half;
 * the filler then verifies the reader's write.  Each prints what it sees.
 *
 * The processes are forked before either touches librig, as a client must
 * be: a connection to rigd is the process's that made it. */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"

#include <rig/rig.h>
#include <rig/service.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SHARE_BYTES = 4 << 20, READER_BYTE = 0xa5 };

typedef struct share_options {
  const char *service;
  const char *device;
} share_options_t;

static uint8_t pattern_byte(int64_t i) { return (uint8_t)(i * 31 + 7); }

static bool ok(rig_status_t status, const char *who, const char *what) {
  if (status == RIG_OK) return true;
  fprintf(stderr, "rig share: %s: %s: %s: %s\n", who, what, rig_status_name(status), rig_last_error());
  return false;
}

static bool connect_and_open(const share_options_t *o, const char *who, rig_device_t **d) {
  rig_service_options_t options = {sizeof options, o->service};
  return ok(rig_service_connect(&options, NULL), who, "connect") && ok(rig_open(o->device, NULL, d), who, o->device);
}

/* The first byte of [from, from + n) of bytes that is not expected(i), or -1. */
static int64_t first_wrong(const uint8_t *bytes, int64_t from, int64_t n, bool pattern) {
  for (int64_t i = from; i < from + n; i++)
    if (bytes[i] != (pattern ? pattern_byte(i) : READER_BYTE)) return i;
  return -1;
}

static bool read_back(rig_buffer_t *b, uint8_t *bytes, const char *who) {
  return ok(rig_buffer_blit_to_bytes(b, 0, bytes, SHARE_BYTES, 0, SHARE_BYTES), who, "read");
}

static bool verified(const uint8_t *bytes, int64_t from, int64_t n, bool pattern, const char *who) {
  int64_t wrong = first_wrong(bytes, from, n, pattern);
  if (wrong < 0) return true;
  fprintf(stderr, "rig share: %s: byte %" PRId64 " is %u\n", who, wrong, bytes[wrong]);
  return false;
}

/* The filler: to_reader carries the token, from_reader the reader's word
 * that it wrote the second half. */
static int run_filler(const share_options_t *o, int to_reader, int from_reader, uint8_t *bytes) {
  rig_device_t *d = NULL;
  rig_buffer_t *b = NULL;
  uint64_t token = 0;
  if (!connect_and_open(o, "filler", &d) || !ok(rig_buffer_create(d, SHARE_BYTES, RIG_MEMORY_DEVICE, &b), "filler", "create"))
    return EXIT_FAILED;
  for (int64_t i = 0; i < SHARE_BYTES; i++) bytes[i] = pattern_byte(i);
  if (!ok(rig_buffer_blit_from_bytes(bytes, SHARE_BYTES, 0, b, 0, SHARE_BYTES), "filler", "write") ||
      !ok(rig_service_share(b, &token), "filler", "share"))
    return EXIT_FAILED;
  printf("filler (pid %d): %d MiB on %s set to the pattern, shared as token %016" PRIx64 "\n", (int)getpid(),
         SHARE_BYTES >> 20, o->device, token);
  fflush(stdout);
  char done = 0;
  if (write(to_reader, &token, sizeof token) != sizeof token || read(from_reader, &done, 1) != 1 || !done) {
    fprintf(stderr, "rig share: filler: the reader failed\n");
    return EXIT_FAILED;
  }
  if (!read_back(b, bytes, "filler") || !verified(bytes, 0, SHARE_BYTES / 2, true, "filler") ||
      !verified(bytes, SHARE_BYTES / 2, SHARE_BYTES / 2, false, "filler"))
    return EXIT_FAILED;
  printf("filler (pid %d): sees its first half unchanged and the reader's 0x%02x in the second\n", (int)getpid(),
         READER_BYTE);
  rig_buffer_unref(b);
  return 0;
}

static int run_reader(const share_options_t *o, int from_filler, int to_filler, uint8_t *bytes) {
  uint64_t token = 0;
  char done = 0;
  rig_device_t *d = NULL;
  rig_buffer_t *b = NULL, *half = NULL;
  rig_point_t written;
  bool good = read(from_filler, &token, sizeof token) == sizeof token && connect_and_open(o, "reader", &d) &&
              ok(rig_service_import(d, token, &b), "reader", "import") && read_back(b, bytes, "reader") &&
              verified(bytes, 0, SHARE_BYTES, true, "reader");
  if (good)
    printf("reader (pid %d): imported token %016" PRIx64 ": %" PRId64 " bytes, every one the filler's pattern\n",
           (int)getpid(), token, rig_buffer_bytes(b));
  good = good && ok(rig_buffer_view(b, SHARE_BYTES / 2, SHARE_BYTES / 2, &half), "reader", "view") &&
         ok(rig_buffer_submit_fill(half, READER_BYTE, NULL, 0, &written), "reader", "fill") &&
         ok(rig_point_wait(written), "reader", "wait");
  if (good) printf("reader (pid %d): set the second half to 0x%02x\n", (int)getpid(), READER_BYTE);
  fflush(stdout);
  done = good;
  if (write(to_filler, &done, 1) != 1) good = false;
  rig_buffer_unref(half);
  rig_buffer_unref(b);
  return good ? 0 : EXIT_FAILED;
}

/* Runs f in a child process and answers its pid, or -1.  The child first
 * closes the pipe ends of the other process (unused[2]): while it held them
 * a read of its own pipe would never see the other's exit, and a failed
 * peer would leave it waiting forever. */
static pid_t spawn(int (*f)(const share_options_t *, int, int, uint8_t *), const share_options_t *o, int in, int out,
                   const int unused[2]) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  close(unused[0]);
  close(unused[1]);
  uint8_t *bytes = malloc(SHARE_BYTES);
  int status = bytes ? f(o, in, out, bytes) : EXIT_FAILED;
  fflush(stdout);
  _exit(status);
}

static bool exited_well(pid_t pid) {
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int command_share(int argc, char **argv) {
  share_options_t o = {NULL, "MEM:0@rigd"};
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--service") == 0 && i + 1 < argc)
      o.service = argv[++i];
    else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      o.device = argv[++i];
    else
      return bad_argument("share", argc, argv, i);
  }
  int token_pipe[2], done_pipe[2];
  if (pipe(token_pipe) != 0 || pipe(done_pipe) != 0) {
    perror("rig share: pipe");
    return EXIT_FAILED;
  }
  fflush(stdout);
  pid_t filler = spawn(run_filler, &o, token_pipe[1], done_pipe[0], (int[]){token_pipe[0], done_pipe[1]});
  pid_t reader = spawn(run_reader, &o, token_pipe[0], done_pipe[1], (int[]){token_pipe[1], done_pipe[0]});
  for (int i = 0; i < 2; i++) {
    close(token_pipe[i]);
    close(done_pipe[i]);
  }
  bool filler_ok = exited_well(filler), reader_ok = exited_well(reader);
  if (!filler_ok || !reader_ok) {
    fprintf(stderr, "rig share: the %s failed\n", filler_ok ? "reader" : "filler");
    return EXIT_FAILED;
  }
  printf("rig share: two processes shared %s's memory through rigd\n", o.device);
  return 0;
}
