/* rig top [--service PATH] [--frames N]: a live view of rigd's clients and
 * served devices, refreshed every second from rigd's counters
 * (rig_service_stats): full-screen on a terminal, until q (or SIGINT,
 * SIGTERM); plain frames of lines otherwise, until N frames where --frames
 * says. */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"
#include "text_out.h"
#include "terminal.h"

#include <rig/service.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { REFRESH_MS = 1000 };

/* What a frame's rates are computed from: the last frame's counts. */
typedef struct last_client {
  uint64_t id, submissions, copied_bytes, launches;
} last_client_t;

typedef struct last {
  double at_s; /* CLOCK_MONOTONIC */
  last_client_t *clients;
  size_t client_count;
  uint64_t *busy_ns; /* by served device */
  size_t device_count;
} last_t;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* bytes as B, KiB, MiB, GiB or TiB, in out. */
static void format_bytes(uint64_t bytes, char out[16]) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  if (u == 0)
    snprintf(out, 16, "%" PRIu64 " B", bytes);
  else
    snprintf(out, 16, "%.1f %s", v, units[u]);
}

/* The change of a count since the last frame, per second; 0 on the first
 * frame, or where rigd counts anew (a client that came since). */
static double rate(uint64_t now, uint64_t before, double seconds) {
  return seconds > 0 && now >= before ? (double)(now - before) / seconds : 0;
}

static const last_client_t *last_of(const last_t *last, uint64_t id) {
  for (size_t i = 0; i < last->client_count; i++)
    if (last->clients[i].id == id) return &last->clients[i];
  return NULL;
}

/* Writes a frame of s to out, its rates against *last, which it then
 * replaces with s's counts. */
static void write_frame(FILE *out, const char *socket, const rig_service_stats_t *s, last_t *last) {
  double at = now_s(), seconds = last->at_s > 0 ? at - last->at_s : 0;
  size_t clients = rig_service_stats_clients(s), devices = rig_service_stats_devices(s);
  time_t wall = time(NULL);
  char clock[16];
  strftime(clock, sizeof clock, "%H:%M:%S", localtime(&wall));
  fprintf(out, "rig top - rigd at %s - %s - %zu clients, %zu devices (q quits)\n\n",
          socket ? socket : "the default socket", clock, clients, devices);

  fprintf(out, "%-12s %7s %9s %11s %11s %7s %9s %6s\n", "DEVICE", "CLIENTS", "INSTANCES", "ALLOCATED", "CACHED",
          "QUEUED", "BUSY ms/s", "FAULTS");
  uint64_t *busy = calloc(devices ? devices : 1, sizeof *busy);
  for (size_t i = 0; i < devices; i++) {
    rig_service_device_info_t d = {.size = sizeof d};
    if (rig_service_stats_device(s, i, &d) != RIG_OK) continue;
    char allocated[16], cached[16];
    format_bytes(d.allocated, allocated);
    format_bytes(d.cached, cached);
    uint64_t before = i < last->device_count ? last->busy_ns[i] : d.busy_ns;
    fprintf(out, "%-12s %7" PRIu64 " %9" PRIu64 " %11s %11s %7" PRIu64 " %9.0f %6" PRIu64 "\n", d.name, d.clients,
            d.instances, allocated, cached, d.queued, rate(d.busy_ns, before, seconds) / 1e6, d.faults);
    if (busy) busy[i] = d.busy_ns;
  }

  fprintf(out, "\n%-6s %7s %-8s %-11s %10s %8s %7s %8s %6s\n", "CLIENT", "PID", "USER", "COMMAND", "MEMORY",
          "SUBMIT/s", "MB/s", "LAUNCH/s", "FAULTS");
  last_client_t *now = calloc(clients ? clients : 1, sizeof *now);
  for (size_t i = 0; i < clients; i++) {
    rig_service_client_info_t c = {.size = sizeof c};
    if (rig_service_stats_client(s, i, &c) != RIG_OK) continue;
    const last_client_t *before = last_of(last, c.id);
    last_client_t counts = {c.id, c.submissions, c.copied_bytes, c.launches};
    if (!before) before = &counts;
    char memory[16], user[64], command[64];
    format_bytes(c.device_bytes, memory);
    fprintf(out, "%-6" PRIu64 " %7" PRId64 " %-8.8s %-11.11s %10s %8.0f %7.1f %8.0f %6" PRIu64 "\n", c.id, c.pid,
            shown_text(c.user, user, sizeof user), shown_text(c.command, command, sizeof command), memory, rate(c.submissions, before->submissions, seconds),
            rate(c.copied_bytes, before->copied_bytes, seconds) / 1e6, rate(c.launches, before->launches, seconds),
            c.faults);
    if (now) now[i] = counts;
  }
  free(last->clients);
  free(last->busy_ns);
  *last = (last_t){at, now, now ? clients : 0, busy, busy ? devices : 0};
}

