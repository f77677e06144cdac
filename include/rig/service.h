/* rigd, the per-host service: a process uses the devices rigd serves as
 * proxies named NAME@rigd, such as "CUDA:0@rigd" for rigd's CUDA:0.  rig
 * runs each proxy's work in rigd, which shares the host's devices among
 * its clients; the proxy's timeline is a word rigd raises in memory this
 * process maps, so waits read memory and make no round trip.
 *
 * Proxies run copies and fills; their memory is rigd's, which the process
 * reaches through copies (rig_buffer_host is NULL for it).  rigd runs the
 * process's work on instances of the served devices of its own (rig_open's
 * NAME~TAG), opened with the config of the process's rig_open of
 * NAME@rigd: a fault in that work loses this process's proxies, with the
 * device's reason, and no other process's.  Host memory the
 * process allocates while connected is shared with rigd, so a served
 * device moves its bytes itself.  If rigd goes, every proxy is lost:
 * waits answer RIG_ELOST, with "rigd closed the connection". */
#ifndef RIG_SERVICE_H
#define RIG_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include <rig/rig.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Options of rig_service_connect.  size is sizeof(rig_service_options_t)
 * as the caller compiled it, so later fields can be added. */
typedef struct rig_service_options {
  size_t size;
  /* The path of rigd's socket, or NULL for $RIG_SERVICE where it is set
   * and not empty, else $XDG_RUNTIME_DIR/rig/rigd.sock where that is set,
   * else /run/rig/rigd.sock (the system service's). */
  const char *socket;
} rig_service_options_t;

/* Connects this process to the rigd listening at the options' socket (opts
 * may be NULL): later opens of NAME@rigd make proxies through this
 * connection, and rig_probe lists the devices it serves.  A connection
 * made earlier to another socket stays with the proxies opened through it.
 * An open of NAME@rigd with no connection first connects as with NULL
 * options.  A connection is the process's that made it: a child after
 * fork connects anew.
 *
 * RIG_EOPEN with the reason when rigd does not answer at the socket,
 * refuses the process (its policy does not admit the user) or speaks
 * another protocol version.  RIG_EINVAL if opts->size is too small. */
rig_status_t rig_service_connect(const rig_service_options_t *opts);

/* Exports b's bytes, memory of a NAME@rigd proxy (any offset and length
 * of it, as a view), as *token: any process connected to the same rigd
 * imports them with rig_service_import on a proxy of the same served device
 * while this process stays connected.  Work both processes submit on the
 * bytes runs in rigd in the order of their submits, by the memory's
 * stamps there: a submit that rig made after another process's submit
 * returned follows that submit's work where they share memory.
 *
 * RIG_EINVAL if b is dead, is not a proxy's own memory (a borrow, or
 * another device's memory), or token is NULL; RIG_ELOST if b's proxy is
 * lost (rigd closed the connection). */
rig_status_t rig_service_share(rig_buffer_t *b, uint64_t *token);

/* *out is a buffer on d, a NAME@rigd proxy, over the bytes another
 * process (or this one) exported as token.  The buffer holds the memory:
 * it lasts while *out lives, whatever the exporter does; it counts in no
 * budget of this process.
 *
 * RIG_EINVAL if d is not a proxy, token names no export rigd holds, or the
 * export is another served device's memory; RIG_ELOST if d is lost. */
rig_status_t rig_service_import(rig_device_t *d, uint64_t token, rig_buffer_t **out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* RIG_SERVICE_H */
