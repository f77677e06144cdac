#include "byte_pattern.h"

#include <string.h>

/* Word k of every stream, which holds its bytes 8k to 8k + 7. */
static uint64_t pattern_word(uint64_t k) { return (k + 1) * 0x9E3779B97F4A7C15ull; }

static uint8_t pattern_at(uint64_t i) {
  uint64_t word = pattern_word(i / 8);
  uint8_t bytes[8];
  memcpy(bytes, &word, sizeof bytes);
  return bytes[i % 8];
}

/* Whole words where offset + i is a word's start: ThreadSanitizer's
 * builds check each store, and a copy is up to 1 GiB. */
void byte_pattern_fill(uint8_t *bytes, uint64_t offset, size_t n) {
  size_t i = 0;
  for (; i < n && (offset + i) % 8; i++) bytes[i] = pattern_at(offset + i);
  for (; i + 8 <= n; i += 8) {
    uint64_t word = pattern_word((offset + i) / 8);
    memcpy(bytes + i, &word, sizeof word);
  }
  for (; i < n; i++) bytes[i] = pattern_at(offset + i);
}

size_t byte_pattern_differs(const uint8_t *bytes, uint64_t offset, size_t n) {
  size_t i = 0;
  for (; i < n && (offset + i) % 8; i++)
    if (bytes[i] != pattern_at(offset + i)) return i;
  for (; i + 8 <= n; i += 8) {
    uint64_t word = pattern_word((offset + i) / 8);
    if (memcmp(bytes + i, &word, sizeof word) != 0) break;
  }
  for (; i < n; i++)
    if (bytes[i] != pattern_at(offset + i)) return i;
  return n;
}
