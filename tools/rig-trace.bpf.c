// SPDX-License-Identifier: GPL-2.0
/* rig-trace's BPF programs: one per USDT probe of librig (lib/probes.hpp),
 * each adding to the counters of its process and device.  They read
 * nothing of the kernel's, only the probes' arguments and the strings they
 * point to in the traced process, so they need no kernel type information
 * and run on any kernel with uprobes and BPF. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <stdbool.h>

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "rig-trace.h"

char LICENSE[] SEC("license") = "GPL";

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct rig_trace_key);
  __type(value, struct rig_trace_counts);
} counts SEC(".maps");

/* A wait's start, by thread. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, __u64);
} wait_start SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 64 * 1024);
} losses SEC(".maps");

/* A zeroed value to insert, and scratch for keys (too large for the BPF
 * stack together with a value). */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct rig_trace_counts);
} zero SEC(".maps");

static __always_inline struct rig_trace_counts *counts_of(const char *device) {
  struct rig_trace_key key = {};
  key.pid = bpf_get_current_pid_tgid() >> 32;
  bpf_probe_read_user_str(key.device, sizeof key.device, device);
  struct rig_trace_counts *c = bpf_map_lookup_elem(&counts, &key);
  if (c) return c;
  __u32 index = 0;
  struct rig_trace_counts *fresh = bpf_map_lookup_elem(&zero, &index);
  if (!fresh) return 0;
  bpf_map_update_elem(&counts, &key, fresh, BPF_NOEXIST);
  return bpf_map_lookup_elem(&counts, &key);
}

static __always_inline void add(unsigned long long *counter, unsigned long long n) {
  __sync_fetch_and_add(counter, n);
}

SEC("usdt")
int BPF_USDT(on_submit, const char *device, long value, long parts) {
  struct rig_trace_counts *c = counts_of(device);
  if (c) add(&c->submits, 1);
  return 0;
}

SEC("usdt")
int BPF_USDT(on_launch, const char *device, const char *function, long threads) {
  struct rig_trace_counts *c = counts_of(device);
  if (c) add(&c->launches, 1);
  return 0;
}

SEC("usdt")
int BPF_USDT(on_copy, const char *src, const char *dst, long bytes) {
  struct rig_trace_counts *c = counts_of(dst);
  if (c) {
    add(&c->copies, 1);
    add(&c->copy_bytes, bytes);
  }
  return 0;
}

SEC("usdt")
int BPF_USDT(on_fill, const char *device, long bytes) {
  struct rig_trace_counts *c = counts_of(device);
  if (c) {
    add(&c->fills, 1);
    add(&c->fill_bytes, bytes);
  }
  return 0;
}

SEC("usdt")
int BPF_USDT(on_handover, const char *proxy, long value, long bytes) {
  struct rig_trace_counts *c = counts_of(proxy);
  if (c) {
    add(&c->handovers, 1);
    add(&c->handover_bytes, bytes);
  }
  return 0;
}

SEC("usdt")
int BPF_USDT(on_alloc, const char *device, long bytes) {
  struct rig_trace_counts *c = counts_of(device);
  if (c) {
    add(&c->allocs, 1);
    add(&c->alloc_bytes, bytes);
  }
  return 0;
}

SEC("usdt")
int BPF_USDT(on_free, const char *device, long bytes) {
  struct rig_trace_counts *c = counts_of(device);
  if (c) {
    add(&c->frees, 1);
    add(&c->free_bytes, bytes);
  }
  return 0;
}

SEC("usdt")
int BPF_USDT(on_wait_begin, const char *device, long value) {
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  __u64 now = bpf_ktime_get_ns();
  bpf_map_update_elem(&wait_start, &tid, &now, BPF_ANY);
  return 0;
}

SEC("usdt")
int BPF_USDT(on_wait_end, const char *device, long value, long status) {
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  __u64 *start = bpf_map_lookup_elem(&wait_start, &tid);
  if (!start) return 0;
  __u64 ns = bpf_ktime_get_ns() - *start;
  bpf_map_delete_elem(&wait_start, &tid);
  struct rig_trace_counts *c = counts_of(device);
  if (!c) return 0;
  add(&c->waits, 1);
  add(&c->wait_ns, ns);
  if (status != 0) add(&c->waits_failed, 1);
  __u64 us = ns / 1000;
  __u32 slot = 0;
  while (us > 1 && slot < RIG_TRACE_WAIT_SLOTS - 1) {
    us >>= 1;
    slot++;
  }
  add(&c->wait_slots[slot & (RIG_TRACE_WAIT_SLOTS - 1)], 1);
  return 0;
}

SEC("usdt")
int BPF_USDT(on_lost, const char *device, const char *why) {
  struct rig_trace_loss *e = bpf_ringbuf_reserve(&losses, sizeof *e, 0);
  if (!e) return 0;
  e->pid = bpf_get_current_pid_tgid() >> 32;
  bpf_probe_read_user_str(e->device, sizeof e->device, device);
  bpf_probe_read_user_str(e->why, sizeof e->why, why);
  bpf_ringbuf_submit(e, 0);
  return 0;
}
