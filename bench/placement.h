/* Where a round trip's two sides run.  A cross-process round trip costs what
 * the two CPUs it crosses cost: on one machine it runs from under 200 ns
 * (two CPUs that share a cache) to over 500 ns (two that do not), and the
 * scheduler picks anew each run.  So a benchmark that sets a round trip
 * beside its baseline pins both the same way: the measuring process on the
 * near CPU and its partner (every thread of it) on the far one. */
#ifndef RIG_BENCH_PLACEMENT_H
#define RIG_BENCH_PLACEMENT_H

#ifndef _GNU_SOURCE
#error "placement.h needs _GNU_SOURCE (sched_setaffinity, CPU_SET)"
#endif

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

typedef struct placement {
  cpu_set_t all; /* the CPUs this process may run on at the start */
  int near_cpu, far_cpu; /* -1 where it has fewer than two */
} placement;

/* The first two CPUs this process may run on. */
static inline placement placement_choose(void) {
  placement p = {.near_cpu = -1, .far_cpu = -1};
  if (sched_getaffinity(0, sizeof p.all, &p.all) != 0) return p;
  for (int cpu = 0; cpu < CPU_SETSIZE && p.far_cpu < 0; cpu++) {
    if (!CPU_ISSET(cpu, &p.all)) continue;
    if (p.near_cpu < 0)
      p.near_cpu = cpu;
    else
      p.far_cpu = cpu;
  }
  if (p.far_cpu < 0) p.near_cpu = -1;
  return p;
}

static inline void placement_print(const placement *p) {
  if (p->far_cpu < 0)
    printf("placement: unpinned (one CPU)\n");
  else
    printf("placement: measuring side on CPU %d, its partner on CPU %d\n", p->near_cpu, p->far_cpu);
}

/* Every thread of process pid (0: this one) on cpu, or on every CPU of
 * p->all where cpu is -1.  Threads the process makes later inherit the
 * mask of the thread that makes them. */
static inline void placement_put(const placement *p, pid_t pid, int cpu) {
  if (p->far_cpu < 0) return;
  cpu_set_t set = p->all;
  if (cpu >= 0) {
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", pid == 0 ? (int)getpid() : (int)pid);
  DIR *tasks = opendir(path);
  if (!tasks) return;
  for (struct dirent *task; (task = readdir(tasks));) {
    int tid = atoi(task->d_name);
    if (tid > 0) sched_setaffinity(tid, sizeof set, &set);
  }
  closedir(tasks);
}

#endif
