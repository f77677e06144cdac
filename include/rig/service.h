/* rigd, the per-host service: a process uses the devices rigd serves as
 * proxies named NAME@rigd, such as "CUDA:0@rigd" for rigd's CUDA:0.  rig
 * runs each proxy's work in rigd, which shares the host's devices among
 * its clients; the proxy's timeline is a word rigd raises in memory this
 * process maps, so waits read memory and make no round trip.
 *
 * Proxies run copies and fills; their memory is rigd's, which the process
 * reaches through copies (rig_buffer_host is NULL for it).  rigd always
 * serves its machine's host too, as CPU ("CPU@rigd"), whose proxies also
 * run words parts (RIG_WORDS), each write in order, after every earlier
 * part and the points the submit waits for; a proxy of any other device
 * answers RIG_EINVAL for words ("no such work").  The host's proxies run
 * their work on a memory device of rigd's host, since rig's host runs
 * launches only.  rigd runs the
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
   * and not empty, else the first of $XDG_RUNTIME_DIR/rig/rigd.sock (where
   * that is set) and /run/rig/rigd.sock (the system service's) that exists
   * and answers. */
  const char *socket;
} rig_service_options_t;

/* A machine (the spec's Machines): a connection to a rigd, through which
 * the process opens proxies of the devices it serves.  Each connection is
 * a machine of its own, with a name of its own for the life of the
 * process: "rigd" for the process's first (the one an open of NAME@rigd
 * makes, where the process has none), then "rigd2", "rigd3", ...  Its
 * proxies are named NAME@MACHINE.  A machine is a record that lives for the
 * process: the pointer never dangles.  A machine is lost, for good, when
 * rigd closes the connection or breaks its protocol; its proxies are lost
 * with it, and opens on it answer RIG_EOPEN with the reason. */
typedef struct rig_machine rig_machine_t;

/* Connects this process to the rigd listening at the options' socket (opts
 * may be NULL) as a new machine, *machine where machine is not NULL;
 * rig_probe lists the devices it serves.  An open of NAME@rigd where the
 * process has no machine "rigd" first connects as with NULL options.  A
 * connection is the process's that made it: a child after fork has none of
 * its parent's machines, and its first connection is "rigd" again.
 *
 * RIG_EOPEN with the reason when rigd does not answer at the socket (with
 * NULL options: naming every path tried, why each failed, and what to do),
 * refuses the process (its policy does not admit the user) or speaks
 * another protocol version.  RIG_EINVAL if opts->size is too small. */
rig_status_t rig_service_connect(const rig_service_options_t *opts, rig_machine_t **machine);

/* Options of rig_machine_connect.  size is sizeof(rig_machine_options_t)
 * as the caller compiled it, so later fields can be added; a field that
 * lies past size reads as NULL or 0. */
typedef struct rig_machine_options {
  size_t size;
  /* The machine's name, NULL for "machine", then "machine2", "machine3",
   * ...: the first that no machine of the process holds.  Not empty, no
   * '@', ',' or ':', not "rigd" nor "rigd" and a number, and held by no
   * machine of the process. */
  const char *name;
  /* The file of the key the process proves (a secret its owner alone
   * reads), NULL for $RIG_MACHINE_KEY. */
  const char *key_file;
  /* The key's id in the agent's key ring, NULL for the key file's base
   * name. */
  const char *key_id;
  /* UCX's transports, as a UCX_TLS value ("tcp", "rc,sm"), NULL for UCX's
   * choice. */
  const char *transports;
  /* How long a silent agent may take to be reported as failed, and each
   * step of the connect may take; 0 for 10000. */
  uint32_t failure_bound_ms;
} rig_machine_options_t;

/* The capability that every device of another machine declares
 * (rig_device_capability(d, RIG_MACHINE_DEVICE)): the account its
 * machine's agent gave for it, which the proxy was made with (PROXY-17,
 * PROXY-29).  Devices of this machine, rigd's proxies included, declare
 * none.  The record and its texts live as long as d's record. */
#define RIG_MACHINE_DEVICE "rig.machine-device"
typedef struct rig_machine_device {
  size_t size;          /* sizeof(rig_machine_device_t) as rig compiled it */
  uint32_t id;          /* the agent's id of the device: 0 for its host */
  const char *name;     /* its name on its machine ("MEM:0") */
  const char *arch;     /* its arch, as rig_device_arch answers */
  int64_t budget;       /* its budget when the agent listed it */
  int64_t cache_bytes;  /* its last-level cache's bytes, 0 if not known */
  const char *address;  /* "HOST:PORT" of the machine's agent */
} rig_machine_device_t;

