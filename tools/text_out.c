/* Clients' text on a terminal (text_out.h). */
#include "text_out.h"

const char *shown_text(const char *s, char *out, size_t n) {
  size_t i = 0;
  for (; s && s[i] && i + 1 < n; i++) {
    unsigned char c = (unsigned char)s[i];
    out[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
  }
  out[i] = '\0';
  return out;
}
