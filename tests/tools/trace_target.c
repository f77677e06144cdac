/* The program check_rig_trace.py traces: once a line arrives on its
 * standard input (rig-trace has attached), it does known work on MEM:7 and
 * exits: SUBMITS submits of a words submission, COPIES copies of
 * COPY_BYTES bytes, FILLS fills of FILL_BYTES bytes and WAITS waits of a
 * point (rig_point_wait), numbers that the check expects rig-trace to
 * count exactly; its three buffers' memory is taken from the driver and
 * given back (rig_free_cache).  It prints "ready" once librig is loaded
 * and MEM:7 open. */
#include <rig/rig.h>

#include <stdio.h>
#include <stdlib.h>

enum { SUBMITS = 100, COPIES = 10, COPY_BYTES = 4096, FILLS = 5, FILL_BYTES = 8192, WAITS = 7 };

static void check(rig_status_t s, const char *what) {
  if (s == RIG_OK) return;
  fprintf(stderr, "trace_target: %s: %s: %s\n", what, rig_status_name(s), rig_last_error());
  exit(1);
}

int main(void) {
  rig_device_t *mem = NULL;
  check(rig_open("MEM:7", NULL, &mem), "rig_open");
  printf("ready\n");
  fflush(stdout);
  char line[16];
  if (!fgets(line, sizeof line, stdin)) return 1;
  rig_buffer_t *a = NULL, *b = NULL, *f = NULL;
  check(rig_buffer_create(mem, COPY_BYTES, RIG_MEMORY_DEVICE, &a), "create");
  check(rig_buffer_create(mem, COPY_BYTES, RIG_MEMORY_DEVICE, &b), "create");
  check(rig_buffer_create(mem, FILL_BYTES, RIG_MEMORY_DEVICE, &f), "create");
  static const rig_word_write_t write = {{0, NULL}, 0, 1};
  rig_part_t part = {0};
  part.kind = RIG_WORDS;
  part.u.words.writes = &write;
  part.u.words.count = 1;
  rig_submission_t *s = NULL;
  check(rig_submission_make(mem, &part, 1, NULL, &s), "rig_submission_make");
  rig_point_t last = {0};
  for (int i = 0; i < SUBMITS; i++) {
    rig_run_t *run = NULL;
    check(rig_submission_take(s, &run), "rig_submission_take");
    check(rig_submit(run, &a, 1, NULL, 0, &last), "rig_submit");
  }
  for (int i = 0; i < COPIES; i++) check(rig_buffer_copy(a, b), "rig_buffer_copy");
  for (int i = 0; i < FILLS; i++) check(rig_buffer_fill(f, (uint8_t)i), "rig_buffer_fill");
  for (int i = 0; i < WAITS; i++) check(rig_point_wait(last), "rig_point_wait");
  rig_submission_unref(s);
  rig_buffer_unref(a);
  rig_buffer_unref(b);
  rig_buffer_unref(f);
  check(rig_free_cache(mem), "rig_free_cache");
  return 0;
}
