/* rig's driver interface, C side: the hot-path functions a driver gives rig
 * for each device (room, submit, commit), the parts and waits they take,
 * the timeline word, and the lock and signal primitives every driver uses.
 *
 * The rest of a driver (facts, memory, peers, code, sleep, stop) is the C++
 * driver base of the library (internal/rig_internal/driver.hpp), as the
 * specification's Rig_edge.Driver states it.
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
/* sigset_t: <signal.h> declares it only under POSIX's feature macros, and
 * a C11 program (-std=c11) defines none. */
#include <sys/select.h>

#include <rig/rig.h>

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

/* A ref of a launch, for a driver whose device patches refs itself
 * (Facts::launch_refs_by_location in internal/rig_internal/driver.hpp, a
 * proxy of rigd's, whose memory is handle-only here): the 8 bytes at byte at of the
 * parameters are to hold the address, for the device's work, of the bytes
 * bytes at memory (kind RIG_REF_READ, _WRITE, _READ_WRITE or _UNORDERED,
 * used as access says), or the address of the function whose entry the
 * driver made as entry (kind RIG_REF_ENTRY, memory and bytes zero).  The
 * ordered kinds order the launch by the memory's stamps, as in-process. */
typedef struct rig_edge_ref {
  rig_edge_location_t memory;
  uint64_t bytes;
  uint64_t at;
  uint32_t kind;   /* a rig_ref_kind_t */
  uint32_t access; /* a rig_access_t: what the work does with the memory */
  const void *entry;
} rig_edge_ref_t;

/* A launch of a function the driver's entry made ready.  params holds the
 * launch's parameter bytes with each ref's address patched in; it lives
 * until the driver's submit returns, so a driver that runs the launch
 * later copies what it keeps.  The grid is groups[0] * groups[1] *
 * groups[2] groups of threads[0] * threads[1] * threads[2] threads, x
 * fastest; every axis is at least 1.  For a device whose refs go by
 * location (rig_edge_ref_t), params holds zeros where the refs lie, and
 * refs lists them, in the order of the part's refs; for any other device
 * refs is NULL and ref_count 0.  refs lives as params does. */
typedef struct rig_edge_launch {
  const void *entry; /* what the driver's entry made for the function */
  const void *params;
  uint64_t param_bytes;
  uint64_t groups[3];
  uint64_t threads[3];
  uint64_t shared_bytes; /* of memory each group shares */
  const rig_edge_ref_t *refs;
  uint32_t ref_count;
} rig_edge_launch_t;

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
    rig_edge_launch_t launch;
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
/* io devices.                                                               */
/*                                                                           */
/* An io device holds memory that the host reads and writes through its      */
/* library's calls, such as files (the disk library, rig/disk.h), and runs   */
/* no work.  A region is memory as the library represents it.  Its functions */
/* return 0 or a byte count on success and a negative errno on failure.     */

typedef struct rig_io_ops {
  size_t size; /* sizeof(rig_io_ops_t) as the library compiled it */
  /* The key of the library's regions: rig_buffer_of_io and rig_buffer_io
   * check it, so a region is taken only by the library that made it. */
  const char *region_key;
  /* The bytes of the memory that counts in the device's budget at most. */
  int64_t budget;
  /* Scratch memory of n > 0 bytes, which the library frees when rig calls
   * free.  -EINVAL refuses the call (RIG_EINVAL); other errors answer that
   * it has no room (the rounds of reclamation, then RIG_ENOMEM). */
  int (*alloc)(void *library, int64_t n, void **region);
  /* Called once for each region of alloc or of rig_buffer_of_io, once no
   * buffer over it remains. */
  void (*free)(void *library, void *region);
  /* The region's n bytes mapped for the host from its byte 0, for borrows;
   * unpages ends such a mapping.  pages may fail transiently (RIG_EIO). */
  int (*pages)(void *library, void *region, int64_t n, void **address);
  void (*unpages)(void *library, void *region, void *address, int64_t n);
  /* Reads n bytes of region from its byte offset into host memory at dst,
   * or writes them from src: the count moved, which is n unless the region
   * was cut short (then fewer), or a negative errno (RIG_EIO). */
  int64_t (*read)(void *library, void *region, int64_t offset, void *dst, int64_t n);
  int64_t (*write)(void *library, void *region, int64_t offset, const void *src, int64_t n);
  /* What region is, as rig's messages name it, such as a file's path; the
   * text lives as long as the region.  May be NULL, or lie past the size
   * the library compiled: messages then name the device alone. */
  const char *(*describe)(void *library, void *region);
} rig_io_ops_t;

/* Opens the io device named name with the library's functions, which must
 * outlive it.  One device per name, as rig_open: an open name answers its
 * device, RIG_EINVAL if another library's.  Its arch is "", its alignment 1,
 * its budget ops->budget; it reaches no other device. */
rig_status_t rig_open_io(const char *name, const rig_io_ops_t *ops, void *library, rig_device_t **out);
/* *out is a buffer over the n bytes of region, memory of the io device d,
 * which admits access (Read for a region held for reading).  The memory is
 * outside the claims, and region returns to ops->free once no buffer over
 * it remains.  RIG_EINVAL if d is not an io device, its key is not key, or
 * n < 0; RIG_ELOST if d is lost or closed. */
rig_status_t rig_buffer_of_io(rig_device_t *d, const char *key, void *region, rig_access_t access, int64_t n,
                              rig_buffer_t **out);
/* *region is the region b's memory lies in if it is an io device's memory
 * of a library whose key is key, else NULL.  RIG_EINVAL if b is dead. */
rig_status_t rig_buffer_io(const rig_buffer_t *b, const char *key, void **region);

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
