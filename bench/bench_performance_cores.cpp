// The host's performance cores as the host's pool counts them
// (drivers/host), for bench_launch to print beside the pool's speed-up:
// librig exports no such call, so the benchmark counts them itself, as the
// first thread to ask, which the pool's count also is.
#include "performance_cores.hpp"

extern "C" int bench_performance_cores(void) { return rig::performance_cores(); }
