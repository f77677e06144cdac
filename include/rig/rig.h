/* rig: devices, buffers of their memory, and work ordered by the memory it
 * touches.  The stable C API of librig.so.1.
 *
 * Conventions (see docs/ and the specification in rig(7)):
 *  - Every function that can fail returns a rig_status_t.  On failure it
 *    leaves a thread-local message (rig_last_error) and, for RIG_ELOST and
 *    RIG_ENOMEM, the device concerned (rig_error_device) and, for RIG_ENOMEM,
 *    the bytes (rig_error_bytes); for RIG_EIO the errno (rig_error_errno).
 *  - No input, however wrong, crashes the library: NULL handles, released
 *    handles, dead buffers, out-of-range offsets and overflowing sizes
 *    answer RIG_EINVAL.
 *  - Handles (rig_buffer_t, rig_export_t, rig_image_t, rig_submission_t)
 *    are owned by the caller, who releases each once (rig_buffer_unref,
 *    rig_export_unref, rig_image_unref, rig_submission_unref); a
 *    rig_function_t lives as long as its image, a rig_run_t as long as its
 *    submission.  A handle used after its release (its last unref, or its
 *    image's or submission's) is checked: a call that answers a status
 *    answers RIG_EINVAL, "the buffer was released" (naming what it was
 *    given), rig_buffer_claim RIG_CLAIM_INVALID, rig_buffer_dead
 *    "released", and every other call answers as for NULL (a ref gives
 *    NULL, an unref does nothing).  This holds until 16384 more handles of
 *    its type have been released after it; from then on its memory may
 *    hold a new handle of that type, which the old pointer then names.
 *    Machines are records that live for the rest of the process.  A
 *    device's record lives while it is open, and after its close (or its
 *    loss) until it has stopped and nothing names it (its memory,
 *    mappings, submissions, images and the stamps and waits of others'
 *    work returned).  Then rig retires it, its slot and name free: the
 *    pointer still answers as the closed device (RIG_ELOST, "NAME lost:
 *    closed", or its loss's reason; properties as before) until 4096 more
 *    device records have been retired after it.  Then rig releases the
 *    record; points of values its loss dropped answer RIG_ELOST "NAME
 *    lost: why" for good, from a tombstone of a few dozen bytes that rig
 *    keeps in their slot (rig_error_device NULL, rig_point_device NULL),
 *    and the pointer is checked as a released handle
 *    is: a call that answers a status answers RIG_ELOST, "the device was
 *    closed and its record retired" (rig_error_device NULL), rig_lost that
 *    reason, and every other call answers as for NULL (NULL, 0, false, a
 *    point of bits 0) with that message as rig_last_error.  This holds until
 *    4096 more device records have been released after it; from then on
 *    its memory may hold a new device, which the old pointer then names.
 *  - Sizes, offsets and lengths are int64_t so that a negative value is
 *    refused as the specification states instead of wrapping.
 *  - Every call is thread-safe.  A call that may take a lock, made while the
 *    calling thread holds one of rig's (from a signal handler or a callback
 *    of a driver), answers RIG_EINVAL as it starts, having done nothing.
 *    Functions documented "takes no lock" never do so and may be called
 *    from anywhere.
 */
#ifndef RIG_RIG_H
#define RIG_RIG_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RIG_VERSION_MAJOR 0
#define RIG_VERSION_MINOR 1
#define RIG_VERSION_PATCH 0
/* RIG_VERSION is MAJOR * 10000 + MINOR * 100 + PATCH, for #if tests. */
#define RIG_VERSION (RIG_VERSION_MAJOR * 10000 + RIG_VERSION_MINOR * 100 + RIG_VERSION_PATCH)

/* The version of the library loaded at run time, as RIG_VERSION encodes it. */
int rig_version(void);

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                    */

typedef enum rig_status {
  RIG_OK = 0,
  RIG_EINVAL = -1,    /* the call was misused; nothing changed            */
  RIG_ELOST = -2,     /* a device the call depends on is lost             */
  RIG_ENOMEM = -3,    /* a device could not provide the bytes             */
  RIG_EIO = -4,       /* an io device's read or write failed (errno kept) */
  RIG_EOPEN = -5,     /* an open failed; the message is the reason        */
  RIG_EINTR = -6,     /* a wait was interrupted; it lost and assigned nothing */
  RIG_ECALLBACK = -7, /* the caller's callback returned non-zero          */
  RIG_EIMAGE = -8,    /* a device refused an image; the message says why  */
} rig_status_t;

typedef struct rig_device rig_device_t;
typedef struct rig_buffer rig_buffer_t;
typedef struct rig_export rig_export_t;

/* The message of the last failed call on this thread ("" if none).  For
 * RIG_ELOST it reads "NAME lost: why".  The pointer stays valid until the
 * thread's next call into rig.  Takes no lock. */
const char *rig_last_error(void);

/* The name of a status code, such as "RIG_EINVAL".  Takes no lock. */
const char *rig_status_name(rig_status_t status);

/* The device of the last RIG_ELOST or RIG_ENOMEM on this thread, or NULL.
 * For RIG_ENOMEM it is the device the allocation was for, also where
 * another device's budget refused it.  Takes no lock. */
rig_device_t *rig_error_device(void);

/* The bytes the last RIG_ENOMEM on this thread could not allocate, else 0. */
int64_t rig_error_bytes(void);

/* The value the last RIG_ECALLBACK's callback returned, or the errno of the
 * last RIG_EIO, on this thread; else 0. */
int rig_error_code(void);

/* Makes this thread's waits interruptible: a wait that blocks checks *flag
 * at least every 200 ms and, once it is non-zero, returns RIG_EINTR, having
 * lost no device and assigned no value.  NULL turns it off.  The flag suits
 * a signal handler (volatile sig_atomic_t).  Takes no lock. */
void rig_set_interrupt_flag(volatile sig_atomic_t *flag);

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */

/* Options of rig_open.  size is sizeof(rig_open_options_t) as the caller
 * compiled it, so later fields can be added. */
typedef struct rig_open_options {
  size_t size;
  /* Driver-specific configuration, such as "latency_us=20" for a sim device,
   * or NULL. */
  const char *config;
} rig_open_options_t;

/* The host: this process's device, named "CPU".  Its memory is the
 * process's memory; its work is host access and launches of code it links.
 * Never lost, never closed.  Takes no lock. */
