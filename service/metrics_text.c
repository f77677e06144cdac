/* rigd's counters in Prometheus' text format (metrics_text.h). */
#include "metrics_text.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

/* A label value, escaped as the format wants: backslash, quote, newline. */
static void put_value(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '\\' || *s == '"')
      fprintf(out, "\\%c", *s);
    else if (*s == '\n')
      fputs("\\n", out);
    else
      fputc(*s, out);
  }
}

static void family(FILE *out, const char *name, const char *type, const char *help) {
  fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void client_labels(FILE *out, const rig_service_client_info_t *c) {
  fprintf(out, "client=\"%" PRIu64 "\",pid=\"%" PRId64 "\",user=\"", c->id, c->pid);
  put_value(out, c->user);
  fputs("\",command=\"", out);
  put_value(out, c->command);
  fputc('"', out);
}

/* A family of counts, one sample for each client or each served device:
 * the uint64_t at offset of its info. */
typedef enum { OF_CLIENT, OF_DEVICE } owner_t;

typedef struct count_family {
  const char *name, *type, *help;
  owner_t of;
  size_t offset;
} count_family_t;

#define CLIENT(field) OF_CLIENT, offsetof(rig_service_client_info_t, field)
#define DEVICE(field) OF_DEVICE, offsetof(rig_service_device_info_t, field)
static const count_family_t families[] = {
    {"rigd_client_device_bytes", "gauge", "Device memory the client holds: buffers, imports, images.",
     CLIENT(device_bytes)},
    {"rigd_client_images_total", "counter", "Images the client loaded.", CLIENT(images)},
    {"rigd_client_submissions_total", "counter", "Hand-overs of the client rigd took.", CLIENT(submissions)},
    {"rigd_client_copies_total", "counter", "Copy parts of the client's hand-overs.", CLIENT(copies)},
    {"rigd_client_copied_bytes_total", "counter", "Bytes the client's copies move.", CLIENT(copied_bytes)},
    {"rigd_client_fills_total", "counter", "Fill parts of the client's hand-overs.", CLIENT(fills)},
    {"rigd_client_launches_total", "counter", "Launch parts of the client's hand-overs.", CLIENT(launches)},
    {"rigd_client_waits_total", "counter", "Waits on other proxies' values rigd served the client.", CLIENT(waits)},
    {"rigd_client_faults_total", "counter", "Proxies of the client rigd lost.", CLIENT(faults)},
    {"rigd_device_clients", "gauge", "Clients that use the served device.", DEVICE(clients)},
    {"rigd_device_instances", "gauge", "Live instances of the served device: clients' and idle.", DEVICE(instances)},
    {"rigd_device_allocated_bytes", "gauge", "Bytes allocated on the served device and its instances.",
     DEVICE(allocated)},
    {"rigd_device_cached_bytes", "gauge", "Of those, the bytes no client holds.", DEVICE(cached)},
    {"rigd_device_queued", "gauge", "Values handed over on the served device and not done.", DEVICE(queued)},
    {"rigd_device_busy_nanoseconds", "gauge", "Time its connected clients' values waited for their work.",
     DEVICE(busy_ns)},
    {"rigd_device_faults", "gauge", "Its connected clients' proxies rigd lost.", DEVICE(faults)},
};
#undef CLIENT
#undef DEVICE

/* The i-th client's or device's info, and its labels. */
typedef union info {
  rig_service_client_info_t client;
  rig_service_device_info_t device;
} info_t;

static bool info_of(const rig_service_stats_t *s, owner_t of, size_t i, info_t *info) {
  if (of == OF_CLIENT) {
    info->client = (rig_service_client_info_t){.size = sizeof info->client};
    return rig_service_stats_client(s, i, &info->client) == RIG_OK;
  }
  info->device = (rig_service_device_info_t){.size = sizeof info->device};
  return rig_service_stats_device(s, i, &info->device) == RIG_OK;
}

static void labels_of(FILE *out, owner_t of, const info_t *info) {
  if (of == OF_CLIENT) {
    client_labels(out, &info->client);
    return;
  }
  fputs("device=\"", out);
  put_value(out, info->device.name);
  fputc('"', out);
}

static void write_families(FILE *out, const rig_service_stats_t *s) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    const count_family_t *cf = &families[f];
    family(out, cf->name, cf->type, cf->help);
    size_t n = cf->of == OF_CLIENT ? rig_service_stats_clients(s) : rig_service_stats_devices(s);
    for (size_t i = 0; i < n; i++) {
      info_t info;
      if (!info_of(s, cf->of, i, &info)) continue;
      uint64_t v;
      memcpy(&v, (const char *)&info + cf->offset, sizeof v);
      fprintf(out, "%s{", cf->name);
      labels_of(out, cf->of, &info);
      fprintf(out, "} %" PRIu64 "\n", v);
    }
  }
}

