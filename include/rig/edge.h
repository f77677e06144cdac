/* rig's driver interface, C side: the hot-path functions a driver gives rig
 * for each device (room, submit, commit), the parts and waits they take,
 * the timeline word, and the lock and signal primitives every driver uses.
 *
 * The rest of a driver (facts, memory, peers, code, sleep, stop) is the C++
 * driver base of the library (lib/driver.hpp), as the specification's
 * Rig_edge.Driver states it.
 *
 * Timeline: each device has a word, a uint64_t that holds the last value
 * whose work is done.  rig numbers work with consecutive values; a driver
 * raises the word, with release order, as values complete, so the host
 * learns what has completed by reading memory.
 */
#ifndef RIG_EDGE_H
#define RIG_EDGE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Where a region's bytes lie for the device's work: an address the work
 * uses, or for handle-only memory (address NULL) the driver's object and
 * the offset in it. */
typedef struct rig_edge_location {
  void *address;
  uint64_t handle;
  uint64_t offset;
} rig_edge_location_t;

/* The kinds of parts of a device's work. */
typedef enum rig_edge_part_kind {
  RIG_PART_COPY = 1,   /* rows of bytes from src to dst                 */
  RIG_PART_FILL = 2,   /* bytes set to one value                        */
  RIG_PART_WORDS = 3,  /* writes of 64-bit words, in order             */
  RIG_PART_LAUNCH = 4, /* a launch of loaded code (Running work)        */
} rig_edge_part_kind_t;

typedef struct rig_edge_copy {
  rig_edge_location_t src;
  rig_edge_location_t dst;
  uint64_t width, rows, src_pitch, dst_pitch;
} rig_edge_copy_t;

typedef struct rig_edge_fill {
  rig_edge_location_t dst;
  uint64_t bytes;
  uint8_t value;
} rig_edge_fill_t;

typedef struct rig_edge_word_write {
  rig_edge_location_t dst;
  uint64_t value;
} rig_edge_word_write_t;

typedef struct rig_edge_words {
  const rig_edge_word_write_t *writes;
  uint32_t count;
} rig_edge_words_t;

/* One part of a submission.  queue indexes the device's queues (facts).
 * The part follows each earlier part listed in after (indexes into the
 * submission's parts) besides the parts before it on its own queue. */
typedef struct rig_edge_part {
  rig_edge_part_kind_t kind;
  uint32_t queue;
  const uint32_t *after;
  uint32_t after_count;
  union {
    rig_edge_copy_t copy;
    rig_edge_fill_t fill;
    rig_edge_words_t words;
  } u;
} rig_edge_part_t;

/* A wait of the device's queue for another device's value: the queue
 * stalls until *word >= value.  word is the other device's timeline word
 * as this device's work addresses it. */
typedef struct rig_edge_wait {
  const volatile uint64_t *word;
  uint64_t value;
} rig_edge_wait_t;

/* The work of one value: its parts run after its waits, and the device
 * raises its word to value once they are done and every lower value is. */
typedef struct rig_edge_work {
  uint64_t value;
  const rig_edge_part_t *parts;
  uint32_t part_count;
  const rig_edge_wait_t *waits;
  uint32_t wait_count;
} rig_edge_work_t;

/* room's answers. */
typedef enum rig_edge_room {
  RIG_ROOM = 0,  /* the work fits now                                  */
  RIG_LATER = 1, /* no room until the device reaches one more value    */
  RIG_NEVER = 2, /* the work fits in no submission of this driver      */
  RIG_GROW = 3,  /* the queues must grow first (Driver::grow)          */
} rig_edge_room_t;

/* ------------------------------------------------------------------------ */
/* Locks and signals.                                                        */

/* The count of locks of rig's, of a driver's or of an io library's the
 * calling thread holds.  A call of rig's that may take a lock answers
 * RIG_EINVAL while it is not 0. */
int rig_holds(void);
/* Counts one more (take != 0) or one fewer (take == 0) lock held by the
 * calling thread: a driver calls it right before it takes a lock and right
 * after it gives it back. */
void rig_hold(int take);

/* Blocks every signal on the calling thread but those a fault raises
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS), storing the
 * mask it replaced in *old. */
void rig_mask(sigset_t *old);
/* Gives the calling thread the mask rig_mask stored. */
void rig_unmask(const sigset_t *old);
/* Around a driver's blocking step inside a call rig made with signals
 * masked: rig_unblock before it lets the thread's own mask through (so
 * handlers run during the wait), rig_block after it masks them again. */
void rig_unblock(void);
void rig_block(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* RIG_EDGE_H */