rig_device_t *rig_host(void);

/* Opens the device named name, such as "MEM:0", with the driver whose
 * prefix is the part of name before ':' (the memory driver for "MEM").  A
 * process has at most one open device per name: if one is open, *out is
 * that same device and the driver is not asked.  opts may be NULL.
 *
 * NAME~TAG, with TAG not empty (before "@MACHINE" where the name has one),
 * names an instance of NAME's hardware: its driver opens it as it opens
 * NAME, as a device of its own, unequal to NAME's, with its own timeline,
 * memory and faults, so far as the driver keeps them apart (a sim or
 * memory device of its own; CUDA's instances of one GPU share its primary
 * context, and a fault sticks to all of them).  rigd runs each client's
 * work on instances of its own.
 *
 * A name is PREFIX[:UNIT][~TAG][@MACHINE]: PREFIX and UNIT of letters,
 * digits and '_', TAG and MACHINE of those, '.' and '-', no part empty.
 * The driver checks opts' config: a key it does not have, or a value not
 * of its knob's kind or range, answers RIG_EINVAL with a message that
 * names it (for a key, with the driver's keys; for a value, the knob, its
 * value and "the configuration").
 *
 * RIG_EOPEN with the reason when the device cannot be opened: the driver
 * refused (a bad knob of its environment variable, such as RIG_SIM, is
 * named with the variable), the name's device is lost and its stop has
 * not returned, or every one of the 65,535 slots is held.  An open of a
 * lost device's name first runs that device's owed stop, then opens a new
 * device, unequal to the lost one, whose timeline continues past its
 * slot's earlier values.  RIG_EINVAL if name is NULL, malformed (the
 * message quotes it) or names no driver, if the driver refuses the
 * configuration as above, if the device open under that name is another
 * driver's, if the driver's facts break their rules, or if called from
 * inside the open of that name.  Opens of one name run one at a time;
 * opens of other names go on meanwhile. */
rig_status_t rig_open(const char *name, const rig_open_options_t *opts,
                      rig_device_t **out);

/* Called by rig_probe for each device name a driver knows: why is NULL
 * where the name can be opened, else the reason it cannot (RIG_EOPEN's). */
typedef void (*rig_probe_fn)(const char *name, const char *why, void *context);

/* Calls f for each device name of each registered driver on this machine:
 * the host, memory devices MEM:0 and MEM:1, and each device a driver finds
 * (or could not reach, with the reason).  Opens nothing.  RIG_EINVAL if f
 * is NULL. */
rig_status_t rig_probe(rig_probe_fn f, void *context);

/* Opens the memory device named name (rig_open with the memory driver): a
 * device whose memory is its own, in host memory this process addresses,
 * with a timeline of its own; it runs fills and copies before submit
 * returns, loads no code and times no work.  It stands for a GPU in
 * tests.  Answers as rig_open. */
rig_status_t rig_memory_device(const char *name, rig_device_t **out);

/* Closes d: waits for the work submitted on d before the call, loses d with
 * the reason "closed", and returns once its driver's stop has returned.
 * From then on uses of d answer RIG_ELOST.  Every caller that opened d's
 * name shares d, so close ends it for all of them.  On a d already lost it
 * only runs the owed stop (or waits for the close or open that runs it) and
 * keeps d's reason.  RIG_EINVAL if d is NULL or the host. */
rig_status_t rig_close(rig_device_t *d);

/* Properties.  Set when d opens, kept once d is lost; they take no lock and
 * answer for any device, lost or not.  NULL d answers NULL/0/false, as does
 * a d whose record rig released (Handles), which sets rig_last_error. */

/* d's name: its opener's name ("CPU", "MEM:0"). */
const char *rig_device_name(const rig_device_t *d);
/* The code d's processor runs: for the host the highest x86-64 psABI level
 * its CPU has and its system enables ("x86-64" ... "x86-64-v4"), or "arm64"
 * with "+feature"s; "memory" for a memory device; the driver's name of the
 * processor ("sm_90", "gfx1100") for a driver's device. */
const char *rig_device_arch(const rig_device_t *d);
/* "x86_64" for an x86-64 level, "arm64" for an arm64 arch, else the arch. */
const char *rig_device_instruction_set(const rig_device_t *d);
/* The bus address of d's PCI function ("0000:03:00.0"), or NULL where d has
 * none (host, memory and io devices). */
const char *rig_device_bus(const rig_device_t *d);
/* True iff d's work is this process's code: host and memory devices. */
bool rig_device_runs_on_host(const rig_device_t *d);
/* The power of two the first byte of every non-empty buffer
 * rig_buffer_create makes on d starts on: 16 for host, 64 for a memory
 * device. */
int64_t rig_device_alignment(const rig_device_t *d);
/* The bytes of d's last-level cache, or 0 where it is not known. */
int64_t rig_device_cache_bytes(const rig_device_t *d);
/* The record d's driver declares under key, or NULL if none. */
const void *rig_device_capability(const rig_device_t *d, const char *key);
/* True iff a and b are the same device.  A reopened name is another one. */
bool rig_device_equal(const rig_device_t *a, const rig_device_t *b);

/* True iff d's work can address other's own memory through a borrow on d:
 * a device reaches its own memory; the host reaches a memory device's; a
 * device whose driver maps host memory (a memory device's does) reaches the
 * host's and every memory device's; a device reaches another device of its
 * driver that it maps as a peer.  Takes no lock. */
bool rig_reaches(const rig_device_t *d, const rig_device_t *other);

/* The last value assigned on d's timeline, or before any the value its
 * timeline started after (0 in a fresh slot).  Never decreases.  Takes no
 * lock. */
uint64_t rig_submitted(const rig_device_t *d);

/* The last value d has reported: reached, with the writes of its work
 * visible to the host, while d is live.  On a lost d it may move on to
 * dropped values; where d's driver keeps a word of its own it is read only
 * once d's stop has returned, and the last value read is answered before.
 * Commits nothing and waits for nothing.  RIG_ELOST if reading the value
 * through d's driver loses d (as for a device of another machine). */
rig_status_t rig_signaled(rig_device_t *d, uint64_t *out);

/* The reason d is lost ("closed", "no progress for 5000 ms", ...; a proxy's, once its machine is
 * lost: PROXY-07), or NULL while it is live.  Never waits.  The string lives as long as d.
 * For a d whose record rig released (Handles): "the device was closed and its
 * record retired". */
