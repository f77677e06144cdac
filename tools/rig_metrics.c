/* rig metrics [--service PATH]: rigd's counters once, in Prometheus' text
 * format, as rigd's metrics file has them (the one formatter of both,
 * metrics_text.h), read on rigd's admin channel. */
#include "commands.h"

#include "metrics_text.h"

#include <rig/service.h>

#include <stdio.h>
#include <string.h>

int command_metrics(int argc, char **argv) {
  const char *service = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--service") == 0 && i + 1 < argc)
      service = argv[++i];
    else
      return bad_argument("metrics", argc, argv, i);
  }
  rig_service_stats_t *s = service_snapshot(service);
  if (!s) return EXIT_FAILED;
  bool written = write_metrics_text(stdout, s);
  rig_service_stats_release(s);
  if (!written) perror("rig metrics: stdout");
  return written ? 0 : EXIT_FAILED;
}
