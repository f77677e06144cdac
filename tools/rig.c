/* rig: the command-line tool, written over the public C API only.
 *
 *   rig devices [--json] [--service PATH]
 *                         the devices rig_probe reports, with the properties
 *                         of each that opens and the reason for each that
 *                         does not; those rigd serves too, where RIG_SERVICE
 *                         is set or --service names rigd's socket
 *   rig demo              the main job: 1 MiB copied host -> MEM:0 -> MEM:1
 *                         -> host, then verified
 *   rig load FILE --device NAME [--offset N] [--length N] [--verify]
 *                         reads a file (or a range of it) into a new buffer
 *                         on the device NAME through the io device DISK,
 *                         showing its progress; --verify compares the
 *                         buffer's bytes with the file's, read by pread
 *   rig share [--service PATH] [--device NAME@rigd]
 *                         the service's main job: two processes share a
 *                         buffer of rigd's device (rig_share.c)
 *   rig version           the tool's version and the loaded library's
 *
 * Exit status: 0 on success, 1 when a rig call fails (its status and
 * rig_last_error() go to stderr) or the demo's or load's bytes differ, 2 on
 * a usage error.
 */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"

#include <rig/disk.h>
#include <rig/rig.h>
#include <rig/service.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: rig <command> [options]\n"
    "\n"
    "commands:\n"
    "  devices [--json] [--service PATH]\n"
    "                    list the devices rig finds, with their properties;\n"
    "                    with RIG_SERVICE set or --service, rigd's too\n"
    "  demo              copy 1 MiB host -> MEM:0 -> MEM:1 -> host and verify it\n"
    "  load FILE --device NAME [--offset N] [--length N] [--verify]\n"
    "                    read FILE (or N bytes of it from --offset) into a new\n"
    "                    buffer on device NAME (CPU is the host); --verify\n"
    "                    compares the buffer with the file read again; sizes\n"
    "                    take a K, M or G suffix (powers of 1024)\n"
    "  share [--service PATH] [--device NAME@rigd]\n"
    "                    two processes share a buffer of rigd's device\n"
    "                    (MEM:0@rigd by default): one fills, one verifies\n"
    "  version           print the tool's and the library's versions\n"
    "  help, --help      print this help\n";

int usage_error(void) {
  fputs(usage_text, stderr);
  return EXIT_USAGE;
}

/* True iff status is RIG_OK; otherwise reports the failed call on stderr. */
static bool succeeded(rig_status_t status, const char *what) {
  if (status == RIG_OK) return true;
  fprintf(stderr, "rig: %s: %s: %s\n", what, rig_status_name(status),
          rig_last_error());
  return false;
}

/* A device's name for messages; a point whose slot a later device took
 * names no device. */
static const char *device_label(const rig_device_t *d) {
  return d ? rig_device_name(d) : "(slot reused)";
}

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

/* ------------------------------------------------------------------------ */
/* rig devices                                                               */

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

static void print_entry_text(const entry_t *e) {
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
}

/* Writes s as a JSON string, or null for NULL.  Bytes from 0x80 up pass
 * through: rig's strings are UTF-8. */
static void print_json_string(const char *s) {
  if (!s) {
    fputs("null", stdout);
    return;
  }
  putchar('"');
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    switch (*c) {
    case '"': fputs("\\\"", stdout); break;
    case '\\': fputs("\\\\", stdout); break;
    case '\n': fputs("\\n", stdout); break;
    case '\r': fputs("\\r", stdout); break;
    case '\t': fputs("\\t", stdout); break;
    default:
      if (*c < 0x20 || *c == 0x7f)
        printf("\\u%04x", *c);
      else
        putchar(*c);
    }
  }
  putchar('"');
}

static void print_json_key(const char *key) {
  fputs(", ", stdout);
  print_json_string(key);
  fputs(": ", stdout);
}

static void print_entry_json(const entry_t *e) {
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
  fputs("}", stdout);
}

