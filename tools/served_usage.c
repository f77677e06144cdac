/* What rig devices --service shows of a served device (served_usage.h). */
#define _POSIX_C_SOURCE 200809L

#include "served_usage.h"

#include "json_out.h"
#include "text_out.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool served_device_of(const rig_service_stats_t *s, const char *proxy_name, size_t *index) {
  const char *at = strrchr(proxy_name, '@');
  if (!s || !at || strcmp(at, "@rigd") != 0) return false;
  size_t length = (size_t)(at - proxy_name);
  for (size_t i = 0; i < rig_service_stats_devices(s); i++) {
    rig_service_device_info_t d = {.size = sizeof d};
    if (rig_service_stats_device(s, i, &d) == RIG_OK && strlen(d.name) == length &&
        strncmp(d.name, proxy_name, length) == 0) {
      *index = i;
      return true;
    }
  }
  return false;
}

/* Calls each for every client of s that uses the served device name, with
 * its bytes on it. */
typedef void (*user_fn)(const rig_service_client_info_t *c, uint64_t bytes, bool first);

static void each_user(const rig_service_stats_t *s, const char *name, user_fn each) {
  bool first = true;
  for (size_t i = 0; i < rig_service_stats_clients(s); i++) {
    rig_service_client_info_t c = {.size = sizeof c};
    if (rig_service_stats_client(s, i, &c) != RIG_OK) continue;
    for (size_t j = 0; j < c.uses; j++) {
      rig_service_use_info_t u = {.size = sizeof u};
      if (rig_service_stats_use(s, i, j, &u) != RIG_OK || strcmp(u.device, name) != 0) continue;
      each(&c, u.bytes, first);
      first = false;
    }
  }
}

static void user_text(const rig_service_client_info_t *c, uint64_t bytes, bool first) {
  (void)first;
  char user[64], command[64];
  printf("  client %" PRIu64 " (pid %" PRId64 ", %s, %s): %" PRIu64 " bytes\n", c->id, c->pid,
         shown_text(c->user, user, sizeof user), shown_text(c->command, command, sizeof command), bytes);
}

static void user_json(const rig_service_client_info_t *c, uint64_t bytes, bool first) {
  fputs(first ? "{\"client\": " : ", {\"client\": ", stdout);
  print_json_count(c->id);
  print_json_key("pid");
  printf("%" PRId64, c->pid);
  print_json_key("user");
  print_json_string(c->user);
  print_json_key("bytes");
  print_json_count(bytes);
  putchar('}');
}

void print_served_usage_text(const rig_service_stats_t *s, size_t index) {
  rig_service_device_info_t d = {.size = sizeof d};
  if (rig_service_stats_device(s, index, &d) != RIG_OK) return;
  printf("  %-16s %" PRIu64 "\n  %-16s %" PRIu64 "\n  %-16s %" PRIu64 "\n", "clients", d.clients, "allocated_bytes",
         d.allocated, "cached_bytes", d.cached);
  each_user(s, d.name, user_text);
}

void print_served_usage_json(const rig_service_stats_t *s, size_t index) {
  rig_service_device_info_t d = {.size = sizeof d};
  if (rig_service_stats_device(s, index, &d) != RIG_OK) return;
  print_json_key("service_clients");
  print_json_count(d.clients);
  print_json_key("allocated_bytes");
  print_json_count(d.allocated);
  print_json_key("cached_bytes");
  print_json_count(d.cached);
  print_json_key("clients");
  putchar('[');
  each_user(s, d.name, user_json);
  putchar(']');
}
