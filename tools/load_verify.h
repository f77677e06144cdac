/* What rig load's two forms share (rig_load.c, rig_load_safetensors.c):
 * the clock, the rate, and the check of a loaded buffer against the file. */
#ifndef RIG_TOOL_LOAD_VERIFY_H
#define RIG_TOOL_LOAD_VERIFY_H

#include <rig/rig.h>

#include <stdbool.h>
#include <stdint.h>

/* The bytes each chunk of a load or a verification moves. */
enum { LOAD_CHUNK_BYTES = 64 << 20 };

double seconds_now(void);
double gigabytes_per_second(int64_t bytes, double seconds);

/* Compares the buffer b with the file's bytes from offset, read by another
 * path than the load's: pread into host memory, against b's bytes copied
 * back into a host buffer, chunk by chunk.  False, having said on stderr
 * which byte differs or what failed, where they differ. */
bool verify_load(const char *path, int64_t offset, rig_buffer_t *b);

#endif
