/* rig clients [--json] [--service PATH]: rigd's clients, each with the
 * served devices it uses and what it holds and did there, and who shared
 * what with whom, read on rigd's admin channel (rig_service_stats). */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"
#include "text_out.h"
#include "json_out.h"

#include <rig/service.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A client's counts, named once for both printers. */
typedef struct count {
  const char *key;
  uint64_t value;
} count_t;

enum { COUNT_COUNT = 10 };

static void client_counts(const rig_service_client_info_t *c, count_t out[COUNT_COUNT]) {
  count_t counts[COUNT_COUNT] = {
      {"device_bytes", c->device_bytes}, {"images", c->images},       {"submissions", c->submissions},
      {"copies", c->copies},             {"copied_bytes", c->copied_bytes}, {"fills", c->fills},
      {"launches", c->launches},         {"waits", c->waits},         {"faults", c->faults},
      {"uses", c->uses},
  };
  memcpy(out, counts, sizeof counts);
}

static void print_client_text(const rig_service_stats_t *s, size_t i, const rig_service_client_info_t *c) {
  char user[64], command[64];
  printf("client %" PRIu64 ": pid %" PRId64 ", user %s (%" PRIu32 "), command %s\n", c->id, c->pid,
         shown_text(c->user, user, sizeof user), c->uid, shown_text(c->command, command, sizeof command));
  count_t counts[COUNT_COUNT];
  client_counts(c, counts);
  for (int k = 0; k < COUNT_COUNT; k++) printf("  %-16s %" PRIu64 "\n", counts[k].key, counts[k].value);
  if (c->quota_bytes == RIG_SERVICE_UNBOUNDED)
    printf("  %-16s none\n", "quota_bytes");
  else
    printf("  %-16s %" PRIu64 "\n", "quota_bytes", c->quota_bytes);
  if (c->lost[0]) printf("  %-16s %s\n", "lost", c->lost);
  for (size_t j = 0; j < c->uses; j++) {
    rig_service_use_info_t u = {.size = sizeof u};
    if (rig_service_stats_use(s, i, j, &u) != RIG_OK) continue;
    printf("  on %s: %" PRIu64 " bytes, %" PRIu64 " instances\n", u.device, u.bytes, u.instances);
  }
}

static void print_client_json(const rig_service_stats_t *s, size_t i, const rig_service_client_info_t *c) {
  fputs("    {\"id\": ", stdout);
  print_json_count(c->id);
  print_json_key("pid");
  printf("%" PRId64, c->pid);
  print_json_key("uid");
  printf("%" PRIu32, c->uid);
  print_json_key("user");
  print_json_string(c->user);
  print_json_key("command");
  print_json_string(c->command);
  /* Nanoseconds since 1970 pass 2^53: a string of digits. */
  print_json_key("connected_ns");
  print_json_count(c->connected_ns > 0 ? (uint64_t)c->connected_ns : 0);
  count_t counts[COUNT_COUNT];
  client_counts(c, counts);
  for (int k = 0; k < COUNT_COUNT; k++) {
    print_json_key(counts[k].key);
    print_json_count(counts[k].value);
  }
  print_json_key("quota_bytes");
  print_json_bound(c->quota_bytes);
  print_json_key("lost");
  print_json_string(c->lost);
  print_json_key("devices");
  putchar('[');
  for (size_t j = 0; j < c->uses; j++) {
    rig_service_use_info_t u = {.size = sizeof u};
    if (rig_service_stats_use(s, i, j, &u) != RIG_OK) continue;
    fputs(j ? ", {\"device\": " : "{\"device\": ", stdout);
    print_json_string(u.device);
    print_json_key("bytes");
    print_json_count(u.bytes);
    print_json_key("instances");
    print_json_count(u.instances);
    putchar('}');
  }
  putchar(']');
  putchar('}');
}

static void print_exports(const rig_service_stats_t *s, bool json) {
  size_t n = rig_service_stats_exports(s);
  for (size_t i = 0; i < n; i++) {
    rig_service_export_info_t e = {.size = sizeof e};
    if (rig_service_stats_export(s, i, &e) != RIG_OK) continue;
    if (!json) {
      printf("export of client %" PRIu64 " on %s, %" PRIu64 " bytes: ", e.exporter, e.device, e.bytes);
      if (e.importer)
        printf("imported by client %" PRIu64 "\n", e.importer);
      else
        puts("not imported");
      continue;
    }
    fputs(i ? ",\n    {\"exporter\": " : "\n    {\"exporter\": ", stdout);
    print_json_count(e.exporter);
    print_json_key("device");
    print_json_string(e.device);
    print_json_key("bytes");
    print_json_count(e.bytes);
    print_json_key("importer");
    if (e.importer)
      print_json_count(e.importer);
    else
      fputs("null", stdout);
    putchar('}');
  }
}

int command_clients(int argc, char **argv) {
  bool json = false;
  const char *service = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      json = true;
    else if (strcmp(argv[i], "--service") == 0 && i + 1 < argc)
      service = argv[++i];
    else
      return bad_argument("clients", argc, argv, i);
  }
  rig_service_stats_t *s = service_snapshot(service);
  if (!s) return EXIT_FAILED;
  size_t n = rig_service_stats_clients(s);
  if (json) fputs("{\"clients\": [\n", stdout);
  for (size_t i = 0; i < n; i++) {
    rig_service_client_info_t c = {.size = sizeof c};
    if (!succeeded(rig_service_stats_client(s, i, &c), "read a client of the snapshot")) continue;
    if (json) {
      print_client_json(s, i, &c);
      puts(i + 1 < n ? "," : "");
    } else {
      print_client_text(s, i, &c);
    }
  }
  if (json) fputs("  ],\n  \"exports\": [", stdout);
  print_exports(s, json);
  if (json) puts("]}");
  rig_service_stats_release(s);
  return 0;
}
