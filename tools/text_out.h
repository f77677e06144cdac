/* Text that rigd's clients chose (a command's name, which any process sets
 * for itself), shown on a terminal. */
#ifndef RIG_TOOL_TEXT_OUT_H
#define RIG_TOOL_TEXT_OUT_H

#include <stddef.h>

/* out (of n bytes, at least 1) holding s with each control byte (below
 * 0x20, and 0x7f) shown as '?', cut to fit: no client's name moves the
 * cursor, clears the screen or begins a line of the tool's.  Answers out;
 * "" for NULL. */
const char *shown_text(const char *s, char *out, size_t n);

#endif
