/* The commands of the rig tool that live outside rig.c. */
#ifndef RIG_TOOL_COMMANDS_H
#define RIG_TOOL_COMMANDS_H

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* Prints the usage on stderr and answers EXIT_USAGE. */
int usage_error(void);

/* rig share [--service PATH] [--device NAME@rigd] (rig_share.c). */
int command_share(int argc, char **argv);

#endif