/* What no family of counts holds, each family's samples together: the
 * clients connected, when each came, its quota where it has one, its
 * bytes on each served device. */
static void write_clients(FILE *out, const rig_service_stats_t *s) {
  size_t n = rig_service_stats_clients(s);
  family(out, "rigd_clients", "gauge", "Clients connected to rigd.");
  fprintf(out, "rigd_clients %zu\n", n);
  family(out, "rigd_client_start_time_seconds", "gauge", "When rigd admitted the client, since the epoch.");
  for (size_t i = 0; i < n; i++) {
    rig_service_client_info_t c = {.size = sizeof c};
    if (rig_service_stats_client(s, i, &c) != RIG_OK) continue;
    fputs("rigd_client_start_time_seconds{", out);
    client_labels(out, &c);
    fprintf(out, "} %" PRId64 ".%09" PRId64 "\n", c.connected_ns / 1000000000, c.connected_ns % 1000000000);
  }
  family(out, "rigd_client_quota_bytes", "gauge", "The client's quota_bytes, where rigd sets one.");
  for (size_t i = 0; i < n; i++) {
    rig_service_client_info_t c = {.size = sizeof c};
    if (rig_service_stats_client(s, i, &c) != RIG_OK || c.quota_bytes == RIG_SERVICE_UNBOUNDED) continue;
    fputs("rigd_client_quota_bytes{", out);
    client_labels(out, &c);
    fprintf(out, "} %" PRIu64 "\n", c.quota_bytes);
  }
  family(out, "rigd_client_use_bytes", "gauge", "Device memory the client holds on a served device.");
  for (size_t i = 0; i < n; i++) {
    rig_service_client_info_t c = {.size = sizeof c};
    if (rig_service_stats_client(s, i, &c) != RIG_OK) continue;
    for (size_t j = 0; j < c.uses; j++) {
      rig_service_use_info_t u = {.size = sizeof u};
      if (rig_service_stats_use(s, i, j, &u) != RIG_OK) continue;
      fputs("rigd_client_use_bytes{", out);
      client_labels(out, &c);
      fputs(",device=\"", out);
      put_value(out, u.device);
      fprintf(out, "\"} %" PRIu64 "\n", u.bytes);
    }
  }
}

static bool same_pair(const rig_service_export_info_t *a, const rig_service_export_info_t *b) {
  return a->exporter == b->exporter && a->importer == b->importer && strcmp(a->device, b->device) == 0;
}

/* One sample for each exporter, importer and device: the bytes of all the
 * exports between them, so that no two samples share their labels. */
static void write_exports(FILE *out, const rig_service_stats_t *s) {
  size_t n = rig_service_stats_exports(s);
  family(out, "rigd_export_bytes", "gauge", "Bytes a client exported, by importer (0: none yet).");
  for (size_t i = 0; i < n; i++) {
    rig_service_export_info_t e = {.size = sizeof e};
    if (rig_service_stats_export(s, i, &e) != RIG_OK) continue;
    bool seen = false;
    for (size_t j = 0; j < n; j++) {
      rig_service_export_info_t other = {.size = sizeof other};
      if (j == i || rig_service_stats_export(s, j, &other) != RIG_OK || !same_pair(&e, &other)) continue;
      if (j < i) seen = true;
      e.bytes += other.bytes;
    }
    if (seen) continue;
    fprintf(out, "rigd_export_bytes{exporter=\"%" PRIu64 "\",importer=\"%" PRIu64 "\",device=\"", e.exporter,
            e.importer);
    put_value(out, e.device);
    fprintf(out, "\"} %" PRIu64 "\n", e.bytes);
  }
}

bool write_metrics_text(FILE *out, const rig_service_stats_t *s) {
  write_clients(out, s);
  write_families(out, s);
  write_exports(out, s);
  return fflush(out) == 0 && !ferror(out);
}