const char *rig_lost(const rig_device_t *d);

/* ------------------------------------------------------------------------ */
/* Budgets                                                                   */

/* d's budget: the most bytes it holds at one time of the memory that counts
 * in it (live buffers, loaded code and its cache), each allocation by whole
 * words.  INT64_MAX for the host at start.  Takes no lock. */
int64_t rig_budget(const rig_device_t *d);
/* The bytes d holds now of the memory that counts in its budget.  Pinned
 * memory counts in the host's.  Takes no lock. */
int64_t rig_allocated(const rig_device_t *d);
/* Sets d's budget to n, then frees cached memory until d holds at most n
 * bytes or its cache is empty; never frees a live buffer.  RIG_EINVAL if
 * n < 0. */
rig_status_t rig_set_budget(rig_device_t *d, int64_t n);
/* Returns d's staging memory that no copy holds, moves d's collected memory
 * whose work is done, and returns d's cached memory to its driver. */
rig_status_t rig_free_cache(rig_device_t *d);
/* The most bytes of memory d's cache keeps for reuse: INT64_MAX, no bound
 * but d's budget, unless d's driver states less or rig_set_cache_limit set
 * it; 0 for NULL.  Takes no lock. */
int64_t rig_cache_limit(const rig_device_t *d);
/* Sets d's cache limit to n (bytes), moves d's collected memory whose work
 * is done, then returns cached memory to d's driver until d's cache holds
 * at most n bytes; never frees a live buffer.  From then on, collected
 * memory whose work is done and that would take d's cache past n skips
 * the cache and returns to the driver, as memory does that finishes
 * waiting while d holds more than its budget.  The host keeps its own
 * bounds beside it.  RIG_EINVAL if d is NULL or n < 0. */
rig_status_t rig_set_cache_limit(rig_device_t *d, int64_t n);

/* ------------------------------------------------------------------------ */
/* Points                                                                    */

/* A device's slot together with one of its values.  Plain data: copy it
 * freely; it answers rig_point_wait and rig_point_reached for good. */
typedef struct rig_point {
  uint64_t bits;
} rig_point_t;

/* The last value a point holds: 2^47 - 1. */
#define RIG_POINT_VALUE_MAX ((UINT64_C(1) << 47) - 1)

/* The device the point names, until a later device takes its slot or its
 * retired record is released (Handles): NULL from then on.  Takes no lock
 * for a point of its slot's latest device (the one open there, or the last
 * to leave it), and rig's registry lock for any other. */
rig_device_t *rig_point_device(rig_point_t p);
/* The point's value.  Takes no lock. */
uint64_t rig_point_value(rig_point_t p);
/* The point (d, value); value must be at most RIG_POINT_VALUE_MAX. */
rig_point_t rig_point_make(const rig_device_t *d, uint64_t value);

/* Returns once p is reached, committing its work first.  Host code after it
 * follows p's work.  Watches p's device and every device its queue waits
 * on for a value not yet reached, directly or along a chain of such waits:
 * checks each one's hang bound (a device whose progress stands still past
 * it is lost with "no progress for n ms") and asks its driver for a fault
 * (the device is lost with the driver's reason), so a loss upstream
 * spreads to p's device ("NAME lost") within the least of their bounds.
 * RIG_ELOST if p's device is lost and never reached p; RIG_EINVAL if p's
 * value was never submitted; RIG_EINTR if the thread's interrupt flag rose
 * (rig_set_interrupt_flag). */
rig_status_t rig_point_wait(rig_point_t p);
/* *out is true iff p is reached, in which case host code after it follows
 * p's work; otherwise it commits p's work, so a loop on it ends once the
 * work runs.  Checks no hang clock.  RIG_ELOST if p's device is lost and
 * never reached p: such a point stays unreached for good; RIG_EINVAL if
 * p's value was never submitted.  Any error leaves *out false. */
rig_status_t rig_point_reached(rig_point_t p, bool *out);

/* ------------------------------------------------------------------------ */
/* Buffers                                                                   */

/* The kinds of a device's memory that rig_buffer_create allocates. */
typedef enum rig_memory {
  RIG_MEMORY_DEVICE = 0, /* the device's own memory                     */
  RIG_MEMORY_PINNED = 1, /* page-locked host memory the device addresses */
  RIG_MEMORY_MAPPED = 2, /* the device's memory in a host-visible window */
} rig_memory_t;

/* What a buffer admits; what a host access waits for. */
typedef enum rig_access {
  RIG_ACCESS_READ = 1,
  RIG_ACCESS_READ_WRITE = 3,
} rig_access_t;

/* The bytes of a word, the unit in which rig orders memory. */
#define RIG_WORD_BYTES 4
/* RIG_WORD_BYTES.  Takes no lock. */
int rig_word(void);

/* *out is a buffer of n new bytes of d's memory of kind memory, with
 * unspecified contents and empty stamps.  An empty buffer allocates
 * nothing.  A non-empty one starts on d's alignment and its memory runs on
 * to whole words.  A host buffer of at least 64 KiB and four pages starts
 * on a page; a smaller one of at least 128 bytes on 128 bytes.  Mapped
 * falls back to Pinned where d has no window, or to Device memory on a
 * device whose memory the host addresses, without freeing the cache.
 * RIG_EINVAL if n < 0, if memory is Pinned and the host addresses d's
 * memory, or d is NULL; RIG_ELOST if d is lost or faults; RIG_ENOMEM if d
 * cannot provide the bytes after reclamation. */
rig_status_t rig_buffer_create(rig_device_t *d, int64_t n, rig_memory_t memory,
                               rig_buffer_t **out);

/* *out is a new host buffer holding a copy of the n bytes at s. */
rig_status_t rig_buffer_of_bytes(const void *s, int64_t n, rig_buffer_t **out);

/* Called once when rig lets go of caller memory (rig_buffer_of_memory). */
typedef void (*rig_release_fn)(void *context);

/* *out is a buffer on the host over the caller's n bytes at p, without a
 * copy (the spec's of_bigarray).  rig calls release(context), if release is
 * not NULL, once no buffer over the memory remains.  The memory is outside
 * the claims; each call makes a new allocation with stamps of its own, even
 * over bytes another call wraps.  RIG_EINVAL if n < 0 or p is NULL with
 * n > 0. */
