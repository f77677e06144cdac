// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rig-trace: what processes using librig do, per process and device, from
 * librig's USDT probes (lib/probes.hpp), in the style of libbpf-tools.
 *
 *   rig-trace [-p PID] [-l LIBRARY] [-i SECONDS] [-d SECONDS] [--totals]
 *
 * It attaches its BPF programs (rig-trace.bpf.c, embedded as a libbpf
 * skeleton) to the probes of LIBRARY (by default the librig.so.1 that
 * process PID maps, or the system's), in process PID or in every process
 * that maps it, and prints every interval each process's submissions,
 * launches, copies, fills and hand-overs per second and the bytes they
 * move, its waits and their mean time, and each lost device as it is lost.
 * It ends after -d seconds, on SIGINT or SIGTERM, or once process PID has
 * exited; it then prints each process's totals and the histogram of its
 * waits (with --totals, only the totals, one line each, for scripts).
 * Needs root (or CAP_BPF and CAP_PERFMON). */
#define _GNU_SOURCE

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rig-trace.h"
#include "rig-trace.skel.h"

/* What rig-trace exits with where it cannot trace (no BPF, not root), so
 * that a test reports itself skipped rather than failed. */
#define CANNOT_TRACE 77

struct options {
  pid_t pid; /* -1: every process */
  const char *library;
  double interval;
  double duration; /* 0: until stopped */
  bool totals;
};

static volatile sig_atomic_t stopping;

static void on_stop(int sig) {
  (void)sig;
  stopping = 1;
}

static void usage(FILE *to) {
  fprintf(to,
          "usage: rig-trace [-p PID] [-l LIBRARY] [-i SECONDS] [-d SECONDS] [--totals]\n"
          "  -p, --pid PID         trace process PID only (default: every process)\n"
          "  -l, --library PATH    librig.so.1 to attach to (default: PID's, else the system's)\n"
          "  -i, --interval SECS   print rates every SECS seconds (default 1)\n"
          "  -d, --duration SECS   stop after SECS seconds (default: on SIGINT or PID's exit)\n"
          "      --totals          print only each process's totals at the end\n");
}

/* The path of the librig.so.1 that pid maps, into path; false if none. */
static bool library_of(pid_t pid, char *path, size_t n) {
  char maps[64];
  snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
  FILE *f = fopen(maps, "r");
  if (!f) return false;
  char line[4096];
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    char *file = strchr(line, '/');
    if (!file) continue;
    file[strcspn(file, "\n")] = '\0';
    const char *base = strrchr(file, '/') + 1;
    if (strncmp(base, "librig.so", 9) == 0) {
      snprintf(path, n, "%s", file);
      found = true;
    }
  }
  fclose(f);
  return found;
}

/* The system's librig.so.1 where one of the usual places has it. */
static bool system_library(char *path, size_t n) {
  static const char *const places[] = {"/usr/lib/x86_64-linux-gnu/librig.so.1", "/usr/lib/aarch64-linux-gnu/librig.so.1",
                                       "/usr/lib64/librig.so.1", "/usr/local/lib/librig.so.1", "/usr/lib/librig.so.1"};
  for (size_t i = 0; i < sizeof places / sizeof places[0]; i++)
    if (access(places[i], R_OK) == 0) {
      snprintf(path, n, "%s", places[i]);
      return true;
    }
  return false;
}

static bool parse(int argc, char **argv, struct options *o) {
  static const struct option longs[] = {{"pid", required_argument, 0, 'p'},      {"library", required_argument, 0, 'l'},
                                        {"interval", required_argument, 0, 'i'}, {"duration", required_argument, 0, 'd'},
                                        {"totals", no_argument, 0, 't'},         {"help", no_argument, 0, 'h'},
                                        {0, 0, 0, 0}};
  *o = (struct options){-1, NULL, 1.0, 0.0, false};
  int c;
  while ((c = getopt_long(argc, argv, "p:l:i:d:h", longs, NULL)) != -1) {
    char *end = NULL;
    switch (c) {
      case 'p':
        o->pid = (pid_t)strtol(optarg, &end, 10);
        if (*end || o->pid <= 0) return fprintf(stderr, "rig-trace: -p %s is not a process id\n", optarg), false;
        break;
      case 'l': o->library = optarg; break;
      case 'i':
        o->interval = strtod(optarg, &end);
        if (*end || o->interval <= 0) return fprintf(stderr, "rig-trace: -i %s is not a positive number\n", optarg), false;
        break;
      case 'd':
        o->duration = strtod(optarg, &end);
        if (*end || o->duration <= 0) return fprintf(stderr, "rig-trace: -d %s is not a positive number\n", optarg), false;
        break;
      case 't': o->totals = true; break;
      case 'h': usage(stdout); exit(0);
      default: usage(stderr); return false;
    }
  }
  if (optind < argc) return fprintf(stderr, "rig-trace: unexpected argument %s\n", argv[optind]), false;
  return true;
}

