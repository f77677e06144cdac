// Spin-waits of rig's threads and of rigd's, on words other threads or
// processes raise.
#pragma once

#include <sched.h>

namespace rig {

// Turns of a spin-wait that yield nothing: a round trip through rigd takes
// a few microseconds, and a yield (a system call) costs about one.
constexpr unsigned yield_free_turns = 512;

// Turn number turn of a spin-wait: a pause for the core and, every 64th
// turn past the first 512 (some 15 us), a yield of the CPU, so that where
// threads outnumber cores the spinning ones let the one with work run,
// while a short wait makes no system call.
inline void spin_turn(unsigned turn) noexcept {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
  if (turn >= yield_free_turns && turn % 64 == 63) sched_yield();
}

}  // namespace rig