rig_status_t rig_buffer_of_memory(void *p, int64_t n, rig_release_fn release,
                                  void *context, rig_buffer_t **out);

/* *out is the length bytes of b from its byte first on, in b's memory and
 * on b's device.  Takes no lock.  RIG_EINVAL if b is dead, first or length
 * is negative, or the bytes do not lie inside b's. */
rig_status_t rig_buffer_view(rig_buffer_t *b, int64_t first, int64_t length,
                             rig_buffer_t **out);

/* *out is a buffer on d over b's bytes, without a copy, or NULL (with
 * RIG_OK) if d cannot map b's memory (rig_reaches) or its driver never maps
 * it; host memory off a page does not borrow on a driver's device.  *out
 * is a new reference to b itself when b is on d.  The borrow shares b's
 * memory, stamps and claims, and keeps it alive; the borrowing device's
 * mapping of the allocation is made by the first borrow that needs it and
 * shared by every live borrow on that device.  Empty memory borrows on
 * every device of its machine.  RIG_EINVAL if b is dead; RIG_ELOST if d is
 * lost or faults; RIG_ENOMEM if d's driver has no room for the mapping. */
rig_status_t rig_buffer_borrow(rig_device_t *d, rig_buffer_t *b,
                               rig_buffer_t **out);

/* Adds a reference to b; returns b, or NULL for a released b.  Takes no
 * lock. */
rig_buffer_t *rig_buffer_ref(rig_buffer_t *b);
/* Releases the caller's reference to b.  Once no buffer, borrow, view or
 * exported array over an allocation remains, the allocation is collected:
 * it waits for every point of its stamps, then enters its device's cache.
 * NULL is ignored. */
void rig_buffer_unref(rig_buffer_t *b);

/* Properties: they answer for every buffer, a dead one included, and take
 * no lock. */

/* The device b is on: the one create or borrow made it on, the host for
 * of_bytes and of_memory, the viewed buffer's for a view. */
rig_device_t *rig_buffer_device(const rig_buffer_t *b);
/* b's length in bytes. */
int64_t rig_buffer_bytes(const rig_buffer_t *b);
/* True iff b lies over memory that something other than b's device holds:
 * caller memory (of_memory) or another device's memory (borrow). */
bool rig_buffer_is_borrowed(const rig_buffer_t *b);
/* True iff b's bytes are all of its memory. */
bool rig_buffer_spans(const rig_buffer_t *b);
/* True iff b's allocation took memory new from its device's driver that
 * reads zero (pages the system gave it: a host or memory device's blocks
 * of at least 64 KiB and four pages), not memory from rig's cache or an
 * allocator's reuse, which holds what an earlier buffer's users wrote.  A
 * fact of the allocation's making, which later writes do not change; its
 * views and borrows answer the same.  False for caller, io and imported
 * memory, and for the memory of drivers that cannot say (CUDA, ROCr). */
bool rig_buffer_fresh(const rig_buffer_t *b);
/* The access b admits, which its views and borrows admit too. */
rig_access_t rig_buffer_access(const rig_buffer_t *b);
/* The reason b is dead, "released" for a released handle, or NULL while
 * it is live. */
const char *rig_buffer_dead(const rig_buffer_t *b);
/* The host address of b's first byte where the host addresses b's memory
 * (host memory, a borrow on the host, a memory device's memory), else
 * NULL.  Valid while b lives. */
void *rig_buffer_host(const rig_buffer_t *b);
/* Where b's bytes lie: *offset is b's first byte in its allocation,
 * *allocation_bytes the allocation's length. */
void rig_buffer_span(const rig_buffer_t *b, int64_t *offset,
                     int64_t *allocation_bytes);

/* *out is true iff the address `at` bytes past b's first byte, in the
 * addresses of b's device's work, is a multiple of n: arithmetic, defined
 * for every at.  Handle-only memory answers from its offset in its
 * allocation for n up to its device's alignment.  RIG_EINVAL if b is dead,
 * is an io device's memory, n is not a positive power of two, or b is
 * handle-only and n exceeds that alignment. */
rig_status_t rig_buffer_aligned(const rig_buffer_t *b, int64_t at, int64_t n,
                                bool *out);

/* *handle is the driver's object for b's memory and *offset the byte of it
 * b starts at; 0 for an empty buffer create made on a driver's device.
 * RIG_EINVAL if b is dead, or is host memory or an io device's memory. */
rig_status_t rig_buffer_handle(const rig_buffer_t *b, uint64_t *handle,
                               int64_t *offset);

/* How another PCI function of the machine (a network adapter) reaches a
 * buffer's memory by DMA: rig_buffer_dma's answer. */
typedef enum rig_dma_kind {
  RIG_DMA_BUS = 1,    /* bus addresses, valid until the process exits   */
  RIG_DMA_DMABUF = 2, /* a dma-buf file descriptor the caller closes    */
} rig_dma_kind_t;

typedef struct rig_dma_range {
  uint64_t address; /* a multiple of 4096 */
  uint64_t bytes;   /* a multiple of 4096 */
} rig_dma_range_t;

typedef struct rig_dma {
  size_t size; /* sizeof(rig_dma_t) as the caller compiled it */
  rig_dma_kind_t kind;
  const rig_dma_range_t *ranges; /* RIG_DMA_BUS: in order, for the process's life */
  size_t range_count;
  int fd;          /* RIG_DMA_DMABUF: close-on-exec, the caller's to close */
  int64_t offset;  /* the allocation's first byte in the dma-buf */
  int64_t start;   /* b's first byte past the allocation's first byte */
} rig_dma_t;

/* Describes how the PCI function at bus address fn ("0000:41:00.0")
 * reaches the whole allocation b's memory lies in, as the driver of the
 * device whose memory it is answers (a borrow's answer is its memory's
 * owner's).  From then on the memory is outside the claims for good, also
 * where the driver cannot describe it, and the allocation never returns to
 * its device's cache.  No stamp records fn's accesses: the caller orders
 * them.  RIG_EOPEN with the driver's reason where it cannot; RIG_EINVAL if
 * b is dead or empty, is the host's, a memory device's or an io device's
 * memory, is held exclusive, or out->size is too small; RIG_ELOST if the
 * memory's device is lost. */
rig_status_t rig_buffer_dma(rig_buffer_t *b, const char *fn, rig_dma_t *out);