static int command_devices(int argc, char **argv) {
  bool json = false;
  const char *service = getenv("RIG_SERVICE");
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      json = true;
    else if (strcmp(argv[i], "--service") == 0 && i + 1 < argc)
      service = argv[++i];
    else
      return usage_error();
  }
  /* rig_probe lists rigd's devices once the process is connected. */
  if (service && *service) {
    rig_service_options_t options = {sizeof options, service};
    if (!succeeded(rig_service_connect(&options, NULL), "connect to rigd")) return EXIT_FAILED;
  }

  entry_list_t list = {0};
  if (!succeeded(rig_probe(collect_entry, &list), "probe")) {
    free_entries(&list);
    return EXIT_FAILED;
  }
  open_entries(&list);

  if (json) puts("[");
  for (size_t i = 0; i < list.count; i++) {
    if (json) {
      print_entry_json(&list.items[i]);
      puts(i + 1 < list.count ? "," : "");
    } else {
      print_entry_text(&list.items[i]);
    }
  }
  if (json) puts("]");
  free_entries(&list);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* rig demo                                                                  */

enum { DEMO_BYTES = 1 << 20 };

/* The devices the demo's bytes travel through, in order; the first and the
 * last are two distinct buffers on the host. */
static const char *const demo_route[] = {"CPU", "MEM:0", "MEM:1", "CPU"};
enum { DEMO_HOPS = sizeof demo_route / sizeof demo_route[0] };

/* Byte i of the pattern: differs between neighbours and between bytes 256
 * and 65,536 apart, so a shifted or truncated copy shows. */
static uint8_t pattern_byte(int64_t i) {
  return (uint8_t)(i * 7 + (i >> 8) * 13 + (i >> 16) * 29 + 1);
}

static int write_pattern(void *bytes, int64_t n, void *context) {
  (void)context;
  uint8_t *b = bytes;
  for (int64_t i = 0; i < n; i++) b[i] = pattern_byte(i);
  return 0;
}

/* rig_buffer_read's callback: the first byte that differs from the
 * pattern, or -1. */
static int find_mismatch(void *bytes, int64_t n, void *context) {
  const uint8_t *b = bytes;
  int64_t *first_mismatch = context;
  *first_mismatch = -1;
  for (int64_t i = 0; i < n; i++) {
    if (b[i] != pattern_byte(i)) {
      *first_mismatch = i;
      break;
    }
  }
  return 0;
}

/* Creates one buffer of DEMO_BYTES on each device of the route. */
static bool create_route_buffers(rig_buffer_t *buffers[DEMO_HOPS]) {
  for (int i = 0; i < DEMO_HOPS; i++) {
    rig_device_t *d = NULL;
    if (!succeeded(rig_open(demo_route[i], NULL, &d), demo_route[i]) ||
        !succeeded(rig_buffer_create(d, DEMO_BYTES, RIG_MEMORY_DEVICE,
                                     &buffers[i]),
                   "create buffer"))
      return false;
  }
  return true;
}

/* Submits the copies along the route.  No copy waits on the one before
 * it: rig orders each after the last write of the memory it reads.
 * *last is the point of the last copy. */
static bool submit_route_copies(rig_buffer_t *buffers[DEMO_HOPS],
                                rig_point_t *last) {
  rig_box_t whole = rig_row(0, 0, DEMO_BYTES);
  for (int i = 0; i + 1 < DEMO_HOPS; i++) {
    if (!succeeded(rig_buffer_submit_copy(buffers[i], buffers[i + 1], &whole,
                                          1, NULL, 0, last),
                   "submit copy"))
      return false;
    printf("demo: copy %s -> %s, point %s:%" PRIu64 "\n", demo_route[i],
           demo_route[i + 1], device_label(rig_point_device(*last)),
           rig_point_value(*last));
  }
  return true;
}

static bool run_demo(rig_buffer_t *buffers[DEMO_HOPS]) {
  if (!create_route_buffers(buffers)) return false;
  if (!succeeded(rig_buffer_write(buffers[0], 1, write_pattern, NULL),
                 "write pattern"))
    return false;
  printf("demo: wrote %d bytes of pattern on %s\n", DEMO_BYTES, demo_route[0]);

  rig_point_t last = {0};
  if (!submit_route_copies(buffers, &last)) return false;
  if (!succeeded(rig_point_wait(last), "wait")) return false;

  int64_t first_mismatch = -1;
  if (!succeeded(rig_buffer_read(buffers[DEMO_HOPS - 1], 1, find_mismatch,
                                 &first_mismatch),
                 "read result"))
    return false;
  if (first_mismatch >= 0) {
    fprintf(stderr, "rig: demo: byte %" PRId64 " differs from the pattern\n",
            first_mismatch);
    return false;
  }
  printf("demo: ok (%d bytes verified)\n", DEMO_BYTES);
  return true;
}

