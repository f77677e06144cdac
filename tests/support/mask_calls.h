/* The signal masks rig makes: linking mask_calls.c into a program
 * interposes pthread_sigmask, so that librig's calls of it resolve to a
 * definition that counts the calling thread's calls and forwards them to
 * the C library's.  It counts exactly the system calls of the masks rig
 * makes on that thread (ERR-06). */
#ifndef RIG_TEST_MASK_CALLS_H
#define RIG_TEST_MASK_CALLS_H

#include <stdint.h>

/* The calling thread's pthread_sigmask calls so far. */
uint64_t mask_calls(void);

#endif