/* True iff a and b hold bytes of one word of one allocation, so rig orders
 * them as one.  Takes no lock. */
bool rig_buffer_overlaps(const rig_buffer_t *a, const rig_buffer_t *b);
/* True iff a and b hold a common byte of one allocation. */
bool rig_buffer_share_byte(const rig_buffer_t *a, const rig_buffer_t *b);

/* The same answer as rig_buffer_dead, under the name of the specification's
 * low-level C view. */
const char *rig_buffer_why(const rig_buffer_t *b);

/* ------------------------------------------------------------------------ */
/* Claims and early return                                                   */
/*                                                                           */
/* A claim records that something reads an allocation, so that a donation   */
/* (a function writing its result over an argument it no longer needs)      */
/* writes only memory that nothing else reads.  Host access, copies, blits  */
/* and fills hold a read claim for their duration.  Caller memory           */
/* (of_memory), exported memory and memory shared with rig_claim_share are  */
/* outside the claims: free and exclusive holds never take them.            */

/* The answers of rig_buffer_claim. */
typedef enum rig_claim {
  RIG_CLAIMED = 0,         /* claimed; the work the access follows is done    */
  RIG_CLAIM_WAIT = 1,      /* claimed; call rig_buffer_wait before the access */
  RIG_CLAIM_DEAD = 2,      /* the buffer is dead; nothing claimed             */
  RIG_CLAIM_EXCLUSIVE = 3, /* another holds the memory exclusive; nothing claimed */
  RIG_CLAIM_READ_ONLY = 4, /* a write of a buffer that admits only Read; nothing claimed */
  RIG_CLAIM_INVALID = 5,   /* b is NULL or access unknown; nothing claimed    */
} rig_claim_t;

/* Takes a read claim on b's memory for an access of kind access by C code
 * that uses rig_buffer_host's bytes; end it with rig_buffer_release.  While
 * it is held, rig_buffer_free of the memory is false.  A claim on a Read
 * access depends on every device's last write, one on Read_write on every
 * use (Memory after a loss).  Takes no lock. */
rig_claim_t rig_buffer_claim(rig_buffer_t *b, rig_access_t access);
/* Ends a claim rig_buffer_claim took on b's memory, and no hold; nothing
 * where no such claim is held.  Takes no lock. */
void rig_buffer_release(rig_buffer_t *b);

/* Read claims, holds (rig_claim_hold) and the holds of rig_claim_begin are
 * counted apart: each call ends only a claim of its own kind, and
 * rig_buffer_free is false while any of them is held. */

/* Begins a hold of b's memory (the spec's Claim.with_): *exclusive is true
 * iff b spans its memory (rig_buffer_spans) and the hold is the only claim
 * on it, in which case every other claim (rig_buffer_claim, rig_claim_begin,
 * rig_claim_hold, rig_claim_share, host access, copies, fills), borrows on
 * other devices, submissions and submits of the memory are refused
 * (RIG_EINVAL) until rig_claim_consume or rig_claim_end.  The hold depends
 * on what a write would (RIG_ELOST where Memory after a loss says).
 * RIG_EINVAL if b is dead or its memory is outside the claims. */
rig_status_t rig_claim_begin(rig_buffer_t *b, bool *exclusive);
/* Ends a hold that rig_claim_begin took on b's memory.  RIG_EINVAL if none
 * is held. */
rig_status_t rig_claim_end(rig_buffer_t *b);
/* Under a hold of rig_claim_begin of b's memory, makes every buffer made
 * over b's bytes until now dead with the reason why: every buffer over the
 * memory where b spans it, else those whose bytes lie inside b's, so the
 * buffers over the other bytes live on.  *out is a new buffer over b's
 * bytes that admits only Read unless the hold was exclusive.  The memory
 * stays held, no longer exclusive.  RIG_EINVAL if b is dead or no hold of
 * rig_claim_begin holds the memory. */
rig_status_t rig_claim_consume(rig_buffer_t *b, const char *why, rig_buffer_t **out);
/* Holds b's memory as a prepared submission (its fixed buffers, until it
 * is released) and a submit through a borrow do (the spec's Claim.hold):
 * a claim that takes nothing exclusive and waits for nothing, which keeps
 * rig_buffer_free false and, through a borrow, rig_buffer_unborrow false
 * until rig_claim_unhold.  RIG_EINVAL if b is dead or held exclusive. */
rig_status_t rig_claim_hold(rig_buffer_t *b);
/* Ends a hold rig_claim_hold took on b's memory.  RIG_EINVAL if none is
 * held. */
rig_status_t rig_claim_unhold(rig_buffer_t *b);
/* Takes b's memory out of the claims for good (the spec's Claim.share).
 * RIG_EINVAL if b is dead or held exclusive. */
rig_status_t rig_claim_share(rig_buffer_t *b);

/* Tries to return b's memory early.  *freed is false, changing nothing, if
 * b does not span its memory, a claim holds it, or it is outside the
 * claims.  Otherwise the memory is consumed with why ("freed" if NULL), so
 * every buffer over it is dead, it returns once the work using it is done,
 * and *freed is true.  RIG_EINVAL if b is dead. */
rig_status_t rig_buffer_free(rig_buffer_t *b, const char *why, bool *freed);
/* Tries to end the borrow b early.  *ended is false, changing nothing,
 * while a claim through the borrow or one of its views keeps it.
 * Otherwise every buffer of the borrow is dead with why ("unborrowed" if
 * NULL), the memory and its other buffers live on, and the borrow's hold
 * of its mapping ends.  RIG_EINVAL if b is dead, is not a borrow on a
 * device other than its memory's owner, or is a view of part of one. */
rig_status_t rig_buffer_unborrow(rig_buffer_t *b, const char *why, bool *ended);

/* ------------------------------------------------------------------------ */
/* Failure of the process and values per device                             */

/* Fails the process: every device but the host that is not lost is lost
 * with why, and every open that starts afterwards answers RIG_EOPEN with
 * why.  Runs no stop.  Only the first call acts.  Takes no lock. */
rig_status_t rig_fail(const char *why);
/* The reason of the process's failure, or NULL.  Takes no lock. */
const char *rig_failure(void);

typedef struct rig_local_key rig_local_key_t;
/* Makes a key's value for device d; NULL is a value like any other. */
typedef void *(*rig_local_init_fn)(rig_device_t *d, void *context);
/* Drops a key's value once its device's stop has returned. */
typedef void (*rig_local_drop_fn)(void *value, void *context);