static int command_demo(int argc, char **argv) {
  (void)argv;
  if (argc != 0) return usage_error();
  rig_buffer_t *buffers[DEMO_HOPS] = {0};
  bool ok = run_demo(buffers);
  for (int i = 0; i < DEMO_HOPS; i++) rig_buffer_unref(buffers[i]);
  return ok ? 0 : EXIT_FAILED;
}

/* ------------------------------------------------------------------------ */
/* rig load                                                                  */

/* The bytes each copy of a load moves: small enough that progress moves,
 * large enough that the io device's transfers stay deep. */
enum { LOAD_CHUNK_BYTES = 64 << 20 };

typedef struct load_options {
  const char *path;
  const char *device;
  int64_t offset;
  int64_t length; /* -1: to the file's end */
  bool verify;
} load_options_t;

/* A size such as 4096, 64K, 16M or 2G (powers of 1024); false if s is not
 * one or overflows. */
static bool parse_size(const char *s, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long n = strtoll(s, &end, 10);
  if (end == s || errno != 0 || n < 0) return false;
  int shift = 0;
  switch (*end) {
  case 'K': case 'k': shift = 10; end++; break;
  case 'M': case 'm': shift = 20; end++; break;
  case 'G': case 'g': shift = 30; end++; break;
  default: break;
  }
  if (*end != '\0' || n > (INT64_MAX >> shift)) return false;
  *out = (int64_t)n << shift;
  return true;
}

/* False on a usage error. */
static bool parse_load_options(int argc, char **argv, load_options_t *o) {
  *o = (load_options_t){.length = -1};
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (strcmp(a, "--device") == 0 && has_value) {
      o->device = argv[++i];
    } else if (strcmp(a, "--offset") == 0 && has_value) {
      if (!parse_size(argv[++i], &o->offset)) return false;
    } else if (strcmp(a, "--length") == 0 && has_value) {
      if (!parse_size(argv[++i], &o->length)) return false;
    } else if (strcmp(a, "--verify") == 0) {
      o->verify = true;
    } else if (a[0] != '-' && !o->path) {
      o->path = a;
    } else {
      return false;
    }
  }
  return o->path && o->device;
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double gigabytes_per_second(int64_t bytes, double seconds) {
  return seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0;
}

/* The progress line, rewritten in place on a terminal. */
static void show_progress(int64_t done, int64_t total, double seconds) {
  double rate = seconds > 0 ? (double)done / seconds : 0.0;
  double percent = total > 0 ? 100.0 * (double)done / (double)total : 100.0;
  fprintf(stderr, "\r%5.1f%%  %7.2f GB/s  ", percent, rate / 1e9);
  if (rate > 0)
    fprintf(stderr, "%6.1f s left ", (double)(total - done) / rate);
  else
    fputs("              ", stderr);
  fflush(stderr);
}

/* Copies chunk after chunk of src into dst (of equal lengths), through
 * views of both, so that the progress line moves. */
static bool copy_in_chunks(rig_buffer_t *src, rig_buffer_t *dst, bool progress) {
  int64_t total = rig_buffer_bytes(src);
  double start = seconds_now();
  for (int64_t at = 0; at < total; at += LOAD_CHUNK_BYTES) {
    int64_t n = total - at < LOAD_CHUNK_BYTES ? total - at : LOAD_CHUNK_BYTES;
    rig_buffer_t *from = NULL, *to = NULL;
    bool ok = succeeded(rig_buffer_view(src, at, n, &from), "view of the file") &&
              succeeded(rig_buffer_view(dst, at, n, &to), "view of the buffer") &&
              succeeded(rig_buffer_copy(from, to), "copy");
    rig_buffer_unref(to);
    rig_buffer_unref(from);
    if (!ok) {
      if (progress) fputc('\n', stderr);
      return false;
    }
    if (progress) show_progress(at + n, total, seconds_now() - start);
  }
  if (progress) fputc('\n', stderr);
  return true;
}

/* Reads n bytes of the file at fd from offset with pread. */
static bool pread_fully(int fd, uint8_t *out, int64_t n, int64_t offset) {
  for (int64_t done = 0; done < n;) {
    ssize_t r = pread(fd, out + done, (size_t)(n - done), offset + done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      fprintf(stderr, "rig: load: reading the file at %" PRId64 ": %s\n", offset + done,
              r == 0 ? "end of file" : strerror(errno));
      return false;
    }
    done += r;
  }
  return true;
}

