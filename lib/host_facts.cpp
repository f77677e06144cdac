#include "rig_internal/host_facts.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace rig {
namespace {

// CPUID and XCR0 bits of the psABI's levels, named as the Intel SDM names
// them.  Defined here rather than taken from <cpuid.h> so that x86_level
// builds, and is tested, on every machine.
namespace leaf1_ecx {
constexpr uint32_t sse3 = 1u << 0, ssse3 = 1u << 9, fma = 1u << 12, cmpxchg16b = 1u << 13,
                   sse4_1 = 1u << 19, sse4_2 = 1u << 20, movbe = 1u << 22, popcnt = 1u << 23,
                   osxsave = 1u << 27, avx = 1u << 28, f16c = 1u << 29;
}
namespace leaf7_ebx {
constexpr uint32_t bmi1 = 1u << 3, avx2 = 1u << 5, bmi2 = 1u << 8, avx512f = 1u << 16,
                   avx512dq = 1u << 17, avx512cd = 1u << 28, avx512bw = 1u << 30,
                   avx512vl = 1u << 31;
}
namespace ext1_ecx {
constexpr uint32_t lahf_sahf = 1u << 0, lzcnt = 1u << 5;
}
namespace xcr0_bit {
constexpr uint64_t sse = 1u << 1, avx = 1u << 2, opmask = 1u << 5, zmm_hi256 = 1u << 6,
                   hi16_zmm = 1u << 7;
}

template <typename Word>
bool has_all(Word word, Word bits) {
  return (word & bits) == bits;
}

std::string compute_host_arch() {
#if defined(__x86_64__)
  CpuidWords words;
  unsigned eax, ebx, ecx, edx;
  // __get_cpuid_count answers false for a leaf above the processor's
  // highest: its words stay zero, so the level lacks its features.
  if (__get_cpuid_count(1, 0, &eax, &ebx, &ecx, &edx)) words.leaf1_ecx = ecx;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) words.leaf7_ebx = ebx;
  if (__get_cpuid_count(0x80000001u, 0, &eax, &ebx, &ecx, &edx)) words.ext1_ecx = ecx;
  uint64_t xcr0 = 0;
  // xgetbv faults (#UD) unless the OS set CR4.OSXSAVE, which OSXSAVE reports.
  if (has_all(words.leaf1_ecx, leaf1_ecx::osxsave)) {
    uint32_t low, high;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    xcr0 = (uint64_t{high} << 32) | low;
  }
  return x86_level(words, xcr0);
#elif defined(__aarch64__)
  // The spec reads fp16 from macOS alone: on Linux an arm64 host has no
  // feature rig reads.
  return "arm64";
#else
  struct utsname names;
  if (uname(&names) != 0) return "";
  return names.machine;
#endif
}

// The largest size of cpu0's caches in sysfs; nullopt where none states one.
std::optional<int64_t> sysfs_cache_bytes() {
  const std::filesystem::path caches = "/sys/devices/system/cpu/cpu0/cache";
  std::optional<int64_t> largest;
  std::error_code error;
  std::filesystem::directory_iterator entry(caches, error), end;
  for (; !error && entry != end; entry.increment(error)) {
    if (!entry->path().filename().string().starts_with("index")) continue;
    std::ifstream file(entry->path() / "size");
    const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    const std::optional<int64_t> bytes = parse_cache_size(text);
    if (bytes && (!largest || *bytes > *largest)) largest = bytes;
  }
  return largest;
}

// The largest cache size sysconf states (glibc); nullopt where it states
// none (it answers 0 or -1 for an unknown cache).
std::optional<int64_t> sysconf_cache_bytes() {
  long largest = 0;
  for (int name : {_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL4_CACHE_SIZE}) {
    const long bytes = sysconf(name);
    if (bytes > largest) largest = bytes;
  }
  if (largest <= 0) return std::nullopt;
  return int64_t{largest};
}

}  // namespace

std::string x86_level(const CpuidWords &words, uint64_t xcr0) {
  const bool v2 = has_all(words.leaf1_ecx, leaf1_ecx::cmpxchg16b | leaf1_ecx::popcnt |
                                               leaf1_ecx::sse3 | leaf1_ecx::sse4_1 |
                                               leaf1_ecx::sse4_2 | leaf1_ecx::ssse3) &&
                  has_all(words.ext1_ecx, ext1_ecx::lahf_sahf);
  // AVX's instructions need the OS to save SSE and AVX state (XCR0 bits 1, 2).
  const bool v3 = v2 &&
                  has_all(words.leaf1_ecx, leaf1_ecx::avx | leaf1_ecx::f16c | leaf1_ecx::fma |
                                               leaf1_ecx::movbe | leaf1_ecx::osxsave) &&
                  has_all(words.leaf7_ebx, leaf7_ebx::avx2 | leaf7_ebx::bmi1 | leaf7_ebx::bmi2) &&
                  has_all(words.ext1_ecx, ext1_ecx::lzcnt) &&
                  has_all(xcr0, xcr0_bit::sse | xcr0_bit::avx);
  // AVX-512's need opmask and all 32 ZMM registers' state (bits 5, 6, 7).
  const bool v4 = v3 &&
                  has_all(words.leaf7_ebx, leaf7_ebx::avx512f | leaf7_ebx::avx512bw |
                                               leaf7_ebx::avx512cd | leaf7_ebx::avx512dq |
                                               leaf7_ebx::avx512vl) &&
                  has_all(xcr0, xcr0_bit::opmask | xcr0_bit::zmm_hi256 | xcr0_bit::hi16_zmm);
  if (v4) return "x86-64-v4";
  if (v3) return "x86-64-v3";
  if (v2) return "x86-64-v2";
  return "x86-64";
}

std::optional<int64_t> parse_cache_size(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t'))
    text.remove_suffix(1);
  int64_t multiple = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K': multiple = int64_t{1} << 10; break;
      case 'M': multiple = int64_t{1} << 20; break;
      case 'G': multiple = int64_t{1} << 30; break;
      default: break;
    }
    if (multiple != 1) text.remove_suffix(1);
  }
  if (text.empty()) return std::nullopt;
  int64_t count = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    if (__builtin_mul_overflow(count, 10, &count) || __builtin_add_overflow(count, c - '0', &count))
      return std::nullopt;
  }
  int64_t bytes;
  if (__builtin_mul_overflow(count, multiple, &bytes) || bytes == 0) return std::nullopt;
  return bytes;
}

std::string host_arch() {
  static const std::string arch = compute_host_arch();
  return arch;
}

std::string instruction_set_of(const std::string &arch) {
  if (arch == "x86-64" || arch == "x86-64-v2" || arch == "x86-64-v3" || arch == "x86-64-v4")
    return "x86_64";
  if (arch == "arm64" || arch.starts_with("arm64+")) return "arm64";
  return arch;
}

std::optional<int64_t> host_cache_bytes() {
  static const std::optional<int64_t> bytes = []() -> std::optional<int64_t> {
    try {
      if (std::optional<int64_t> stated = sysfs_cache_bytes()) return stated;
    } catch (...) {
      // Only allocation can throw here; sysconf may still know.
    }
    return sysconf_cache_bytes();
  }();
  return bytes;
}

}  // namespace rig
