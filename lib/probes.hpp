// USDT probes of librig (provider "rig"), which tracers attach to by name:
// rig-trace (tools/), bpftrace, perf.  Each is a no-op instruction until a
// tracer attaches; without sys/sdt.h (systemtap-sdt-dev) they are nothing.
//
//   rig:submit      (device, value, parts)     a rig_submit of a run
//   rig:launch      (device, function, threads) each launch part it holds
//   rig:copy        (src device, dst device, bytes) a copy (submit_copy,
//                   rig_buffer_copy, the blits), once however it is staged
//   rig:fill        (device, bytes)            a fill
//   rig:wait_begin  (device, value)            rig_point_wait starts
//   rig:wait_end    (device, value, status)    and returns
//   rig:alloc       (device, bytes)            memory taken from a driver
//   rig:free        (device, bytes)            and given back to it
//   rig:lost        (device, why)              a device is lost
//   rig:handover    (proxy, value, bytes)      a proxy hands work to rigd
//
// Device and function names are NUL-terminated strings of at most 64
// bytes that tracers read from the process's memory during the probe.
#pragma once

#if __has_include(<sys/sdt.h>)
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
#define RIG_PROBE(...) STAP_PROBEV(rig, __VA_ARGS__)
#else
#define RIG_PROBE(...) ((void)0)
#endif