/* A new key whose value on a device init makes at the first rig_local_get
 * on that device; drop (if not NULL) drops it once the device's driver's
 * stop has returned, before the close that ran the stop returns.  Keys
 * live for the process.  NULL if init is NULL.  Takes no lock. */
rig_local_key_t *rig_local_new_key(rig_local_init_fn init, rig_local_drop_fn drop, void *context);
/* *out is key's value on d, made by init at the first get on d: init runs
 * once per device, and a get while another thread's init of the key on d
 * runs waits for that init and answers its value.  A reopened name is a
 * new device with values of its own.  RIG_ELOST if d is lost and the value
 * was never made; RIG_EINVAL, as a call made inside a lock, for a get of
 * the key on d from inside its own init there (or from an init that init
 * waits for), where the value is not made yet. */
rig_status_t rig_local_get(rig_local_key_t *key, rig_device_t *d, void **out);

/* ------------------------------------------------------------------------ */
/* Host access                                                               */

/* The function a host access calls on the bytes: n bytes at bytes.  A
 * non-zero return ends the access with RIG_ECALLBACK, the value readable
 * with rig_error_code. */
typedef int (*rig_access_fn)(void *bytes, int64_t n, void *context);

/* Calls f on b's bytes in place, once every device's last write of b's
 * memory is done, holding a read claim on the memory until f returns.  f
 * must not write the bytes nor keep them.  Takes no value and adds no
 * point.  An empty buffer gives an empty range whatever its memory.
 * RIG_EINVAL if b is dead, its length is not a multiple of elem_size, the
 * host does not address its bytes, they do not start on a multiple of
 * elem_size, or a claim holds the memory exclusive; RIG_ELOST where Memory
 * after a loss says. */
rig_status_t rig_buffer_read(rig_buffer_t *b, int64_t elem_size, rig_access_fn f,
                             void *context);
/* As rig_buffer_read, once every use of b's memory is done; f may write
 * the bytes, and work submitted after the call returns sees its writes.
 * RIG_EINVAL also if b admits only Read. */
rig_status_t rig_buffer_write(rig_buffer_t *b, int64_t elem_size,
                              rig_access_fn f, void *context);

/* Returns once the work a host access of kind access must follow is done:
 * for Read every device's last write of b's memory, for Read_write every
 * use of it.  Takes no claim.  Does not wait for unordered work.
 * RIG_EINVAL if b is dead; RIG_ELOST where Memory after a loss says, before
 * it waits on any device if the loss came first; RIG_EINTR on interrupt. */
rig_status_t rig_buffer_wait(rig_buffer_t *b, rig_access_t access);
/* *out is true iff rig_buffer_wait would not block; otherwise commits that
 * work.  Errors as rig_buffer_wait. */
rig_status_t rig_buffer_reached(rig_buffer_t *b, rig_access_t access,
                                bool *out);

/* *out is b's bytes for good, once every use of b's memory is done, for
 * code that keeps them.  The array keeps the memory alive until released
 * (rig_export_unref); from then on the memory is outside the claims, and
 * the caller orders access through the array.  RIG_EINVAL as
 * rig_buffer_write (but for Read buffers), and if b's memory is not the
 * host's (made by create on the host, of_bytes or of_memory). */
rig_status_t rig_buffer_export(rig_buffer_t *b, int64_t elem_size,
                               rig_export_t **out);
/* The exported bytes; *n (if not NULL) receives their length.  Takes no
 * lock. */
void *rig_export_bytes(const rig_export_t *e, int64_t *n);
/* Releases an exported array.  NULL is ignored. */
void rig_export_unref(rig_export_t *e);

/* ------------------------------------------------------------------------ */
/* Copying                                                                   */

/* rows rows of width bytes; row i starts at src_offset + i * src_pitch in
 * the source and dst_offset + i * dst_pitch in the destination.  A box
 * fits when its fields are non-negative, each pitch is at least width and,
 * if it has bytes, its last row ends within each side (computed without
 * overflow). */
typedef struct rig_box {
  int64_t src_offset;
  int64_t dst_offset;
  int64_t width;
  int64_t rows;
  int64_t src_pitch;
  int64_t dst_pitch;
} rig_box_t;

/* The box of one row of n bytes at src_offset and dst_offset, pitches n. */
rig_box_t rig_row(int64_t src_offset, int64_t dst_offset, int64_t n);

/* Copies each box's bytes from src into dst, box after box (a byte two
 * boxes write holds the later box's), ordered as work that reads src and
 * writes dst, after the points of waits (nwaits of them, waits may be NULL
 * when nwaits is 0).  *out is a point reached once every byte is there.
 * Where the host addresses both sides it copies before returning and *out
 * is a reached host point; where a device copies directly the call returns
 * once the work is queued; through staging memory, once the host's
 * transfers are done.  Holds a read claim on both sides until it returns.
 * RIG_EINVAL if a side is dead or NULL, they share a byte, a box does not
 * fit, dst admits only Read, a side is held exclusive, or no device can
 * copy between the sides; RIG_ELOST if a device that runs a transfer is
 * lost, or a point of waits is a lost device's that it never reached;
 * RIG_ENOMEM if staging memory cannot be had. */
rig_status_t rig_buffer_submit_copy(rig_buffer_t *src, rig_buffer_t *dst,
                                    const rig_box_t *boxes, size_t nboxes,
                                    const rig_point_t *waits, size_t nwaits,
                                    rig_point_t *out);
/* Copies src's bytes into dst and returns once they are there.  RIG_EINVAL
 * also if the lengths differ; otherwise as rig_buffer_submit_copy, and
 * RIG_ELOST if the copy is lost during the wait. */
rig_status_t rig_buffer_copy(rig_buffer_t *src, rig_buffer_t *dst);

/* Sets every byte of b to c after the points of waits; *out is reached once
 * they are set.  The host sets them where it addresses b; otherwise the
 * copy engine of b's device, reading no memory.  RIG_EINVAL if b is dead
 * or NULL, admits only Read, is held exclusive, or has bytes that neither
 * the host nor a device can set; RIG_ELOST as rig_buffer_submit_copy. */
