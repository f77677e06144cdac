/* rig devices [--json] [--service [PATH]] [--machine ADDRESS [--key FILE]]:
 * the devices rig_probe reports, with the properties of each that opens and
 * the reason for each that does not; those rigd serves too, where
 * RIG_SERVICE is set or --service names rigd's socket (or, alone, asks for
 * the default one), and with --service each served device's clients and
 * memory, where rigd's admin channel answers the user.  With --machine,
 * only the devices the agent at ADDRESS serves, proving the key of FILE
 * (or $RIG_MACHINE_KEY). */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"
#include "json_out.h"
#include "served_usage.h"

#include <rig/rig.h>
#include <rig/service.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *copy_string(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (!copy) {
    fputs("rig: out of memory\n", stderr);
    exit(EXIT_FAILED);
  }
  return memcpy(copy, s, n);
}
/* One name rig_probe reported.  device is set once it opened; otherwise
 * reason says why it is unavailable. */
typedef struct entry {
  char *name;
  char *reason;
  rig_device_t *device;
} entry_t;

typedef struct entry_list {
  entry_t *items;
  size_t count;
  size_t capacity;
} entry_list_t;

/* rig_probe's callback: keeps copies, since the strings are only lent for
 * the call. */
static void collect_entry(const char *name, const char *why, void *context) {
  entry_list_t *list = context;
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? 2 * list->capacity : 8;
    entry_t *items = realloc(list->items, capacity * sizeof *items);
    if (!items) {
      fputs("rig: out of memory\n", stderr);
      exit(EXIT_FAILED);
    }
    list->items = items;
    list->capacity = capacity;
  }
  list->items[list->count++] =
      (entry_t){.name = copy_string(name), .reason = copy_string(why)};
}

static void free_entries(entry_list_t *list) {
  for (size_t i = 0; i < list->count; i++) {
    free(list->items[i].name);
    free(list->items[i].reason);
  }
  free(list->items);
}

/* Keeps the entries whose names end with suffix. */
static void keep_named_with(entry_list_t *list, const char *suffix) {
  size_t kept = 0, n = strlen(suffix);
  for (size_t i = 0; i < list->count; i++) {
    entry_t e = list->items[i];
    size_t length = strlen(e.name);
    if (length > n && strcmp(e.name + length - n, suffix) == 0) {
      list->items[kept++] = e;
    } else {
      free(e.name);
      free(e.reason);
    }
  }
  list->count = kept;
}

/* Opens each entry that probe found openable.  An open can still fail (a
 * device went away since the probe): its message becomes the reason. */
static void open_entries(entry_list_t *list) {
  for (size_t i = 0; i < list->count; i++) {
    entry_t *e = &list->items[i];
    if (e->reason) continue;
    if (rig_open(e->name, NULL, &e->device) != RIG_OK) {
      e->device = NULL;
      e->reason = copy_string(rig_last_error());
    }
  }
}

/* The properties the listing shows, gathered once so that the text and
 * JSON printers show the same ones. */
typedef enum { PROPERTY_STRING, PROPERTY_BOOL, PROPERTY_INT } property_kind_t;

typedef struct property {
  const char *key;
  property_kind_t kind;
  const char *string; /* PROPERTY_STRING; NULL where the device has none */
  bool boolean;       /* PROPERTY_BOOL */
  int64_t integer;    /* PROPERTY_INT */
} property_t;

enum { PROPERTY_COUNT = 7 };

static void device_properties(const rig_device_t *d,
                              property_t out[PROPERTY_COUNT]) {
  property_t properties[PROPERTY_COUNT] = {
      {"arch", PROPERTY_STRING, .string = rig_device_arch(d)},
      {"instruction_set", PROPERTY_STRING,
       .string = rig_device_instruction_set(d)},
      {"bus", PROPERTY_STRING, .string = rig_device_bus(d)},
      {"runs_on_host", PROPERTY_BOOL, .boolean = rig_device_runs_on_host(d)},
      {"alignment", PROPERTY_INT, .integer = rig_device_alignment(d)},
      {"cache_bytes", PROPERTY_INT, .integer = rig_device_cache_bytes(d)},
      {"budget", PROPERTY_INT, .integer = rig_budget(d)},
  };
  memcpy(out, properties, sizeof properties);
}

/* Writes s on one line: a control character (a reason may hold a newline)
 * becomes a space, so that each device's text stays one line per field. */
