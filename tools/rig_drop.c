/* rig drop CLIENT [--service PATH]: disconnects rigd's client of that id
 * (rig clients lists them), on rigd's admin channel (rig_service_drop):
 * everything it held returns once its work is done. */
#define _POSIX_C_SOURCE 200809L

#include "commands.h"

#include <rig/service.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int command_drop(int argc, char **argv) {
  const char *service = NULL, *id = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--service") == 0 && i + 1 < argc)
      service = argv[++i];
    else if (argv[i][0] != '-' && !id)
      id = argv[i];
    else
      return bad_argument("drop", argc, argv, i);
  }
  if (!id) {
    fputs("rig drop: which client? (its id, as rig clients lists it)\n", stderr);
    return usage_error();
  }
  char *end = NULL;
  errno = 0;
  uint64_t client = strtoull(id, &end, 10);
  if (errno || !*id || *end || id[0] == '-' || client == 0) {
    fprintf(stderr, "rig drop: '%s' is not a client's id (a positive number)\n", id);
    return usage_error();
  }
  rig_service_options_t options = {sizeof options, service};
  if (!succeeded(rig_service_drop(&options, client), "drop the client")) return EXIT_FAILED;
  printf("dropped client %" PRIu64 "\n", client);
  return 0;
}
