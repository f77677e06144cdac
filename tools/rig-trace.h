/* What rig-trace's BPF programs (rig-trace.bpf.c) and its user side
 * (rig-trace.c) share: the maps' keys and values. */
#ifndef RIG_TRACE_H
#define RIG_TRACE_H

#define RIG_TRACE_NAME_BYTES 64
#define RIG_TRACE_WAIT_SLOTS 32 /* log2 buckets of a wait's microseconds */
#define RIG_TRACE_WHY_BYTES 160

/* The counters of one process's work on one device. */
struct rig_trace_key {
  unsigned int pid;
  char device[RIG_TRACE_NAME_BYTES];
};

struct rig_trace_counts {
  unsigned long long submits;
  unsigned long long launches;
  unsigned long long copies;
  unsigned long long copy_bytes; /* counted on the copy's destination */
  unsigned long long fills;
  unsigned long long fill_bytes;
  unsigned long long waits;
  unsigned long long wait_ns;
  unsigned long long waits_failed; /* rig_point_wait answered an error */
  unsigned long long handovers;    /* work a proxy handed to rigd */
  unsigned long long handover_bytes;
  unsigned long long allocs;
  unsigned long long alloc_bytes;
  unsigned long long frees;
  unsigned long long free_bytes;
  unsigned long long wait_slots[RIG_TRACE_WAIT_SLOTS];
};

/* A device lost, as rig:lost reported it. */
struct rig_trace_loss {
  unsigned int pid;
  char device[RIG_TRACE_NAME_BYTES];
  char why[RIG_TRACE_WHY_BYTES];
};

#endif