/* The probes' links, destroyed before the programs. */
static struct bpf_link *links[16];
static int link_count;

/* Each program and the probe it attaches to. */
static int attach(struct rig_trace *skel, pid_t pid, const char *library) {
  const struct {
    struct bpf_program *program;
    const char *probe;
  } probes[] = {
      {skel->progs.on_submit, "submit"},   {skel->progs.on_launch, "launch"},
      {skel->progs.on_copy, "copy"},       {skel->progs.on_fill, "fill"},
      {skel->progs.on_handover, "handover"}, {skel->progs.on_alloc, "alloc"},
      {skel->progs.on_free, "free"},       {skel->progs.on_wait_begin, "wait_begin"},
      {skel->progs.on_wait_end, "wait_end"}, {skel->progs.on_lost, "lost"},
  };
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
    struct bpf_link *link = bpf_program__attach_usdt(probes[i].program, pid, library, "rig", probes[i].probe, NULL);
    /* A library without a probe (built before it, or without sys/sdt.h)
     * is traced for the probes it has. */
    if (link) links[link_count++] = link;
  }
  return link_count;
}

static int on_loss(void *context, void *data, size_t size) {
  (void)context;
  if (size < sizeof(struct rig_trace_loss)) return 0;
  const struct rig_trace_loss *e = data;
  printf("LOST pid %u %s: %s\n", e->pid, e->device, e->why);
  fflush(stdout);
  return 0;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The counters seen at the last interval, to print rates. */
struct seen {
  struct rig_trace_key key;
  struct rig_trace_counts counts;
};

static struct seen *seen;
static size_t seen_count, seen_room;

static struct rig_trace_counts *previous(const struct rig_trace_key *key) {
  for (size_t i = 0; i < seen_count; i++)
    if (memcmp(&seen[i].key, key, sizeof *key) == 0) return &seen[i].counts;
  if (seen_count == seen_room) {
    size_t room = seen_room ? 2 * seen_room : 64;
    struct seen *grown = realloc(seen, room * sizeof *grown);
    if (!grown) return NULL;
    seen = grown;
    seen_room = room;
  }
  memset(&seen[seen_count], 0, sizeof seen[seen_count]);
  seen[seen_count].key = *key;
  return &seen[seen_count++].counts;
}

/* Calls f with each process and device's counters in the map. */
static void for_each_counts(int map, void (*f)(const struct rig_trace_key *, const struct rig_trace_counts *, void *),
                            void *context) {
  struct rig_trace_key key, next;
  struct rig_trace_counts c;
  int err = bpf_map_get_next_key(map, NULL, &next);
  while (err == 0) {
    key = next;
    if (bpf_map_lookup_elem(map, &key, &c) == 0) f(&key, &c, context);
    err = bpf_map_get_next_key(map, &key, &next);
  }
}

/* One line of rates: the counters' growth since the last interval, over
 * *seconds. */
static void print_rate(const struct rig_trace_key *key, const struct rig_trace_counts *c, void *seconds_p) {
  double seconds = *(const double *)seconds_p;
  struct rig_trace_counts *p = previous(key);
  if (!p) return;
  unsigned long long waits = c->waits - p->waits;
  printf("%-8u %-16s %10.0f %10.0f %10.0f %10.1f %10.0f %10.0f %8.0f %10.1f\n", key->pid, key->device,
         (double)(c->submits - p->submits) / seconds, (double)(c->launches - p->launches) / seconds,
         (double)(c->copies - p->copies) / seconds, (double)(c->copy_bytes - p->copy_bytes) / seconds / 1e6,
         (double)(c->fills - p->fills) / seconds, (double)(c->handovers - p->handovers) / seconds,
         (double)waits / seconds, waits ? (double)(c->wait_ns - p->wait_ns) / (double)waits / 1e3 : 0.0);
  *p = *c;
}

static void print_rates(int map, double seconds) {
  printf("%-8s %-16s %10s %10s %10s %10s %10s %10s %8s %10s\n", "PID", "DEVICE", "SUBMIT/s", "LAUNCH/s", "COPY/s",
         "COPY MB/s", "FILL/s", "HAND/s", "WAIT/s", "WAIT us");
  for_each_counts(map, print_rate, &seconds);
  printf("\n");
  fflush(stdout);
}

static void print_histogram(const struct rig_trace_counts *c) {
  unsigned long long most = 0;
  int last = -1;
  for (int i = 0; i < RIG_TRACE_WAIT_SLOTS; i++) {
    if (c->wait_slots[i] > most) most = c->wait_slots[i];
    if (c->wait_slots[i]) last = i;
  }
  for (int i = 0; i <= last; i++) {
    unsigned long long low = i == 0 ? 0 : 1ull << i, high = (1ull << (i + 1)) - 1;
    int bar = most ? (int)(c->wait_slots[i] * 40 / most) : 0;
    printf("    %10llu -> %-10llu us : %-10llu |%.*s\n", low, high, c->wait_slots[i], bar,
           "****************************************");
  }
}

/* One line of totals, then the waits' histogram unless *brief. */
static void print_total(const struct rig_trace_key *key, const struct rig_trace_counts *c, void *brief) {
  printf("pid=%u device=%s submits=%llu launches=%llu copies=%llu copy_bytes=%llu fills=%llu fill_bytes=%llu "
         "handovers=%llu handover_bytes=%llu waits=%llu waits_failed=%llu wait_ns=%llu allocs=%llu "
         "alloc_bytes=%llu frees=%llu free_bytes=%llu\n",
         key->pid, key->device, c->submits, c->launches, c->copies, c->copy_bytes, c->fills, c->fill_bytes,
         c->handovers, c->handover_bytes, c->waits, c->waits_failed, c->wait_ns, c->allocs, c->alloc_bytes, c->frees,
         c->free_bytes);
  if (!*(const bool *)brief && c->waits) print_histogram(c);
}

static void print_totals(int map, bool brief) {
  for_each_counts(map, print_total, &brief);
  fflush(stdout);
}

static bool alive(pid_t pid) { return pid < 0 || kill(pid, 0) == 0 || errno != ESRCH; }

int main(int argc, char **argv) {
  struct options o;
  if (!parse(argc, argv, &o)) return 2;
  char library[4096];
  if (o.library) {
    snprintf(library, sizeof library, "%s", o.library);
  } else if (o.pid > 0 ? !library_of(o.pid, library, sizeof library) : !system_library(library, sizeof library)) {
    if (o.pid > 0)
      fprintf(stderr, "rig-trace: process %d maps no librig.so (no such process, or it does not use rig)\n", (int)o.pid);
    else
      fprintf(stderr, "rig-trace: no librig.so.1 found in the system's library folders: name it with -l\n");
    return 1;
  }
  struct rig_trace *skel = rig_trace__open_and_load();
  if (!skel) {
    fprintf(stderr, "rig-trace: cannot load its BPF programs (%s): it needs root, or CAP_BPF and CAP_PERFMON\n",
            strerror(errno));
    return CANNOT_TRACE;
  }
  int status = 0;
  struct ring_buffer *losses = NULL;
  int attached = attach(skel, o.pid, library);
  if (attached == 0) {
    fprintf(stderr, "rig-trace: %s has no probe rig-trace can attach to (%s)\n", library, strerror(errno));
    status = errno == EPERM || errno == EACCES || errno == ENOSYS || errno == EOPNOTSUPP ? CANNOT_TRACE : 1;
    goto out;
  }
  losses = ring_buffer__new(bpf_map__fd(skel->maps.losses), on_loss, NULL, NULL);
  if (!losses) {
    fprintf(stderr, "rig-trace: no ring buffer for losses: %s\n", strerror(errno));
    status = 1;
    goto out;
  }
  signal(SIGINT, on_stop);
  signal(SIGTERM, on_stop);
  if (o.pid > 0)
    fprintf(stderr, "rig-trace: tracing process %d through %s (%d probes)\n", (int)o.pid, library, attached);
  else
    fprintf(stderr, "rig-trace: tracing every process using %s (%d probes)\n", library, attached);
  int map = bpf_map__fd(skel->maps.counts);
  double start = now_s(), last = start;
  while (!stopping && alive(o.pid) && (o.duration == 0 || now_s() - start < o.duration)) {
    ring_buffer__poll(losses, 100);
    double t = now_s();
    if (!o.totals && t - last >= o.interval) {
      print_rates(map, t - last);
      last = t;
    }
  }
  ring_buffer__consume(losses);
  print_totals(map, o.totals);
out:
  ring_buffer__free(losses);
  for (int i = 0; i < link_count; i++) bpf_link__destroy(links[i]);
  rig_trace__destroy(skel);
  free(seen);
  return status;
}
