/* Where an executable of the machines tests' tools is: `ip`, ucx_perftest. */
#ifndef RIG_TESTS_FIND_PROGRAM_H
#define RIG_TESTS_FIND_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes into path (of size bytes) the first executable file called name
 * in the directories of dirs (':'-separated, may be empty), then in those
 * of PATH; false where none is, or its path does not fit. */
bool find_program(const char *name, const char *dirs, char *path, size_t size);

#ifdef __cplusplus
}
#endif

#endif
