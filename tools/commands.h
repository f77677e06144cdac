/* What the rig tool's command files share (rig.c defines it). */
#ifndef RIG_TOOL_COMMANDS_H
#define RIG_TOOL_COMMANDS_H

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

#include <rig/rig.h>
#include <rig/service.h>

#include <stdbool.h>

/* Prints the usage on stderr and answers EXIT_USAGE. */
int usage_error(void);

/* A usage error at argv[i] of command's arguments: says on stderr whether
 * it is an unknown option, an option lacking its value or an unexpected
 * argument, naming it, then prints the usage; answers EXIT_USAGE. */
int bad_argument(const char *command, int argc, char **argv, int i);

/* True iff status is RIG_OK; otherwise reports the failed call (what) with
 * its status and rig_last_error() on stderr. */
bool succeeded(rig_status_t status, const char *what);

/* A snapshot of the counters of the rigd at socket (NULL: the default
 * one), or NULL having reported why on stderr. */
rig_service_stats_t *service_snapshot(const char *socket);

/* The commands, one file each (rig_COMMAND.c); each gets the arguments
 * after its name and answers the exit status. */
int command_clients(int argc, char **argv);
int command_devices(int argc, char **argv);
int command_drop(int argc, char **argv);
int command_metrics(int argc, char **argv);
int command_demo(int argc, char **argv);
int command_load(int argc, char **argv);
int command_share(int argc, char **argv);
int command_top(int argc, char **argv);
int command_version(int argc, char **argv);

#endif
