/* Two hosts on one machine, the fixture of the machines tests: network
 * namespaces rig-PID-a and rig-PID-b (PID the calling process's), joined
 * only by a veth pair whose ends are named as their namespaces, so that a
 * test runs an agent on one side and clients on the other, cuts the link
 * between them and kills the agent as on two machines.
 *
 * Side a holds 10.X.Y.Z+1 and side b 10.X.Y.Z+2 on the /30 10.X.Y.Z,
 * where X.Y.Z is PID * 4 written in three bytes (Linux PIDs are below
 * 2^22, so each PID has a /30 of its own in 10.0.0.0/8); each side has lo
 * up as well, and nothing else: no route leaves a namespace.
 *
 * The namespaces and the link are made and changed by iproute2's `ip`,
 * which every call runs through posix_spawn; it needs root (CAP_NET_ADMIN
 * and CAP_SYS_ADMIN).  A failing call answers NULL or -1 and leaves its
 * reason, with its numbers and ip's own words, in two_hosts_error().
 *
 * One fixture per process at a time (the names carry its PID); its calls
 * are not meant for several threads at once.  Usable from C and C++. */
#ifndef RIG_TESTS_TWO_HOSTS_H
#define RIG_TESTS_TWO_HOSTS_H

#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

enum two_hosts_side { TWO_HOSTS_A = 0, TWO_HOSTS_B = 1 };

struct two_hosts;

/* Makes both namespaces, the veth pair between them and their addresses,
 * with lo and both ends up and the link's carrier on; first removes the
 * namespaces that earlier runs left (two_hosts_sweep).  NULL where any
 * step fails (not root, no `ip`, no network namespaces, an ip command
 * refused), with whatever it made removed again. */
struct two_hosts *two_hosts_up(void);

/* The reason the calling thread's last failing call gave. */
const char *two_hosts_error(void);
/* The milliseconds of CLOCK_MONOTONIC since start, for the fixture's and
 * its users' bounded waits. */
long two_hosts_ms_since(const struct timespec *start);

/* Side's IPv4 address, dotted ("10.0.1.5"), for "HOST:PORT". */
const char *two_hosts_address(const struct two_hosts *h, enum two_hosts_side side);
/* The name of side's end of the veth pair, for UCX_NET_DEVICES. */
const char *two_hosts_device(const struct two_hosts *h, enum two_hosts_side side);
/* The name of side's namespace, as `ip netns` lists it. */
const char *two_hosts_netns(const struct two_hosts *h, enum two_hosts_side side);

/* Starts argv[0] (a path; argv and envp as execve's, envp NULL for the
 * caller's environment) in a child inside side's namespace, which is
 * killed (SIGKILL) and reaped by two_hosts_kill or two_hosts_down, and
 * dies with the caller where the caller dies first.  The child sees its
 * side's interfaces in /sys/class/net as well (a sysfs of its own, in a
 * mount namespace of its own, as `ip netns exec` does).  Its pid, or -1
 * where the child could not enter the namespace or exec argv[0]. */
pid_t two_hosts_spawn(struct two_hosts *h, enum two_hosts_side side, char *const argv[], char *const envp[]);

/* Kills (SIGKILL) and reaps pid, a child two_hosts_spawn started: an agent
 * killed as on another machine.  0, or -1 where h started no such child. */
int two_hosts_kill(struct two_hosts *h, pid_t pid);

/* Runs fn(arg) in a forked child inside side's namespace, entered as
 * two_hosts_spawn's children enter it, and waits for it: its exit status
 * is fn's answer (0..255).  -1 where the child could not enter the
 * namespace or did not exit (a signal ended it).  fn reports through its
 * answer and stderr, not through Criterion's assertions. */
int two_hosts_run(struct two_hosts *h, enum two_hosts_side side, int (*fn)(void *arg), void *arg);

/* A socket (socket(2)'s domain and type; close-on-exec) of side's network
 * namespace, made by the calling thread there: the calling process drives
 * it, and its traffic stays in that namespace.  -1 where it cannot. */
int two_hosts_socket(struct two_hosts *h, enum two_hosts_side side, int domain, int type);

/* Sets both ends of the veth pair down, as `ip link set dev X down`: the
 * link is cut mid-transfer, and the routes over it go with it. */
int two_hosts_cut(struct two_hosts *h);
/* Sets both ends up again and waits for the link's carrier. */
int two_hosts_restore(struct two_hosts *h);

/* Kills and reaps every child two_hosts_spawn started that is still kept,
 * deletes both namespaces (the veth pair goes with them) and frees h;
 * NULL does nothing.  0, or -1 where a namespace would not go (h is freed
 * all the same). */
int two_hosts_down(struct two_hosts *h);

/* Deletes the namespaces named rig-PID-a or rig-PID-b whose PID is no
 * longer a process's (or is the caller's, where it has no fixture up):
 * those that runs ended before their two_hosts_down left.  The number
 * found, each gone after (deleted here, or by another process's sweep at
 * the same time), or -1 where one is still there after its deletion
 * failed. */
int two_hosts_sweep(void);

#ifdef __cplusplus
}
#endif

#endif