/* Connects this process to the agent of another machine listening at
 * address ("HOST:PORT", rigd --listen) as a new machine, *machine where
 * machine is not NULL: the process proves its key, and the agent's devices
 * open as NAME@MACHINE, proxies that run their work there
 * (rig-remote-proxy.txt), "CPU@MACHINE" the machine's host among them;
 * rig_probe lists them.  A second connection to one address is another
 * machine.  An open of NAME@M where the process has no machine M but
 * $RIG_MACHINES (comma-separated "M=HOST:PORT" pairs) lists M first
 * connects so, named M, with $RIG_MACHINE_KEY.  A connection is the
 * process's that made it: a child after fork has none of its parent's.
 * A proxy loads code where the agent's device does: "CPU@MACHINE" loads
 * host code on the agent's host, and runs its launches there, where the
 * agent's config says host_code = allow (rigd(8)), and answers RIG_EIMAGE
 * naming host_code otherwise.
 * The machine is lost, for good, when the job fails: the agent's FAILURE
 * (its root cause), the connection's end or silence past the failure
 * bound; every proxy of it is lost with the reason.
 *
 * RIG_EOPEN with the reason where it does not connect (the address and
 * UCX's reason; "authentication failed" where the agent refuses the key),
 * where no key file is given and $RIG_MACHINE_KEY is not set, where the
 * key file is no key's, and where rig was built without machines ("rig was
 * built without machines").  RIG_EINVAL if address is NULL, opts->size is
 * too small or the name is no machine's or held. */
rig_status_t rig_machine_connect(const char *address, const rig_machine_options_t *opts, rig_machine_t **machine);

/* The machine's name, such as "rigd", "rigd2" or "machine"; NULL for NULL.  Takes no
 * lock. */
const char *rig_machine_name(const rig_machine_t *m);

/* NULL while m is connected, else why it is lost ("rigd closed the
 * connection", ...); NULL for NULL. */
const char *rig_machine_lost(rig_machine_t *m);

/* Begins the close of m's job (rig-remote-proxy.txt's Link.close): m's
 * connection sends the agent CLOSE and ends, and m is lost, for good, with
 * "the job is closed" (rig_machine_lost answers it), unless it was lost
 * before, whose reason stays.  From then every call of its proxies that
 * asks the other side (an allocation, a peer mapping of memory, an image's
 * load, an entry) and every submission to them fails as on a lost device
 * (RIG_ELOST, "the job is closed"), each wait on their work answers
 * RIG_ELOST with that reason, and opens on m answer RIG_EOPEN.  A machine
 * of rigd of this host (rig_service_connect) closes the same way: its
 * connection to rigd ends, and rigd releases what the process held there.
 * Work handed over before the close may still run on the other side;
 * nothing of it reaches this process any more.  Closing a closed or lost
 * machine changes nothing.  RIG_OK, or RIG_EINVAL if m is NULL or is a
 * machine of the process's parent (after fork), which is not the
 * caller's to close. */
rig_status_t rig_machine_close(rig_machine_t *m);

/* Opens the device rigd serves as name (such as "SIM:0") on m: rig_open of
 * NAME@MACHINE, with opts's config for the process's instance of it.
 * Answers as rig_open, and RIG_EOPEN with m's reason once m is lost;
 * RIG_EINVAL if m or name is NULL, or name names a machine itself. */
rig_status_t rig_machine_open(rig_machine_t *m, const char *name, const rig_open_options_t *opts,
                              rig_device_t **out);

/* Exports b's bytes, memory of a NAME@rigd proxy (any offset and length
 * of it, as a view), as *token: any process connected to the same rigd
 * imports them with rig_service_import on a proxy of the same served device
 * while this process stays connected.  Work both processes submit on the
 * bytes runs in rigd in the order of their submits, by the memory's
 * stamps there: a submit that rig made after another process's submit
 * returned follows that submit's work where they share memory (a submit
 * naming shared bytes returns once rigd has taken it).  A wait on the host
 * in either process (rig_buffer_wait, rig_buffer_reached, host access)
 * also waits for the work any process handed over on the exported buffer
 * or an import of it before the wait began, by reading words of rigd's
 * shared-buffer table: no round trip.
 *
 * RIG_EINVAL if b is dead, is not a proxy's own memory (a borrow, or
 * another device's memory), its memory is held exclusive (rig_claim_begin),
 * or token is NULL; RIG_ENOMEM past rigd's limit of exports for the
 * process or its user (rigd(8), LIMITS: exports, exports_per_user),
 * rig_last_error naming the limit with what is held, asked and allowed;
 * RIG_ELOST if b's proxy is lost (rigd closed the
 * connection). */
rig_status_t rig_service_share(rig_buffer_t *b, uint64_t *token);

