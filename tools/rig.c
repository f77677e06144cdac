/* rig: the command-line tool, written over the public C API only.
 *
 *   rig clients [--json] [--service PATH]
 *                         rigd's clients, what each holds and did on each
 *                         served device, and its exports (admin channel)
 *   rig devices [--json] [--service [PATH]]
 *                         the devices rig_probe reports, with the properties
 *                         of each that opens and the reason for each that
 *                         does not; those rigd serves too, where RIG_SERVICE
 *                         is set or --service names rigd's socket, with
 *                         each served device's clients and memory;
 *                         with --machine ADDRESS [--key FILE], those of the
 *                         agent of another machine alone
 *   rig drop CLIENT [--service PATH]
 *                         disconnects rigd's client CLIENT (admin channel)
 *   rig metrics [--service PATH]
 *                         rigd's counters in Prometheus' text format
 *   rig demo              the main job: 1 MiB copied host -> MEM:0 -> MEM:1
 *                         -> host, then verified
 *   rig load FILE --device NAME [--offset N] [--length N] [--verify]
 *                         reads a file (or a range of it) into a new buffer
 *                         on the device NAME through the io device DISK,
 *                         showing its progress; --verify compares the
 *                         buffer's bytes with the file's, read by pread
 *   rig load --safetensors FILE... --device NAME [--arena] [--verify]
 *                         loads every tensor of each checkpoint onto NAME,
 *                         printing each tensor and the total rate
 *   rig share [--service PATH] [--device NAME@rigd]
 *                         the service's main job: two processes share a
 *                         buffer of rigd's device (rig_share.c)
 *   rig top [--service PATH] [--frames N]
 *                         a live view of rigd's clients and served devices,
 *                         refreshed every second: full-screen on a terminal
 *                         until q, plain frames otherwise (rig_top.c)
 *   rig version           the tool's version and the loaded library's
 *
 * One file per command (rig_COMMAND.c); this one holds main, the usage and
 * what the commands share.
 *
 * Exit status: 0 on success, 1 when a rig call fails (its status and
 * rig_last_error() go to stderr) or the demo's or load's bytes differ, 2 on
 * a usage error.
 */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"

#include <rig/rig.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char usage_text[] =
    "usage: rig <command> [options]\n"
    "\n"
    "commands:\n"
    "  clients [--json] [--service PATH]\n"
    "                    rigd's clients: pid, user, command, bytes per served\n"
    "                    device, work; and who shared what with whom\n"
    "  devices [--json] [--service [PATH]]\n"
    "                    list the devices rig finds, with their properties;\n"
    "                    with RIG_SERVICE set or --service, rigd's too, with\n"
    "                    each served device's clients and memory\n"
    "  devices --machine ADDRESS [--key FILE] [--json]\n"
    "                    the devices the agent of another machine serves\n"
    "  drop CLIENT [--service PATH]\n"
    "                    disconnect rigd's client CLIENT (its id in rig clients)\n"
    "  metrics [--service PATH]\n"
    "                    rigd's counters once, in Prometheus' text format\n"
    "  demo              copy 1 MiB host -> MEM:0 -> MEM:1 -> host and verify it\n"
    "  load FILE --device NAME [--offset N] [--length N] [--verify]\n"
    "                    read FILE (or N bytes of it from --offset) into a new\n"
    "                    buffer on device NAME (CPU is the host); --verify\n"
    "                    compares the buffer with the file read again; sizes\n"
    "                    take a K, M or G suffix (powers of 1024)\n"
    "  load --safetensors FILE... --device NAME [--arena] [--verify]\n"
    "                    load every tensor of each safetensors FILE into a\n"
    "                    buffer of its own on NAME (--arena: one buffer per\n"
    "                    file); print each tensor and the total GB/s\n"
    "  share [--service PATH] [--device NAME@rigd]\n"
    "                    two processes share a buffer of rigd's device\n"
    "                    (MEM:0@rigd by default): one fills, one verifies\n"
    "  top [--service PATH] [--frames N]\n"
    "                    rigd's clients and served devices, live, every second:\n"
    "                    full-screen on a terminal (q quits), else plain\n"
    "                    frames (N of them with --frames)\n"
    "  version, --version\n"
    "                    print the tool's and the library's versions\n"
    "  help, --help      print this help\n"
    "\n"
    "exit status: 0 on success, 1 when a rig call fails, 2 on a usage error;\n"
    "rig(1) documents each command\n";

int usage_error(void) {
  fputs(usage_text, stderr);
  return EXIT_USAGE;
}

/* Value-taking options of every command: one of them last on the line
 * lacks its value rather than being unknown. */
static const char *const value_options[] = {"--service", "--device", "--offset", "--length", "--frames"};

int bad_argument(const char *command, int argc, char **argv, int i) {
  const char *arg = argv[i];
  bool takes_value = false;
  for (size_t k = 0; k < sizeof value_options / sizeof value_options[0]; k++)
    takes_value = takes_value || strcmp(arg, value_options[k]) == 0;
  if (takes_value && i + 1 == argc)
    fprintf(stderr, "rig %s: option '%s' needs a value\n", command, arg);
  else if (arg[0] == '-')
    fprintf(stderr, "rig %s: unknown option '%s'\n", command, arg);
  else
    fprintf(stderr, "rig %s: unexpected argument '%s'\n", command, arg);
  return usage_error();
}

/* True iff status is RIG_OK; otherwise reports the failed call on stderr. */
bool succeeded(rig_status_t status, const char *what) {
  if (status == RIG_OK) return true;
  fprintf(stderr, "rig: %s: %s: %s\n", what, rig_status_name(status),
          rig_last_error());
  return false;
}

rig_service_stats_t *service_snapshot(const char *socket) {
  rig_service_options_t options = {sizeof options, socket};
  rig_service_stats_t *s = NULL;
  if (!succeeded(rig_service_stats(&options, &s), "read rigd's counters")) return NULL;
  return s;
}

/* ------------------------------------------------------------------------ */
/* rig help                                                                  */

static int command_help(int argc, char **argv) {
  if (argc != 0) return bad_argument("help", argc, argv, 0);
  fputs(usage_text, stdout);
  return 0;
}

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv); /* gets the arguments after the name */
} command_t;

static const command_t commands[] = {
    {"clients", command_clients}, {"devices", command_devices},
    {"demo", command_demo},       {"drop", command_drop},
    {"metrics", command_metrics},
    {"load", command_load},       {"share", command_share},
    {"top", command_top},
    {"version", command_version}, {"--version", command_version},
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
