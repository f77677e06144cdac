/* What rig devices --service shows of each device rigd serves: its
 * clients and memory, from a snapshot of rigd's counters. */
#ifndef RIG_TOOL_SERVED_USAGE_H
#define RIG_TOOL_SERVED_USAGE_H

#include <rig/service.h>

#include <stdbool.h>

/* The served device of s a proxy named proxy_name ("MEM:0@rigd") stands
 * for, its index in *index; false where s has none (or s is NULL). */
bool served_device_of(const rig_service_stats_t *s, const char *proxy_name, size_t *index);

/* Device index of s's clients and memory: lines of text, or the members
 * of a JSON object (each after a comma). */
void print_served_usage_text(const rig_service_stats_t *s, size_t index);
void print_served_usage_json(const rig_service_stats_t *s, size_t index);

#endif
