/* rig version, rig --version: the tool's version and the loaded
 * library's. */
#include "commands.h"

#include <rig/rig.h>

#include <stdio.h>

int command_version(int argc, char **argv) {
  if (argc != 0) return bad_argument("version", argc, argv, 0);
  int loaded = rig_version();
  printf("rig %d.%d.%d (librig %d.%d.%d)\n", RIG_VERSION_MAJOR,
         RIG_VERSION_MINOR, RIG_VERSION_PATCH, loaded / 10000,
         loaded / 100 % 100, loaded % 100);
  return 0;
}
