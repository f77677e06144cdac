/* The bytes the machines tests and the benchmarks of the link send and
 * check: byte i of a stream (or of a copy) is byte i % 8 of a
 * multiplicative hash of i / 8, so that a byte lost, doubled or moved
 * shows. */
#ifndef RIG_TESTS_BYTE_PATTERN_H
#define RIG_TESTS_BYTE_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the pattern's bytes offset to offset + n into bytes. */
void byte_pattern_fill(uint8_t *bytes, uint64_t offset, size_t n);
/* The index of bytes' first byte unlike the pattern at offset, or n. */
size_t byte_pattern_differs(const uint8_t *bytes, uint64_t offset, size_t n);

#ifdef __cplusplus
}
#endif

#endif
