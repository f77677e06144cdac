/* JSON output of the rig tool's commands, on stdout: numbers exact
 * whatever their size. */
#ifndef RIG_TOOL_JSON_OUT_H
#define RIG_TOOL_JSON_OUT_H

#include <stdint.h>

/* Writes s as a JSON string, or null for NULL.  Bytes from 0x80 up pass
 * through: rig's strings are UTF-8. */
void print_json_string(const char *s);

/* Writes ", KEY: " (a member after the first). */
void print_json_key(const char *key);

/* Writes n as a JSON number where a double holds it exactly (up to 2^53),
 * else as a string of its digits, so that no reader rounds it. */
void print_json_count(uint64_t n);

/* print_json_count, but null for UINT64_MAX (no bound). */
void print_json_bound(uint64_t n);

#endif