rig_status_t rig_buffer_submit_fill(rig_buffer_t *b, uint8_t c,
                                    const rig_point_t *waits, size_t nwaits,
                                    rig_point_t *out);
/* Sets every byte of b to c and returns once they are set. */
rig_status_t rig_buffer_fill(rig_buffer_t *b, uint8_t c);

/* Copies the n bytes of s (of length s_len) from s_first into b from its
 * byte b_first, and returns once they are there.  RIG_EINVAL if a range is
 * not valid, b is dead or admits only Read; otherwise as rig_buffer_copy. */
rig_status_t rig_buffer_blit_from_bytes(const void *s, int64_t s_len,
                                        int64_t s_first, rig_buffer_t *b,
                                        int64_t b_first, int64_t n);
/* Copies the n bytes of b from its byte b_first into s (of length s_len)
 * from s_first, and returns once they are there.  RIG_EINVAL if a range is
 * not valid or b is dead; otherwise as rig_buffer_copy. */
rig_status_t rig_buffer_blit_to_bytes(rig_buffer_t *b, int64_t b_first,
                                      void *s, int64_t s_len, int64_t s_first,
                                      int64_t n);

/* ------------------------------------------------------------------------ */
/* Running work: images, submissions, runs                                   */
/*                                                                           */
/* A device runs code of an image loaded on it.  A submission describes     */
/* work for one device once: parts that launch functions, copy, fill and    */
/* write words, over slots that each submit fills with a buffer.  A run     */
/* holds one submit's grids and parameters; rig_submit runs it and frees    */
/* it.                                                                       */

typedef struct rig_image rig_image_t;
typedef struct rig_function rig_function_t;
typedef struct rig_submission rig_submission_t;
typedef struct rig_run rig_run_t;

/* Loads the n bytes of code at bytes on d, assigning a value on d's
 * timeline for work d runs.  On the host the bytes are a relocatable ELF
 * object for the host's machine, linked into executable memory once
 * (Linking: sections at their alignment, the relocations of Relocations,
 * undefined symbols from the process's global scope through stubs, memory
 * never writable and executable at once); a CUDA device takes a cubin, a
 * fatbin or PTX.  The image lives while a reference to it, a submission
 * that launches its functions or work that runs them remains.  Its code
 * counts in d's budget (rig_allocated) until it is unloaded: the pages
 * the link mapped on the host and a sim device, the binary's bytes on a
 * GPU, whose driver reports no size of a loaded module, and on a proxy
 * (whose service counts the code its own device holds).
 * RIG_EIMAGE, with the reason, if d refuses the bytes, as a memory device
 * refuses all; RIG_ENOMEM, with the code's bytes, if d's budget has no
 * room for the code after the rounds of reclamation; RIG_EINVAL if d or
 * out is NULL, n < 0, bytes is NULL with n > 0, or the call is made inside
 * a lock; RIG_ELOST if d is lost or a driver error loses it. */
rig_status_t rig_image_load(rig_device_t *d, const void *bytes, int64_t n,
                            rig_image_t **out);
/* One more reference to i; returns i. */
rig_image_t *rig_image_ref(rig_image_t *i);
/* Drops a reference; the last one unloads the image once no work runs
 * it.  NULL is ignored. */
void rig_image_unref(rig_image_t *i);
/* The device i was loaded on. */
rig_device_t *rig_image_device(const rig_image_t *i);
/* Starts making what a launch of i's function name needs, without waiting,
 * so that several functions are made at once; reports nothing, failures
 * included: the next rig_image_resolve of name answers them.  RIG_EINVAL
 * if i or name is NULL. */
rig_status_t rig_image_prepare(rig_image_t *i, const char *name);
/* *out is i's function name, ready to launch, or NULL if i has none.  On
 * the host a function is a named symbol of an executable section.  The
 * function lives as long as i.  RIG_EINVAL if the device cannot run the
 * function (the device serves later calls); RIG_ENOMEM after the rounds of
 * reclamation if the device has no memory for what its launches need;
 * RIG_ELOST if i's device is lost or a driver error loses it. */
rig_status_t rig_image_resolve(rig_image_t *i, const char *name,
                               rig_function_t **out);
/* f's name, its image, and the threads a group of its launches may hold
 * at most (INT64_MAX where the device states no bound). */
const char *rig_function_name(const rig_function_t *f);
rig_image_t *rig_function_image(const rig_function_t *f);
int64_t rig_function_max_threads(const rig_function_t *f);

/* Memory a part uses: the buffer a submit passes as slot, or, where fixed
 * is not NULL, that buffer of the submission's own (its fixed memory),
 * which the submission holds a reference to. */
typedef struct rig_operand {
  uint32_t slot;
  rig_buffer_t *fixed;
} rig_operand_t;

typedef enum rig_ref_kind {
  RIG_REF_READ = 1,       /* the work reads the memory                       */
  RIG_REF_WRITE = 2,      /* the work writes it                              */
  RIG_REF_READ_WRITE = 3, /* both                                            */
  /* The work uses the memory as access says, ordered by nothing beyond its
   * device's order, and no later work or host access follows it (Order). */
  RIG_REF_UNORDERED = 4,
  RIG_REF_ENTRY = 5,      /* the address of the function entry             */
} rig_ref_kind_t;

/* A ref of a launch: the 8 bytes at byte at of the launch's parameters
 * hold, at each submit, the address of the memory it names for the
 * device's work (a host address on the host), or of the function entry. */
typedef struct rig_ref {
  rig_ref_kind_t kind;
  rig_operand_t memory;        /* all kinds but RIG_REF_ENTRY */
  int64_t at;
  rig_access_t access;         /* RIG_REF_UNORDERED */
  const rig_function_t *entry; /* RIG_REF_ENTRY */
} rig_ref_t;

typedef enum rig_part_kind {
  RIG_LAUNCH = 1, /* runs a function over a grid, on the compute queue    */
  RIG_COPY = 2,   /* copies src's bytes into dst, which has src's length   */
  RIG_FILL = 3,   /* sets dst's bytes to the run's fill value              */
  RIG_WORDS = 4,  /* writes 64-bit words in order, after every earlier part */
} rig_part_kind_t;

/* A word a words part writes: value into the 8 bytes at offset of memory. */
typedef struct rig_word_write {
  rig_operand_t memory;
  int64_t offset;
  uint64_t value;
} rig_word_write_t;