/* The frame of rigd's counters now, as text (free()), or NULL having said
 * why on stderr. */
static char *frame_text(const char *socket, last_t *last) {
  rig_service_stats_t *s = service_snapshot(socket);
  if (!s) return NULL;
  char *text = NULL;
  size_t length = 0;
  FILE *out = open_memstream(&text, &length);
  if (out) {
    write_frame(out, socket, s, last);
    fclose(out);
  }
  rig_service_stats_release(s);
  return text;
}

/* Draws text from the top of the screen: each line cut to the width and
 * cleared to its end, no more lines than the screen has, the rest of the
 * screen cleared. */
static void draw(const char *text) {
  int columns, rows;
  terminal_size(&columns, &rows);
  fputs("\033[H", stdout);
  int row = 0;
  for (const char *line = text; *line && row < rows; row++) {
    size_t n = strcspn(line, "\n");
    if (row > 0) putchar('\n');
    fwrite(line, 1, n < (size_t)columns ? n : (size_t)columns, stdout);
    fputs("\033[K", stdout);
    line += n + (line[n] == '\n');
  }
  fputs("\033[J", stdout);
  fflush(stdout);
}

static int run_full_screen(const char *socket, last_t *last) {
  if (!terminal_take()) return EXIT_FAILED;
  int status = 0;
  for (;;) {
    char *text = frame_text(socket, last);
    if (!text) {
      status = EXIT_FAILED;
      break;
    }
    draw(text);
    free(text);
    int key = 0;
    /* Until the next frame is due, or q. */
    for (double due = now_s() + REFRESH_MS / 1e3; !terminal_ended() && key != 'q' && key != 'Q';) {
      double left = due - now_s();
      if (left <= 0) break;
      key = terminal_key((int)(left * 1e3) + 1);
    }
    if (terminal_ended() || key == 'q' || key == 'Q') break;
  }
  terminal_restore();
  return status;
}

/* Frames of plain lines, a blank line between, until frames (0: no end). */
static int run_plain(const char *socket, last_t *last, long frames) {
  for (long f = 0; frames == 0 || f < frames; f++) {
    if (f > 0) {
      struct timespec pause = {REFRESH_MS / 1000, (REFRESH_MS % 1000) * 1000000L};
      nanosleep(&pause, NULL);
      putchar('\n');
    }
    char *text = frame_text(socket, last);
    if (!text) return EXIT_FAILED;
    fputs(text, stdout);
    free(text);
    if (fflush(stdout) != 0) return EXIT_FAILED;
  }
  return 0;
}

int command_top(int argc, char **argv) {
  const char *socket = NULL;
  long frames = 0;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--service") == 0 && i + 1 < argc) {
      socket = argv[++i];
    } else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
      char *end;
      frames = strtol(argv[++i], &end, 10);
      if (*end || frames <= 0) return bad_argument("top", argc, argv, i);
    } else {
      return bad_argument("top", argc, argv, i);
    }
  }
  last_t last = {0};
  int status = isatty(fileno(stdout)) && frames == 0 ? run_full_screen(socket, &last)
                                                     : run_plain(socket, &last, frames);
  free(last.clients);
  free(last.busy_ns);
  return status;
}
