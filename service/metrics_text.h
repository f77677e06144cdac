/* rigd's counters in Prometheus' text exposition format (version 0.0.4),
 * from a snapshot of rig_service_stats: the one formatter of both rigd's
 * metrics file (rigd --metrics) and `rig metrics`.  Plain C on the public
 * API, so that the rig tool links it as rigd does. */
#ifndef RIGD_METRICS_TEXT_H
#define RIGD_METRICS_TEXT_H

#include <rig/service.h>

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes s's counters to out: for each metric family its HELP and TYPE
 * lines, then its samples.  Clients are labelled client (rigd's id), pid,
 * user and command; served devices device; counts are exact integers.
 * Answers false where a write to out failed. */
bool write_metrics_text(FILE *out, const rig_service_stats_t *s);

#ifdef __cplusplus
}
#endif

#endif