/* One part of a submission.  A device places its launches on its compute
 * queue, its copies and fills on its copy engine where it has one (else
 * the compute queue), and its words on its compute queue (else the copy
 * engine).  The host runs launches alone (its only queue is COMPUTE:0). */
typedef struct rig_part {
  rig_part_kind_t kind;
  union {
    struct {
      const rig_function_t *function;
      const rig_ref_t *refs;
      size_t ref_count;
      int64_t params; /* bytes of parameters */
    } launch;
    struct {
      rig_operand_t src, dst;
    } copy;
    struct {
      rig_operand_t dst;
      uint8_t value; /* the fill value a run starts with */
    } fill;
    struct {
      const rig_word_write_t *writes;
      size_t count;
    } words;
    uint64_t reserved[8];
  } u;
} rig_part_t;

typedef struct rig_submission_options {
  size_t size; /* sizeof(rig_submission_options_t) */
  /* Called once with keep_context once the submission is released and the
   * work of its last submit is done; on a lost device, once it has stopped
   * (the values a submission keeps). */
  rig_release_fn keep;
  void *keep_context;
} rig_submission_options_t;

/* Makes a submission of the n parts on d (opts may be NULL).  Within one
 * submit, a part follows each earlier part that may share memory with it
 * where one of the two writes; a words part follows every earlier part,
 * and later parts on its queue follow it.  The submission holds its
 * images and fixed buffers until it is released and its last work is
 * done.  RIG_EINVAL, with a message, unless the submission is valid: d
 * runs submitted work and has a queue for each part; its images are live
 * (loaded on d, which has not been closed); its fixed buffers are live,
 * held exclusive by no hold, on d (a copy's may be memory d reaches) and
 * admit Write where a part writes them; every slot below the highest is
 * named, none both by a RIG_REF_UNORDERED ref and by an ordered use; refs
 * lie inside their launch's parameters, 8 bytes each; and its launches and
 * fills fit a run: 2^31 - 1 bytes, each counting 16 bytes plus its
 * parameters rounded up to a multiple of 16.  RIG_ELOST if d is lost. */
rig_status_t rig_submission_make(rig_device_t *d, const rig_part_t *parts,
                                 size_t n, const rig_submission_options_t *opts,
                                 rig_submission_t **out);
rig_submission_t *rig_submission_ref(rig_submission_t *s);
/* Drops a reference; the last one releases s, whose memory and keep
 * return once the work of its last submit is done.  NULL is ignored. */
void rig_submission_unref(rig_submission_t *s);
/* The slots s's submits fill: one more than the highest slot it names. */
size_t rig_submission_slots(const rig_submission_t *s);
/* The block of part's grid and parameters (a launch) or fill value (a
 * fill) in a run of s, or -1 if the part has none or s has no such part. */
int64_t rig_submission_block(const rig_submission_t *s, size_t part);
/* *out is a run of s taken by the calling thread: each launch's grid is
 * 0 x 0 x 0 groups of 0 x 0 x 0 threads with no shared memory and its
 * parameters are zero; each fill's value is its part's.  A run lives as
 * long as s; rig_submit frees it.  A submission without launches and
 * fills has one run, which holds no bytes: no take holds it, and each
 * take gives it.  RIG_EINVAL if s or out is NULL. */
rig_status_t rig_submission_take(rig_submission_t *s, rig_run_t **out);
/* The submission r is a run of. */
rig_submission_t *rig_run_submission(const rig_run_t *r);

/* Stores into block k of r.  Each answers RIG_EINVAL, storing nothing, if
 * r is NULL or taken by another thread, k is not a block of the kind the
 * setter stores, an axis or the bytes are negative, or the value's bytes
 * do not lie inside k's parameters.  Stores into a free run take it. */
rig_status_t rig_run_groups(rig_run_t *r, int64_t k, int64_t x, int64_t y, int64_t z);
rig_status_t rig_run_threads(rig_run_t *r, int64_t k, int64_t x, int64_t y, int64_t z);
rig_status_t rig_run_shared(rig_run_t *r, int64_t k, int64_t bytes);
rig_status_t rig_run_int8(rig_run_t *r, int64_t k, int64_t at, int8_t v);
rig_status_t rig_run_int16(rig_run_t *r, int64_t k, int64_t at, int16_t v);
rig_status_t rig_run_int32(rig_run_t *r, int64_t k, int64_t at, int32_t v);
rig_status_t rig_run_int64(rig_run_t *r, int64_t k, int64_t at, int64_t v);
rig_status_t rig_run_float32(rig_run_t *r, int64_t k, int64_t at, float v);
rig_status_t rig_run_float64(rig_run_t *r, int64_t k, int64_t at, double v);
rig_status_t rig_run_bytes(rig_run_t *r, int64_t k, int64_t at, const void *src, int64_t n);
rig_status_t rig_run_fill(rig_run_t *r, int64_t k, uint8_t value);

/* Runs the work of r's submission s once, with buffers[i] as slot i
 * (read once each), r's blocks, and after the points of waits besides
 * those its memory orders; *out (may be NULL) is its point (d, v), v one
 * more than d's submitted.  Where d's driver waits on other devices' words
 * its queue waits; otherwise submit waits on the host.  While d's queues
 * have no room it waits until d reaches one more value, holding no lock;
 * where they must grow it grows them first.  On the host the work is done
 * when submit returns.  Frees r, also when it answers an error.  RIG_EINVAL,
 * with a message, if r is taken by another thread or in another submit, a
 * launch has shared memory on the host, a zero axis, or more than 2^62
 * threads, or the submit is not valid: one buffer per slot; none dead or
 * held exclusive; each on d, or borrowed onto it, but a copy's, which may
 * be memory d reaches; none written through that admits only Read; each
 * copy's two buffers of one length and sharing no byte; no ref naming
 * handle-only memory, but on a device that patches refs itself (a proxy of
 * rigd's, whose service places the memory's address); and work the driver
 * can run.  RIG_ENOMEM if the
 * queues cannot grow; RIG_ELOST if d is lost before submit returns, its
 * driver fails to take the work, a point of waits is a lost device's that
 * it never reached, or v would pass 2^47 - 1 (which loses d). */
rig_status_t rig_submit(rig_run_t *r, rig_buffer_t *const *buffers, size_t nbuffers,
                        const rig_point_t *waits, size_t nwaits, rig_point_t *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* RIG_RIG_H */
