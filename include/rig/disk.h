/* The disk library: files as the memory of the io device DISK.  A region is
 * an open file, or a range of one; copies between it and any device's memory
 * run as io_uring reads and writes (O_DIRECT where the file system, offsets,
 * lengths and addresses allow, the page cache otherwise), through staging
 * memory where the other side is memory the host does not address.  A file
 * cut short makes a copy answer RIG_EIO naming the file, never a SIGBUS; a
 * write that fails part way (ENOSPC) answers RIG_EIO with the errno, and
 * its message names the file and the bytes it wrote, which are in place. */
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

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
