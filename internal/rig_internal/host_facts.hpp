// Facts of the host's processor that the host device and memory devices
// state at open: its arch (an instruction-set level), that arch's
// instruction set, and the size of its largest cache.  Each is computed
// once per process; none throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rig {

// The arch of the host (rig.txt, Properties, arch; PROP-10..13): on x86-64
// "x86-64", "x86-64-v2", "x86-64-v3" or "x86-64-v4"; on arm64 "arm64"
// (Linux states no feature rig reads); elsewhere uname's machine string.
std::string host_arch();

// The instruction set of arch: "x86_64" for an x86-64 level, "arm64" for
// an arm64 arch ("arm64" or "arm64+features"), else arch itself.
std::string instruction_set_of(const std::string &arch);

// Bytes of the largest cache of the host's processor as the system states
// it (sysfs, else sysconf); nullopt where it states none.
std::optional<int64_t> host_cache_bytes();

// The CPUID words the x86-64 levels read; a leaf the processor lacks
// reads as zeros.
struct CpuidWords {
  uint32_t leaf1_ecx = 0;      // CPUID.1:ECX
  uint32_t leaf7_ebx = 0;      // CPUID.(EAX=7,ECX=0):EBX
  uint32_t ext1_ecx = 0;       // CPUID.80000001H:ECX
};

// The highest x86-64 psABI micro-architecture level (System V AMD64 psABI
// §3.1.1) whose features words report and whose register state xcr0
// enables.  xcr0 is 0 where CPUID does not report OSXSAVE.
std::string x86_level(const CpuidWords &words, uint64_t xcr0);

// The bytes a sysfs cache "size" file states: a decimal count with an
// optional K, M or G suffix (binary multiples) and trailing whitespace,
// e.g. "32K\n".  nullopt for anything else, zero or an overflow.
std::optional<int64_t> parse_cache_size(std::string_view text);

}  // namespace rig