static void print_one_line(const char *s) {
  for (const unsigned char *c = (const unsigned char *)s; *c; c++)
    putchar(*c < 0x20 || *c == 0x7f ? ' ' : *c);
}

static void print_entry_text(const entry_t *e, const rig_service_stats_t *usage) {
  print_one_line(e->name);
  if (!e->device) {
    fputs(": unavailable: ", stdout);
    print_one_line(e->reason);
    putchar('\n');
    return;
  }
  putchar('\n');
  property_t properties[PROPERTY_COUNT];
  device_properties(e->device, properties);
  for (int i = 0; i < PROPERTY_COUNT; i++) {
    const property_t *p = &properties[i];
    printf("  %-16s ", p->key);
    switch (p->kind) {
    case PROPERTY_STRING: print_one_line(p->string ? p->string : "none"); break;
    case PROPERTY_BOOL: fputs(p->boolean ? "yes" : "no", stdout); break;
    case PROPERTY_INT: printf("%" PRId64, p->integer); break;
    }
    putchar('\n');
  }
  size_t served;
  if (served_device_of(usage, e->name, &served)) print_served_usage_text(usage, served);
}

static void print_entry_json(const entry_t *e, const rig_service_stats_t *usage) {
  fputs("  {\"name\": ", stdout);
  print_json_string(e->name);
  print_json_key("available");
  fputs(e->device ? "true" : "false", stdout);
  if (!e->device) {
    print_json_key("reason");
    print_json_string(e->reason);
    fputs("}", stdout);
    return;
  }
  property_t properties[PROPERTY_COUNT];
  device_properties(e->device, properties);
  for (int i = 0; i < PROPERTY_COUNT; i++) {
    const property_t *p = &properties[i];
    print_json_key(p->key);
    switch (p->kind) {
    case PROPERTY_STRING: print_json_string(p->string); break;
    case PROPERTY_BOOL: fputs(p->boolean ? "true" : "false", stdout); break;
    case PROPERTY_INT: printf("%" PRId64, p->integer); break;
    }
  }
  size_t served;
  if (served_device_of(usage, e->name, &served)) print_served_usage_json(usage, served);
  fputs("}", stdout);
}

int command_devices(int argc, char **argv) {
  bool json = false, usage_asked = false;
  const char *service = getenv("RIG_SERVICE");
  const char *machine_address = NULL, *key_file = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--service") == 0) {
      usage_asked = true;
      if (i + 1 < argc && argv[i + 1][0] != '-') service = argv[++i];
    } else if (strcmp(argv[i], "--machine") == 0 && i + 1 < argc) {
      machine_address = argv[++i];
    } else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc) {
      key_file = argv[++i];
    } else {
      return bad_argument("devices", argc, argv, i);
    }
  }
  /* The listing of a machine is its devices alone, NAME@MACHINE. */
  char suffix[256] = "";
  if (machine_address) {
    rig_machine_options_t options = {.size = sizeof options, .key_file = key_file};
    rig_machine_t *machine = NULL;
    if (!succeeded(rig_machine_connect(machine_address, &options, &machine), "connect to the machine"))
      return EXIT_FAILED;
    snprintf(suffix, sizeof suffix, "@%s", rig_machine_name(machine));
  }
  /* rig_probe lists rigd's devices once the process is connected. */
  if ((service && *service) || usage_asked) {
    rig_service_options_t options = {sizeof options, service && *service ? service : NULL};
    if (!succeeded(rig_service_connect(&options, NULL), "connect to rigd")) return EXIT_FAILED;
  }
  /* A user the admin channel refuses still sees the devices. */
  rig_service_stats_t *usage = NULL;
  if (usage_asked) {
    rig_service_options_t options = {sizeof options, service && *service ? service : NULL};
    if (rig_service_stats(&options, &usage) != RIG_OK)
      fprintf(stderr, "rig devices: no clients or memory of rigd's devices: %s\n", rig_last_error());
  }

  entry_list_t list = {0};
  if (!succeeded(rig_probe(collect_entry, &list), "probe")) {
    free_entries(&list);
    return EXIT_FAILED;
  }
  if (machine_address) keep_named_with(&list, suffix);
  open_entries(&list);

  if (json) puts("[");
  for (size_t i = 0; i < list.count; i++) {
    if (json) {
      print_entry_json(&list.items[i], usage);
      puts(i + 1 < list.count ? "," : "");
    } else {
      print_entry_text(&list.items[i], usage);
    }
  }
  if (json) puts("]");
  free_entries(&list);
  rig_service_stats_release(usage);
  return 0;
}