/* Compares the buffer b with the file's bytes from offset, read by another
 * path than the load's: pread into host memory, against b's bytes copied
 * back into a host buffer, chunk by chunk. */
static bool verify_load(const char *path, int64_t offset, rig_buffer_t *b) {
  int64_t total = rig_buffer_bytes(b);
  int64_t chunk = total < LOAD_CHUNK_BYTES ? total : LOAD_CHUNK_BYTES;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "rig: load: %s: %s\n", path, strerror(errno));
    return false;
  }
  uint8_t *expected = malloc(chunk > 0 ? (size_t)chunk : 1);
  rig_buffer_t *back = NULL;
  bool ok = expected != NULL &&
            succeeded(rig_buffer_create(rig_host(), chunk, RIG_MEMORY_DEVICE, &back),
                      "create a host buffer");
  if (!expected) fputs("rig: out of memory\n", stderr);
  for (int64_t at = 0; ok && at < total; at += chunk) {
    int64_t n = total - at < chunk ? total - at : chunk;
    rig_buffer_t *part = NULL, *into = NULL;
    ok = pread_fully(fd, expected, n, offset + at) &&
         succeeded(rig_buffer_view(b, at, n, &part), "view of the buffer") &&
         succeeded(rig_buffer_view(back, 0, n, &into), "view of the host buffer") &&
         succeeded(rig_buffer_copy(part, into), "copy back");
    const uint8_t *got = rig_buffer_host(back);
    for (int64_t k = 0; ok && k < n; k++) {
      if (got[k] != expected[k]) {
        fprintf(stderr,
                "rig: load: file byte %" PRId64 " differs: %u in the file, %u in the buffer\n",
                offset + at + k, expected[k], got[k]);
        ok = false;
      }
    }
    rig_buffer_unref(into);
    rig_buffer_unref(part);
  }
  rig_buffer_unref(back);
  free(expected);
  close(fd);
  return ok;
}

static bool run_load(const load_options_t *o, rig_buffer_t **file, rig_buffer_t **buffer) {
  rig_device_t *d = NULL;
  if (!succeeded(rig_open(o->device, NULL, &d), o->device)) return false;
  if (!succeeded(rig_disk_open(o->path, RIG_DISK_READ, o->offset, o->length, file), "open"))
    return false;
  int64_t n = rig_buffer_bytes(*file);
  if (!succeeded(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, buffer), "create buffer")) return false;

  double start = seconds_now();
  if (!copy_in_chunks(*file, *buffer, isatty(STDERR_FILENO))) return false;
  double seconds = seconds_now() - start;
  printf("loaded %" PRId64 " in %.3f s: %.2f GB/s\n", n, seconds, gigabytes_per_second(n, seconds));
  fflush(stdout);
  if (!o->verify) return true;
  if (!verify_load(o->path, o->offset, *buffer)) return false;
  puts("verified");
  return true;
}

static int command_load(int argc, char **argv) {
  load_options_t o;
  if (!parse_load_options(argc, argv, &o)) return usage_error();
  rig_buffer_t *file = NULL, *buffer = NULL;
  bool ok = run_load(&o, &file, &buffer);
  rig_buffer_unref(buffer);
  rig_buffer_unref(file);
  return ok ? 0 : EXIT_FAILED;
}

/* ------------------------------------------------------------------------ */
/* rig version, rig help                                                     */

static int command_version(int argc, char **argv) {
  (void)argv;
  if (argc != 0) return usage_error();
  int loaded = rig_version();
  printf("rig %d.%d.%d (librig %d.%d.%d)\n", RIG_VERSION_MAJOR,
         RIG_VERSION_MINOR, RIG_VERSION_PATCH, loaded / 10000,
         loaded / 100 % 100, loaded % 100);
  return 0;
}

static int command_help(int argc, char **argv) {
  (void)argv;
  if (argc != 0) return usage_error();
  fputs(usage_text, stdout);
  return 0;
}

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv); /* gets the arguments after the name */
} command_t;

static const command_t commands[] = {
    {"devices", command_devices}, {"demo", command_demo},
    {"load", command_load},       {"share", command_share},
    {"version", command_version},
    {"help", command_help},       {"--help", command_help},
    {"-h", command_help},
};

int main(int argc, char **argv) {
  if (argc < 2) return usage_error();
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp(argv[1], commands[i].name) == 0)
      return commands[i].run(argc - 2, argv + 2);
  }
  fprintf(stderr, "rig: unknown command '%s'\n", argv[1]);
  return usage_error();
}