/* *out is a buffer on d, a NAME@rigd proxy, over the bytes another
 * process (or this one) exported as token.  The buffer holds the memory:
 * it lasts while *out lives, whatever the exporter does; it counts in no
 * budget of this process, and in rigd's quota_bytes of this process and
 * its user (rigd(8), LIMITS) until it goes.
 *
 * RIG_EINVAL if d is not a proxy, token names no export rigd holds, or the
 * export is another served device's memory, and for every token while the
 * process's connection has tried 16 tokens that named no export, one more
 * coming back every 4 seconds, or its user 64 over all of its connections,
 * one more coming back each second (so that no process finds another's
 * export by trying tokens in turn, and one that tries leaves its user's
 * others most of theirs); RIG_ENOMEM where the bytes pass rigd's
 * quota_bytes of the process or quota_bytes_per_user of its user, with
 * rig_last_error naming it with what is held, asked and allowed;
 * RIG_ELOST if d is lost. */
rig_status_t rig_service_import(rig_device_t *d, uint64_t token, rig_buffer_t **out);

/* Exports b's bytes as rig_service_share does, as *fd: a new file
 * descriptor (close-on-exec, the caller's to close) that names the export
 * to rigd.  A process that holds it, passed as any descriptor is (over a
 * Unix socket with SCM_RIGHTS, or across fork), imports the bytes with
 * rig_service_import_fd, without learning a token from the exporter: the
 * descriptor is the capability.  The export lasts while this process stays
 * connected, as a token's does; closing the descriptor ends nothing.
 * *fd is -1 on error.
 *
 * RIG_EINVAL as rig_service_share, for fd NULL, or where rigd makes no
 * descriptor (the export stays, unnamed); RIG_ENOMEM as rig_service_share,
 * and past rigd's export_fds or export_fds_per_user (the descriptors rigd
 * keeps for the process's exports, or its user's: the export stays,
 * unnamed); RIG_ELOST as rig_service_share. */
rig_status_t rig_service_share_fd(rig_buffer_t *b, int *fd);

/* *out is a buffer on d, a NAME@rigd proxy, over the bytes that fd names,
 * a descriptor rig_service_share_fd made in a process connected to d's
 * rigd, as rig_service_import makes for its token.  fd stays the caller's.
 *
 * RIG_EINVAL if d is not a proxy, fd is negative or names no export that
 * rigd holds (a descriptor of another rigd's, or of no export), or the
 * export is another served device's memory; RIG_ENOMEM as
 * rig_service_import; RIG_ELOST if d is lost. */
rig_status_t rig_service_import_fd(rig_device_t *d, int fd, rig_buffer_t **out);

/* ------------------------------------------------------------------------ */
/* rigd's counters and its admin channel                                     */

/* A count without a bound: a client's quota_bytes where rigd sets none. */
#define RIG_SERVICE_UNBOUNDED UINT64_MAX

/* A snapshot of rigd's counters, taken at once on rigd's admin channel:
 * its clients (each with the served devices it uses), its served devices
 * and its exports.  Read-only; every string it answers lives as long as
 * the snapshot.  A checked handle, as rig.h's (Handles): every
 * rig_service_stats_* call given a snapshot after its release (a second
 * release too), or a pointer into readable memory that no
 * rig_service_stats made, answers RIG_EINVAL, "the snapshot was
 * released", and touches nothing of it; a call that answers
 * no status answers as for NULL (0; a release does nothing) with that
 * message as rig_last_error.  This holds until 16384 more snapshots have
 * been released after it; from then on its memory may hold a new one,
 * which the old pointer then names. */
typedef struct rig_service_stats rig_service_stats_t;

/* A client of rigd, as a snapshot saw it.  size is
 * sizeof(rig_service_client_info_t) as the caller compiled it: the
 * fields that fit in it are written, the rest not. */
typedef struct rig_service_client_info {
  size_t size;
  uint64_t id;          /* rigd's number of the client, unique in rigd's life */
  int64_t pid;          /* its process (SO_PEERCRED at connect) */
  uint32_t uid;         /* its user */
  const char *user;     /* the user's name, or its number where it has none */
  const char *command;  /* the process's name (/proc/PID/comm) at connect */
  int64_t connected_ns; /* when rigd admitted it, CLOCK_REALTIME */
  uint64_t device_bytes; /* device memory it holds: buffers, imports, images */
  uint64_t quota_bytes;  /* its quota_bytes, RIG_SERVICE_UNBOUNDED for none */
  uint64_t images;       /* images it loaded */
  uint64_t submissions;  /* hand-overs rigd took */
  uint64_t copies;       /* copy parts of those */
  uint64_t copied_bytes; /* the bytes those copies move */
  uint64_t fills;        /* fill parts */
  uint64_t launches;     /* launch parts */
  uint64_t waits;        /* waits on other proxies' values rigd served */
  uint64_t faults;       /* proxies of it rigd lost */
  const char *lost;      /* the reason of its last loss, "" where none */
  size_t uses;           /* the served devices it has opened proxies of */
} rig_service_client_info_t;

