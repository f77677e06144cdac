/* JSON output of the rig tool (json_out.h). */
#include "json_out.h"

#include <inttypes.h>
#include <stdio.h>

void print_json_string(const char *s) {
  if (!s) {
    fputs("null", stdout);
    return;
  }
  putchar('"');
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    switch (*c) {
    case '"': fputs("\\\"", stdout); break;
    case '\\': fputs("\\\\", stdout); break;
    case '\n': fputs("\\n", stdout); break;
    case '\r': fputs("\\r", stdout); break;
    case '\t': fputs("\\t", stdout); break;
    default:
      if (*c < 0x20 || *c == 0x7f)
        printf("\\u%04x", *c);
      else
        putchar(*c);
    }
  }
  putchar('"');
}

void print_json_key(const char *key) {
  fputs(", ", stdout);
  print_json_string(key);
  fputs(": ", stdout);
}

void print_json_count(uint64_t n) {
  if (n <= UINT64_C(1) << 53)
    printf("%" PRIu64, n);
  else
    printf("\"%" PRIu64 "\"", n);
}

void print_json_bound(uint64_t n) {
  if (n == UINT64_MAX)
    fputs("null", stdout);
  else
    print_json_count(n);
}
