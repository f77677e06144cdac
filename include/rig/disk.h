/* The disk library: files as the memory of the io device DISK.  A region is
 * an open file, or a range of one; copies between it and any device's memory
 * run as io_uring reads and writes (O_DIRECT where the file system, offsets,
 * lengths and addresses allow, the page cache otherwise), through staging
 * memory where the other side is memory the host does not address.  A file
 * cut short makes a copy answer RIG_EIO naming the file, never a SIGBUS; a
 * write that fails part way (ENOSPC) answers RIG_EIO with the errno, and
 * its message names the file and the bytes it wrote, which are in place.
 * A copy into a file is done (its point reached, rig_buffer_wait returns)
 * once its bytes are written to the file: every later read of the file, in
 * any process, sees them, but a crash or a power loss may still lose them
 * until rig_disk_sync has made them durable. */
#ifndef RIG_DISK_H
#define RIG_DISK_H

#include <rig/rig.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The key of the disk library's regions (rig_buffer_io). */
#define RIG_DISK_KEY "rig.disk"

typedef enum rig_disk_mode {
  RIG_DISK_READ = 0,       /* the region admits Read                 */
  RIG_DISK_READ_WRITE = 1, /* the region admits Read_write           */
} rig_disk_mode_t;

/* The io device DISK (opened at the first call).  Its budget is that of
 * RIG_DISK's "budget=BYTES", else unbounded; it counts the scratch memory
 * rig_buffer_create makes on it, in anonymous files that return when
 * released.  RIG_EOPEN, with the reason, where RIG_DISK does not read. */
rig_status_t rig_disk_device(rig_device_t **out);

/* *out is a buffer on DISK over length bytes of the file at path from its
 * byte offset (length -1: to the file's end), admitting Read for
 * RIG_DISK_READ.  The file stays open until no buffer over it remains.  Two
 * opens of one file are two memories that share no byte.  Only a regular
 * file opens: a directory, FIFO, socket, character or block device (DISK
 * serves no block device) answers RIG_EIO at once, never blocking, with a
 * message that names the path and what it is (errno EISDIR for a
 * directory, EINVAL for the others).  RIG_EIO with the errno if the file
 * cannot be opened; RIG_EINVAL for a NULL path, an unknown mode, or a range
 * past the file's end. */
rig_status_t rig_disk_open(const char *path, rig_disk_mode_t mode, int64_t offset, int64_t length,
                           rig_buffer_t **out);

/* One range of a batched read: bytes bytes of file, a buffer on DISK,
 * from its byte file_offset, into dst (a buffer on any device) from its
 * byte dst_offset. */
typedef struct rig_disk_range {
  rig_buffer_t *file;
  int64_t file_offset;
  rig_buffer_t *dst;
  int64_t dst_offset;
  int64_t bytes;
} rig_disk_range_t;

/* Reads ranges[0..count) as one submission: every range is checked before
 * a byte moves, then the ranges are read at once, spread over the disk's
 * queue depth (several reads of each in flight, several ranges in flight,
 * the largest first), each ordered by its buffers' stamps as
 * rig_buffer_copy of the range orders it; the call returns once every byte
 * of every range is in place.  Ranges may read any files, a file many
 * times.  RIG_EINVAL, naming the range's index and its numbers, for a NULL
 * ranges, a count of 0, a NULL or released file or dst, a file that is not
 * a buffer on DISK, a dst over its own file's memory, a negative offset or
 * count, a range past the end of its file or of its dst, or two ranges
 * whose destination bytes overlap (bytes of one allocation, through any
 * views); then no byte has moved.  Once the
 * reads have started, the first error a range answers (RIG_EIO for a file
 * cut short, naming it; RIG_ELOST; RIG_ENOMEM; as rig_buffer_copy answers)
 * stops ranges not yet begun and is the call's answer once the ranges in
 * flight have ended; the bytes of the ranges that ended are in place. */
rig_status_t rig_disk_read_ranges(const rig_disk_range_t *ranges, size_t count);

/* Makes durable the bytes written into file, a buffer over a file (or a
 * range of one) rig_disk_open opened RIG_DISK_READ_WRITE, or scratch
 * memory of DISK: it waits for the work whose writes a read of file must
 * follow (rig_buffer_wait with RIG_ACCESS_READ), then flushes the file's
 * data, and the metadata a read of it needs, to the storage that holds it
 * (fdatasync of the whole file, whatever range file covers).  Returns once
 * the bytes of every copy into the file done before the call, through any
 * open of it, survive a crash or a power loss as the file system promises
 * for fdatasync.  RIG_EINVAL for a NULL or released file, a
 * buffer that is not DISK's memory, or a file opened RIG_DISK_READ; RIG_EIO
 * with the errno (rig_error_code) where the flush fails (EIO: a write-back
 * of the file failed; ENOSPC, EDQUOT; EINVAL: the file system cannot flush
 * files), its message naming the file: then the file's bytes are not known
 * to be durable; RIG_ELOST or RIG_EINTR as rig_buffer_wait answers. */
rig_status_t rig_disk_sync(rig_buffer_t *file);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
