/* The terminal of a full-screen view (rig top): raw keys, the alternate
 * screen, and the terminal restored however the view ends (its return,
 * exit, SIGINT, SIGTERM, SIGHUP). */
#ifndef RIG_TOOL_TERMINAL_H
#define RIG_TOOL_TERMINAL_H

#include <stdbool.h>
#include <stddef.h>

/* Takes the terminal of stdout (keys from stdin where it is a terminal
 * too): raw keys without echo, the alternate screen, the cursor hidden; a
 * restore at exit and on the ending signals, which also make
 * terminal_ended() true.  false where stdout is no terminal. */
bool terminal_take(void);
/* Gives the terminal back as it was; again is harmless. */
void terminal_restore(void);
/* Whether an ending signal came since terminal_take. */
bool terminal_ended(void);

/* Waits up to timeout_ms for a key; answers it, or 0 where none came (or
 * a signal did). */
int terminal_key(int timeout_ms);

/* The terminal's size, 80 by 24 where it cannot say. */
void terminal_size(int *columns, int *rows);

#endif
