// Spin-waits of rig's threads and of rigd's, on words other threads or
// processes raise.
#pragma once

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace rig {

// One pause for the core.
inline void spin_pause() noexcept {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The turns of a spin-wait that yield nothing: some 4 us of pauses,
// timed once per process, since a pause takes from a few to some 50 ns by
// the processor.  A round trip through rigd takes one or two microseconds,
// so a wait that the other side ends at once makes no system call; where
// the two sides share a core (threads outnumber cores) each yields within
// microseconds, not after the tens that a count of turns fixed for the
// slowest pause would let it spin.
inline unsigned yield_free_turns() noexcept {
  static const unsigned turns = [] {
    constexpr int timed = 256;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < timed; i++) spin_pause();
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    double per_pause = std::max(ns / timed, 0.5);
    return static_cast<unsigned>(std::clamp(4000.0 / per_pause, 64.0, 8192.0));
  }();
  return turns;
}

// Turn number turn of a spin-wait: a pause for the core and, every 64th
// turn past yield_free_turns, a yield of the CPU, so that where threads
// outnumber cores the spinning ones let the one with work run, while a
// short wait makes no system call.
inline void spin_turn(unsigned turn) noexcept {
  spin_pause();
  if (turn % 64 == 63 && turn >= yield_free_turns()) sched_yield();
}

}  // namespace rig
