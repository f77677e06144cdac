/* The protocol between rigd and its clients' proxy drivers: the layout of the
 * shared segments, of the rings and of their entries (see the spec's
 * rig-remote-proxy.txt: the per-host service is its agent, with rings in
 * shared memory for its link).
 *
 * Both sides include this header, the client's proxy driver (C++) and rigd
 * (C++); it is plain C so that a client in another language can read it.  It
 * holds layout only: fixed-width fields in the host's byte order, each
 * segment's header first, every offset from the start of its segment.
 *
 * The handshake carries RIG_PROXY_VERSION; a side that reads another version
 * refuses the peer.  Change the version with any change to this file's
 * layout.
 *
 * Trust: a segment a client can write is read by rigd only through copies
 * (drivers/proxy/ring.hpp): rigd never reads a layout field back from shared
 * memory, and validates every entry and payload after copying it out. */
#ifndef RIG_PROXY_PROTOCOL_H
#define RIG_PROXY_PROTOCOL_H

#include <stdint.h>

#ifdef __cplusplus
#define RIG_PROXY_ALIGNAS(n) alignas(n)
#define RIG_PROXY_STATIC_ASSERT(c, why) static_assert(c, why)
extern "C" {
#else
#define RIG_PROXY_ALIGNAS(n) _Alignas(n)
#define RIG_PROXY_STATIC_ASSERT(c, why) _Static_assert(c, why)
#endif

#define RIG_PROXY_VERSION 9u

/* Words that two sides write sit on cache lines of their own, so that the
 * producer's and the consumer's stores do not contend for one line. */
#define RIG_PROXY_CACHE_LINE 64

/* The bytes of a rig_proxy_code's why. */
#define RIG_PROXY_WHY_BYTES_OF_CODE 512

/* The first word of each segment: which segment it is ("RIGx" in memory). */
#define RIG_PROXY_MAGIC_DEVICES 0x44474952u    /* "RIGD" */
#define RIG_PROXY_MAGIC_COMPLETION 0x43474952u /* "RIGC" */
#define RIG_PROXY_MAGIC_RING 0x52474952u       /* "RIGR" */

/* What every segment starts with. */
struct rig_proxy_segment_header {
  uint32_t magic;   /* RIG_PROXY_MAGIC_* */
  uint32_t version; /* RIG_PROXY_VERSION */
  uint64_t bytes;   /* the segment's size, as rigd made it */
};

/* One ring's control words, at the start of a cache line.  The producer
 * writes `tail`, the consumer `head`; both count entries from 0 and wrap
 * at 2^32, so tail - head (mod 2^32) is the number of entries written and
 * not yet consumed, never more than the ring's capacity.  An entry lives in
 * slot (counter & (capacity - 1)).
 *
 * `sleeping` is the consumer's needs-wakeup flag (IORING_SQ_NEED_WAKEUP's
 * role), a futex word: the consumer sets it to 1 before it sleeps on it, the
 * producer that publishes a tail and sees it 1 sets it to 0 and wakes the
 * consumer with FUTEX_WAKE.  A producer that sees it 0 makes no system
 * call. */
struct rig_proxy_ring_header {
  RIG_PROXY_ALIGNAS(RIG_PROXY_CACHE_LINE) uint32_t head;
  RIG_PROXY_ALIGNAS(RIG_PROXY_CACHE_LINE) uint32_t tail;
  RIG_PROXY_ALIGNAS(RIG_PROXY_CACHE_LINE) uint32_t sleeping;
};
RIG_PROXY_STATIC_ASSERT(sizeof(struct rig_proxy_ring_header) == 3 * RIG_PROXY_CACHE_LINE,
                        "each control word has a cache line of its own");

/* The requests a client's submission ring carries.  Each but a hand-over
 * rigd takes gets one completion, in the order of the ring: a hand-over is
 * answered only when rigd refuses it, so that a client hands work over
 * without a round trip.  rigd copies an entry's payload out before it
 * releases the entry's slot (moves the ring's head past it), and the
 * client reuses the payload's bytes only after that.  `device` is, for OPEN and
 * ALLOCATED, the served device's index in the handshake's list, and for the
 * others the proxy's index, which OPEN answered.  A handle names memory
 * rigd holds for the client: an ALLOC's, a MAP_PEER's, an IMPORT's or a
 * host arena's (rig_proxy_arena_request). */
enum rig_proxy_opcode {
  RIG_PROXY_OP_NOP = 0,       /* value: args[0]; a check of the rings */
  RIG_PROXY_OP_OPEN = 1,      /* a proxy of the served device whose values start after
                                 args[0]; value: its index, that of its timeline word in
                                 the completion segment, which holds args[0].  The
                                 proxy runs on the client's instance of the device, a
                                 device of rigd's for this client alone, opened with
                                 the payload's bytes (at most 4096, no NUL) as its
                                 rig_open configuration; its proxies share it while it
                                 is not lost.  RIG_EOPEN where the instance does not
                                 open, the live one has another configuration, or a
                                 policy or limit of rigd's refuses it; with the
                                 entry's flag RIG_PROXY_OPEN_WHY the payload is a
                                 rig_proxy_code, where rigd writes why, then the
                                 configuration */
  RIG_PROXY_OP_ALLOC = 2,     /* args[0] a rig_memory_t, args[1] the bytes; value: the
                                 handle; RIG_ENOMEM past the client's quota
                                 (quota_bytes) or its user's, why in a payload of
                                 a rig_proxy_code alone where it has one */
  RIG_PROXY_OP_FREE = 3,      /* args[0] a handle: rigd lets go of it, and rig frees
                                 the memory once no work handed over needs it */
  RIG_PROXY_OP_HANDOVER = 4,  /* args[0] the proxy's next value; the payload: a
                                 rig_proxy_handover.  No completion once rigd has
                                 taken it: the value is done when the proxy's word
                                 reaches it.  One rigd cannot run is answered with why
                                 (RIG_EINVAL where it is malformed) and marks the
                                 proxy's word lost: rigd runs no later one of it */
  RIG_PROXY_OP_MAP_PEER = 5,  /* args[0] a handle: value, a new handle over its memory
                                 for the proxy's device, or 0 where that device cannot
                                 map it */
  RIG_PROXY_OP_EXPORT = 6,    /* args[0] a handle, args[1] an offset, args[2] a length:
                                 value, a token by which any client of rigd imports
                                 those bytes while this client is connected, whose low
                                 RIG_PROXY_TOKEN_ROW_BITS bits name the handle's row of
                                 the shared-buffer table; RIG_ENOMEM where the table
                                 is full or past rigd's exports limit, why as
                                 ALLOC's */
  RIG_PROXY_OP_IMPORT = 7,    /* args[0] a token: value, a new handle over the exported
                                 bytes, detail their length; RIG_EINVAL for a token that
                                 names no export or another served device's memory;
                                 RIG_ENOMEM, why as ALLOC's, where the bytes pass
                                 the importer's quota, in which they count */
  RIG_PROXY_OP_ALLOCATED = 8, /* args[0] a rig_proxy_count: value, with
                                 RIG_PROXY_COUNT_ALLOCATED the bytes allocated on the
                                 served device and its live instances (their
                                 rig_allocated); with another, rigd's count of
                                 that over all its clients; for monitoring and
                                 tests */
  RIG_PROXY_OP_IMAGE_LOAD = 9, /* loads an image on the proxy's instance: the payload a
                                 rig_proxy_code, then the image's bytes; or, with
                                 args[0] a host arena's handle, the first args[1]
                                 bytes of that arena (a sealed memfd, for an image
                                 past the payload arena), the payload the
                                 rig_proxy_code alone.  value: the image's id;
                                 RIG_EIMAGE, why in the rig_proxy_code, where the
                                 device refuses the bytes or rigd loads no code of
                                 the device's (host_code, rigd(8)); RIG_ENOMEM, detail
                                 the bytes, past the client's quota */
  RIG_PROXY_OP_IMAGE_PREPARE = 10, /* args[0] an image's id, the payload a rig_proxy_code
                                     then a function's name (no NUL): rig_image_prepare
                                     of it; answers RIG_OK */
  RIG_PROXY_OP_IMAGE_ENTRY = 11, /* args[0] an image's id, the payload as PREPARE's:
                                   value, the id of the function, 0 where the image has
                                   none; detail, its rig_function_max_threads; flags
                                   RIG_PROXY_ENTRY_ADDRESS where an entry ref of it
                                   places an address.  RIG_EINVAL, why in the
                                   rig_proxy_code, where the device cannot run it;
                                   RIG_ENOMEM where it has no memory for it */
  RIG_PROXY_OP_IMAGE_UNLOAD = 12, /* args[0] an image's id: rigd lets go of it, and rig
                                    unloads it once no work handed over runs it */
  RIG_PROXY_OP_LOADED = 13,    /* value: the images rigd holds for its clients on the
                                 served device's instances, detail their bytes, for
                                 monitoring and tests */
  RIG_PROXY_OP_FILL = 14       /* a hand-over, as HANDOVER's, of one fill part after no
                                 waits, carried in the entry itself and no payload:
                                 args[0] the proxy's next value, args[1] the handle of
                                 the memory it sets, args[2] the offset of its first
                                 byte, args[3] its bytes, flags the byte (at most
                                 255).  rigd reads no payload's lines for it */
};

/* The most values of one served device that a client's proxies have handed
 * over and that are not done yet.  A hand-over past them waits in its slot
 * of the submission ring, and the entries after it with it, until one of
 * those values is done: a client that hands over faster than the device
 * runs its work finds the ring full and waits, and rigd holds no more of
 * its values in memory, whatever the values carry. */
#define RIG_PROXY_VALUES_IN_FLIGHT 4096u

/* What ALLOCATED counts: rigd's limits' kinds (rigd(8)), over every
 * client, then the clients connected. */
enum rig_proxy_count {
  RIG_PROXY_COUNT_ALLOCATED = 0,
  RIG_PROXY_COUNT_DEVICE_BYTES = 1, /* allocated, imported and images' bytes */
  RIG_PROXY_COUNT_ARENA_BYTES = 2,  /* host arenas' bytes rigd maps */
  RIG_PROXY_COUNT_EXPORTS = 3,
  RIG_PROXY_COUNT_EXPORT_FDS = 4, /* descriptors rigd keeps for exports */
  RIG_PROXY_COUNT_PROXIES = 5,
  RIG_PROXY_COUNT_CLIENTS = 6,
  RIG_PROXY_COUNT_IMAGE_BYTES = 7, /* the bytes rigd copied of loaded images */
  RIG_PROXY_COUNT_HANDLES = 8      /* entries of the clients' tables */
};

/* The start of an image request's payload: where rigd writes why it
 * refuses the request, NUL-terminated, before it answers. */
struct rig_proxy_code {
  char why[RIG_PROXY_WHY_BYTES_OF_CODE];
};

/* IMAGE_ENTRY's completion flags. */
enum rig_proxy_entry_flag { RIG_PROXY_ENTRY_ADDRESS = 1 };

/* An OPEN entry's flags: its payload starts with a rig_proxy_code. */
enum rig_proxy_open_flag { RIG_PROXY_OPEN_WHY = 1 };

/* A launch's parameters are this many bytes at most. */
#define RIG_PROXY_MAX_PARAM_BYTES 32768u

/* A hand-over's payload: the header, then wait_count waits, then
 * part_count parts, which the served device runs in that order after the
 * waits. */
struct rig_proxy_handover {
  uint32_t wait_count;
  uint32_t part_count;
};

/* The work waits for the proxy's value, a proxy of the same client. */
struct rig_proxy_wait {
  uint32_t proxy;
  uint32_t reserved; /* zero */
  uint64_t value;
};

enum rig_proxy_part_kind {
  RIG_PROXY_PART_COPY = 1, /* rows of width bytes from src to dst */
  RIG_PROXY_PART_FILL = 2, /* width * rows bytes of dst, packed, set to value */
  RIG_PROXY_PART_WORDS = 3, /* a words part (rig's RIG_WORDS), only on a proxy
                               of the machine's host: its rows writes follow */
  RIG_PROXY_PART_WORD = 4,  /* a write of a words part: word into the 8 bytes
                               at dst_offset of dst */
  RIG_PROXY_PART_LAUNCH = 5, /* a launch (rig_proxy_launch): its refs and its
                                parameters' slots follow */
  RIG_PROXY_PART_REF = 6     /* a ref of a launch (rig_proxy_ref) */
};

/* One part: src and dst are handles, offsets are from the start of their
 * memory; rows rows of width bytes, each pitch bytes after the last on its
 * side.  A fill uses dst, dst_offset, width and rows (pitches are width).
 * A words part of n writes is a WORDS part with rows n, then n WORD parts,
 * each with dst, dst_offset and word.  Fields a kind does not use are zero. */
struct rig_proxy_part {
  uint32_t kind;  /* enum rig_proxy_part_kind */
  uint32_t value; /* a fill's byte */
  union {
    uint64_t src;  /* COPY: the handle it reads */
    uint64_t word; /* WORD: the 64 bits it writes */
  };
  uint64_t src_offset;
  uint64_t dst;
  uint64_t dst_offset;
  uint64_t width;
  uint64_t rows;
  uint64_t src_pitch;
  uint64_t dst_pitch;
};
RIG_PROXY_STATIC_ASSERT(sizeof(struct rig_proxy_part) == 72, "a part has no padding");

/* A launch part: it fills a part's slot, and is followed by ref_count REF
 * parts, then by its param_bytes parameter bytes, end to end in as many
 * slots as they need (the last one's tail zero).  The function is one of
 * the client's (IMAGE_ENTRY's id) on the proxy's instance; the grid is
 * groups[0] * groups[1] * groups[2] groups of threads[0] * threads[1] *
 * threads[2] threads, no axis zero, at most 2^62 threads, a group within
 * the function's max threads; shared_bytes of memory each group shares;
 * param_bytes at most RIG_PROXY_MAX_PARAM_BYTES. */
struct rig_proxy_launch {
  uint32_t kind; /* RIG_PROXY_PART_LAUNCH */
  uint32_t param_bytes;
  uint64_t function;
  uint64_t groups[3];
  uint64_t threads[3];
  uint32_t shared_bytes;
  uint32_t ref_count;
};
RIG_PROXY_STATIC_ASSERT(sizeof(struct rig_proxy_launch) == sizeof(struct rig_proxy_part),
                        "a launch fills a part's slot");

/* A ref of a launch: rigd writes into the 8 bytes at `at` of the
 * parameters, at + 8 within them, the address for the served device's work
 * of byte offset of the memory handle names, bytes long (the launch then
 * follows and precedes work on that memory as rig orders it, by kind);
 * or, for kind RIG_REF_ENTRY, the entry's address of function, a function
 * of the client's (handle, offset and bytes zero).  kind is a
 * rig_ref_kind_t, access a rig_access_t for RIG_REF_UNORDERED (zero for
 * the other kinds). */
struct rig_proxy_ref {
  uint32_t kind;   /* RIG_PROXY_PART_REF */
  uint32_t ref_kind;
  uint64_t handle;
  uint64_t offset;
  uint64_t bytes;
  uint64_t at;
  uint64_t function;
  uint32_t access;
  uint32_t reserved[5]; /* zero */
};
RIG_PROXY_STATIC_ASSERT(sizeof(struct rig_proxy_ref) == sizeof(struct rig_proxy_part),
                        "a ref fills a part's slot");

/* A submission ring's entry: one request.  Fields a request does not use
 * are zero. */
struct rig_proxy_entry {
  uint16_t opcode;         /* enum rig_proxy_opcode */
  uint16_t flags;          /* OPEN: rig_proxy_open_flag; FILL: the byte; otherwise zero */
  uint32_t device;         /* OPEN: a served device's index; otherwise a proxy's */
  uint64_t tag;            /* the client's, echoed in the completion */
  uint64_t args[4];        /* the request's arguments (enum rig_proxy_opcode) */
  uint32_t payload_offset; /* bytes from the payload arena's start */
  uint32_t payload_bytes;  /* zero where the request has no payload */
  uint64_t reserved;       /* zero */
};
RIG_PROXY_STATIC_ASSERT(sizeof(struct rig_proxy_entry) == 64, "an entry fills a cache line");

/* A completion ring's entry: the answer to one request. */
struct rig_proxy_completion {
  uint64_t tag;    /* the request's tag */
  int32_t status;  /* a rig_status_t: RIG_OK, or why the request failed */
  uint32_t flags;  /* zero: no flag is defined yet */
  uint64_t value;  /* the request's answer (enum rig_proxy_opcode) */
  uint64_t detail; /* RIG_ENOMEM: the bytes asked for; zero otherwise */
};
RIG_PROXY_STATIC_ASSERT(sizeof(struct rig_proxy_completion) == 32,
                        "two completions fill a cache line");

/* The ring segment: a client's submission ring and completion ring, then
 * its payload arena, which holds what does not fit an entry.  Each ring is
 * its header followed by its slots; every offset is a multiple of the cache
 * line, every capacity a power of two.  rigd writes this header once, as it
 * makes the segment, and keeps its own copy of the layout. */
struct rig_proxy_ring_segment {
  struct rig_proxy_segment_header segment; /* magic RIG_PROXY_MAGIC_RING */
  uint32_t submission_entries;             /* the submission ring's capacity */
  uint32_t completion_entries;             /* the completion ring's capacity */
  uint64_t submission_offset;              /* its rig_proxy_ring_header */
  uint64_t submission_slots;               /* its rig_proxy_entry slots */
  uint64_t completion_offset;              /* its rig_proxy_ring_header */
  uint64_t completion_slots;               /* its rig_proxy_completion slots */
  uint64_t payload_offset;                 /* the payload arena */
  uint64_t payload_bytes;                  /* the arena's size */
  uint64_t sleepers_offset;                /* a line whose first uint32_t counts the
                                              client's threads that sleep, or are about
                                              to, on its proxies' timeline words */
};

/* The handshake, on the Unix stream socket: the client sends a hello; rigd
 * answers a welcome, then, if it admits the client, one device record per
 * served device.  The welcome's message carries (SCM_RIGHTS) the fds of
 * the device segment, the client's completion segment and its ring
 * segment, in that order; a refusal carries none, and rigd closes the
 * connection after it. */
#define RIG_PROXY_MAGIC_HELLO 0x48474952u   /* "RIGH" */
#define RIG_PROXY_MAGIC_WELCOME 0x57474952u /* "RIGW" */
#define RIG_PROXY_SEGMENT_FDS 3
#define RIG_PROXY_WHY_BYTES 160
#define RIG_PROXY_NAME_BYTES 64

struct rig_proxy_hello {
  uint32_t magic;   /* RIG_PROXY_MAGIC_HELLO */
  uint32_t version; /* RIG_PROXY_VERSION */
};

struct rig_proxy_welcome {
  uint32_t magic;                /* RIG_PROXY_MAGIC_WELCOME */
  uint32_t version;              /* rigd's RIG_PROXY_VERSION */
  int32_t status;                /* RIG_OK, or RIG_EOPEN with why */
  uint32_t device_count;         /* the device records that follow */
  char why[RIG_PROXY_WHY_BYTES]; /* a refusal's reason, NUL-terminated */
};

/* A served device: what its proxies' facts take from it. */
struct rig_proxy_device_record {
  char name[RIG_PROXY_NAME_BYTES]; /* rigd's name of it, such as "SIM:0" */
  char arch[RIG_PROXY_NAME_BYTES]; /* its rig_device_arch */
  int64_t budget;                  /* its rig_budget when rigd opened it, or the
                                      client's quota where that is less */
  int64_t cache_bytes;             /* its rig_device_cache_bytes */
  int64_t alignment;               /* its rig_device_alignment */
  uint64_t reaches;                /* bit j set where it maps device j's Device
                                      memory (rig_reaches), for j < 64 */
  uint32_t flags;                  /* enum rig_proxy_device_flag */
  uint32_t reserved;               /* zero */
  int64_t cache_limit;             /* the most bytes of released memory a proxy
                                      of it keeps cached (its rig_cache_limit),
                                      as rigd keeps on the device: rigd's
                                      cache_limit_bytes */
};

enum rig_proxy_device_flag {
  /* The machine's host (named CPU): its proxies also run words parts. */
  RIG_PROXY_DEVICE_HOST = 1,
  /* The client's quota (quota_bytes) bounds the memory of its proxies of
   * every device together: rigd answers RIG_ENOMEM to an ALLOC past it. */
  RIG_PROXY_DEVICE_QUOTA = 2
};

/* The device segment: the served devices' progress words, in the order of
 * the handshake's records, each on a cache line of its own: word i counts
 * the values of all clients' proxies of device i that rigd has finished
 * (their instances' timelines together).  rigd adds to them (release
 * order) and clients map the segment read-only. */
struct rig_proxy_device_segment {
  struct rig_proxy_segment_header segment; /* magic RIG_PROXY_MAGIC_DEVICES */
  uint32_t device_count;
  uint32_t row_count;    /* rows of the shared-buffer table */
  uint64_t words_offset; /* word i at words_offset + i * RIG_PROXY_CACHE_LINE */
  uint64_t rows_offset;  /* row r at rows_offset + r * RIG_PROXY_CACHE_LINE */
};

/* The shared-buffer table, in the device segment: a row for the memory a
 * client exported (RIG_PROXY_OP_EXPORT), named by the low
 * RIG_PROXY_TOKEN_ROW_BITS bits of its tokens, and counting the work of
 * every process on it: taken, the hand-overs rigd has taken whose parts
 * name the exported handle or an import of it; done, how many of the first
 * of those are done (or failed).  rigd moves both up (release order), as it
 * takes a hand-over and as its work ends, and never back, also when the
 * row serves another export later.  A process that waits for the work
 * other processes handed over on the memory reads taken, then waits until
 * done reaches it: no round trip. */
#define RIG_PROXY_TOKEN_ROW_BITS 16
struct rig_proxy_shared_row {
  uint64_t taken;
  uint64_t done;
};

/* A client's completion segment: its proxies' timeline words, word i for
 * the proxy that the client's i-th open made, each a rig_proxy_word on
 * lines of its own; rigd raises them (release order) as the proxies' values complete,
 * and wakes futex waiters on the value's low 32 bits (its first four
 * bytes: the host is little-endian).  The client maps the segment
 * read-only. */
struct rig_proxy_completion_segment {
  struct rig_proxy_segment_header segment; /* magic RIG_PROXY_MAGIC_COMPLETION */
  uint32_t word_count;
  uint32_t reserved;
  uint64_t words_offset; /* word i at words_offset + i * RIG_PROXY_WORD_BYTES */
};

/* Waking a word's sleepers: a client thread that would sleep on a proxy's
 * word adds 1 to the ring segment's sleepers word, reads the word again and
 * sleeps only if it still holds what it saw, then takes its 1 back; rigd
 * stores a word's new value, then reads the sleepers word and calls
 * FUTEX_WAKE only if it is not 0.  All four accesses are sequentially
 * consistent, so one side sees the other's store: no system call while
 * nobody sleeps, and no sleeper left behind.  rigd trusts the count for
 * nothing else: a client that lies about it only delays its own waits. */

/* A proxy's word in the completion segment, two cache lines: the first
 * line's value moves as work completes, the why rigd writes once, before
 * it stores lost. */
#define RIG_PROXY_WORD_BYTES (2 * RIG_PROXY_CACHE_LINE)
struct rig_proxy_word {
  uint64_t value; /* the proxy's last value done; never decreases */
  uint32_t lost;  /* non-zero once rigd failed the proxy's work (release
                     order after why): the value then moves no more */
  uint32_t reserved;
  char why[RIG_PROXY_WORD_BYTES - 16]; /* once lost: why, NUL-terminated */
};
RIG_PROXY_STATIC_ASSERT(sizeof(struct rig_proxy_word) == RIG_PROXY_WORD_BYTES, "a word fills its lines");

/* After the handshake, the client's socket carries host arenas: the
 * client sends a request with a memfd of `bytes` bytes attached, on tmpfs
 * (not MFD_HUGETLB) and sealed against shrinking (F_SEAL_SHRINK), and rigd
 * answers with the handle by which copies name the arena's bytes.  rigd
 * lets go of the arena once the client frees the handle
 * (RIG_PROXY_OP_FREE) and no work needs it. */
#define RIG_PROXY_MAGIC_ARENA 0x41474952u /* "RIGA" */

struct rig_proxy_arena_request {
  uint32_t magic; /* RIG_PROXY_MAGIC_ARENA */
  uint32_t reserved;
  uint64_t bytes;
};

struct rig_proxy_arena_reply {
  uint32_t magic;  /* RIG_PROXY_MAGIC_ARENA */
  int32_t status;  /* RIG_OK, RIG_EINVAL for a memfd that is not as stated
                      (why says how), RIG_ENOMEM past a limit of rigd's
                      (arena_bytes) */
  uint64_t handle; /* the arena's handle */
  char why[RIG_PROXY_WHY_BYTES]; /* a refusal's reason, NUL-terminated */
};

/* The socket also carries exports as file descriptors.  With op
 * RIG_PROXY_FD_OF_EXPORT, a client asks for a descriptor naming token, an
 * export of its own (RIG_PROXY_OP_EXPORT), and rigd answers with it
 * attached: a sealed empty memfd that rigd keeps open while the export
 * lasts.  With op RIG_PROXY_EXPORT_OF_FD and such a descriptor attached
 * (token zero), any client asks for the token it names.  So the
 * descriptor, which processes pass as they pass any (SCM_RIGHTS, fork), is
 * a capability: a client that holds it learns the token.  rigd answers
 * RIG_EINVAL for a token that is not the client's export, a descriptor
 * that names no export (why saying so where it is no memfd), or an op of
 * neither kind. */
#define RIG_PROXY_MAGIC_EXPORT_FD 0x46474952u /* "RIGF" */

enum rig_proxy_fd_op { RIG_PROXY_FD_OF_EXPORT = 1, RIG_PROXY_EXPORT_OF_FD = 2 };

struct rig_proxy_fd_request {
  uint32_t magic; /* RIG_PROXY_MAGIC_EXPORT_FD */
  uint32_t op;    /* enum rig_proxy_fd_op */
  uint64_t token; /* RIG_PROXY_FD_OF_EXPORT: the export's token */
};

struct rig_proxy_fd_reply {
  uint32_t magic; /* RIG_PROXY_MAGIC_EXPORT_FD */
  int32_t status; /* RIG_OK, RIG_EINVAL, or RIG_ENOMEM past a limit of
                     rigd's (export_fds) */
  uint64_t token; /* RIG_PROXY_EXPORT_OF_FD: the token the descriptor names */
  char why[RIG_PROXY_WHY_BYTES]; /* a refusal's reason, NUL-terminated */
};

/* The admin channel is rigd's socket: a connection whose hello is an
 * admin request (its first 8 bytes a hello of magic
 * RIG_PROXY_MAGIC_ADMIN) asks one thing and gets one reply, after which
 * rigd closes it.  rigd answers only root, its own user and the members of
 * its admin_group (SO_PEERCRED); anyone else gets status RIG_EOPEN with
 * why.  STATS answers RIG_OK with a snapshot attached (SCM_RIGHTS): a
 * sealed memfd of a rig_proxy_stats_header and its records.  DROP ends
 * the session of client `client`: RIG_OK, or RIG_EINVAL where rigd has no
 * such client connected. */
#define RIG_PROXY_MAGIC_ADMIN 0x53474952u /* "RIGS" */
#define RIG_PROXY_MAGIC_STATS 0x54474952u /* "RIGT": the snapshot's segment */

enum rig_proxy_admin_op { RIG_PROXY_ADMIN_STATS = 1, RIG_PROXY_ADMIN_DROP = 2 };

struct rig_proxy_admin_request {
  uint32_t magic;   /* RIG_PROXY_MAGIC_ADMIN */
  uint32_t version; /* RIG_PROXY_VERSION */
  uint32_t op;      /* enum rig_proxy_admin_op */
  uint32_t reserved; /* zero */
  uint64_t client;  /* DROP: the client's id; zero otherwise */
};

struct rig_proxy_admin_reply {
  uint32_t magic;   /* RIG_PROXY_MAGIC_ADMIN */
  uint32_t version; /* rigd's RIG_PROXY_VERSION */
  int32_t status;   /* RIG_OK, RIG_EOPEN (refused) or RIG_EINVAL */
  uint32_t reserved;
  char why[RIG_PROXY_WHY_BYTES]; /* a refusal's reason, NUL-terminated */
};

/* The snapshot: its header, then client_count clients, use_count uses
 * (each client's first_use .. first_use + use_count - 1), device_count
 * devices (in the order of the handshake's records) and export_count
 * export rows, each array at its offset.  Counts are exact; quota_bytes
 * UINT64_MAX where rigd sets none. */
struct rig_proxy_stats_header {
  struct rig_proxy_segment_header segment; /* magic RIG_PROXY_MAGIC_STATS */
  uint32_t client_count;
  uint32_t use_count;
  uint32_t device_count;
  uint32_t export_count;
  uint64_t clients_offset;
  uint64_t uses_offset;
  uint64_t devices_offset;
  uint64_t exports_offset;
};

struct rig_proxy_stats_client {
  uint64_t id;
  int64_t pid;
  uint32_t uid;
  uint32_t use_count;
  uint32_t first_use;
  uint32_t reserved;
  int64_t connected_ns; /* CLOCK_REALTIME */
  char command[RIG_PROXY_NAME_BYTES];
  uint64_t device_bytes;
  uint64_t quota_bytes;
  uint64_t images;
  uint64_t submissions;
  uint64_t copies;
  uint64_t copied_bytes;
  uint64_t fills;
  uint64_t launches;
  uint64_t waits;
  uint64_t faults;
  char lost[RIG_PROXY_WHY_BYTES]; /* its last loss's why, "" for none */
};

struct rig_proxy_stats_use {
  uint32_t device; /* the served device's index */
  uint32_t reserved;
  uint64_t instances;
  uint64_t bytes;
};

struct rig_proxy_stats_device {
  char name[RIG_PROXY_NAME_BYTES];
  uint64_t clients;
  uint64_t instances;
  uint64_t allocated;
  uint64_t cached;
  uint64_t queued;
  uint64_t busy_ns;
  uint64_t faults;
};

struct rig_proxy_stats_export {
  uint64_t exporter;
  uint32_t device;
  uint32_t reserved;
  uint64_t bytes;
  uint64_t importer; /* 0 for none yet */
};

#ifdef __cplusplus
}
#endif

#endif /* RIG_PROXY_PROTOCOL_H */