/* A served device a client uses.  size as rig_service_client_info_t's. */
typedef struct rig_service_use_info {
  size_t size;
  const char *device;  /* the served device's name, such as "SIM:0" */
  uint64_t instances;  /* instances rigd opened for the client: 1, one more after each loss */
  uint64_t bytes;      /* the device memory of it the client holds */
} rig_service_use_info_t;

/* A served device.  size as rig_service_client_info_t's. */
typedef struct rig_service_device_info {
  size_t size;
  const char *name;   /* such as "SIM:0" */
  uint64_t clients;   /* clients that use it */
  uint64_t instances; /* its live instances (clients', and idle ones) */
  uint64_t allocated; /* bytes allocated on it and its instances (rig_allocated) */
  uint64_t cached;    /* of those, the bytes no client holds: caches, idle instances */
  uint64_t queued;    /* clients' values handed over on it and not done */
  uint64_t busy_ns;   /* time clients' values on it waited for their work, summed */
  uint64_t faults;    /* clients' proxies of it rigd lost */
} rig_service_device_info_t;

/* An export: one row for each client that imported it, or one with
 * importer 0 while none has.  size as rig_service_client_info_t's. */
typedef struct rig_service_export_info {
  size_t size;
  uint64_t exporter;  /* the exporting client's id */
  const char *device; /* the served device whose memory it is */
  uint64_t bytes;     /* the bytes exported */
  uint64_t importer;  /* an importing client's id, 0 for none yet */
} rig_service_export_info_t;

/* Takes a snapshot of rigd's counters as *out, on the admin channel of
 * the rigd at opts's socket (opts may be NULL: the first socket of
 * rig_service_connect's list that answers).  The admin channel is rigd's
 * socket itself: a connection whose hello asks the admin role, which rigd
 * answers only for root, rigd's own user and the members of its config's
 * admin_group, by the peer's credentials (SO_PEERCRED), and which is no
 * client: it counts in no client list and holds nothing.
 *
 * RIG_EOPEN with the reason where no rigd answers, rigd refuses the role
 * ("rigd admits only root and group G to its admin channel: uid U is
 * neither"), speaks another protocol version, answers what is no admin
 * reply (a status the admin channel does not answer, a welcome that is no
 * refusal) or a malformed snapshot (one larger than 256 MiB, the most a
 * client reads, included); RIG_EINVAL if out is NULL or opts->size is too
 * small.  *out is NULL on error. */
rig_status_t rig_service_stats(const rig_service_options_t *opts, rig_service_stats_t **out);

/* Releases a snapshot; NULL is ignored, a released one too (with
 * RIG_EINVAL's message as rig_last_error, as above). */
void rig_service_stats_release(rig_service_stats_t *s);

/* The snapshot's clients, 0 for NULL. */
size_t rig_service_stats_clients(const rig_service_stats_t *s);

/* Writes the snapshot's i-th client into *out, as much of it as out->size
 * holds.  RIG_EINVAL if s or out is NULL, out->size is less than a
 * size_t, or i is not below rig_service_stats_clients. */
rig_status_t rig_service_stats_client(const rig_service_stats_t *s, size_t i, rig_service_client_info_t *out);

/* Writes the j-th served device client i uses into *out, as
 * rig_service_stats_client does.  RIG_EINVAL as rig_service_stats_client,
 * and if j is not below the client's uses. */
rig_status_t rig_service_stats_use(const rig_service_stats_t *s, size_t client, size_t j,
                                   rig_service_use_info_t *out);

/* The snapshot's served devices, 0 for NULL; rig_service_stats_device
 * writes the i-th, as rig_service_stats_client does. */
size_t rig_service_stats_devices(const rig_service_stats_t *s);
rig_status_t rig_service_stats_device(const rig_service_stats_t *s, size_t i, rig_service_device_info_t *out);

/* The snapshot's export rows, 0 for NULL; rig_service_stats_export
 * writes the i-th, as rig_service_stats_client does. */
size_t rig_service_stats_exports(const rig_service_stats_t *s);
rig_status_t rig_service_stats_export(const rig_service_stats_t *s, size_t i, rig_service_export_info_t *out);

/* Disconnects rigd's client `client` (its id) on the admin channel of the
 * rigd at opts's socket, as rig_service_stats reaches it: rigd closes the
 * client's connection, which then sees its proxies lost ("rigd closed the
 * connection"), and everything the client held returns once its work is
 * done, as when a client leaves.  Returns once rigd has asked the client's
 * session to end.
 *
 * RIG_EOPEN as rig_service_stats; RIG_EINVAL where rigd has no client of
 * that id connected, or opts->size is too small. */
rig_status_t rig_service_drop(const rig_service_options_t *opts, uint64_t client);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* RIG_SERVICE_H */
