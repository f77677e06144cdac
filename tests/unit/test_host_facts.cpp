/* Unit tests of lib/host_facts: the host's arch, instruction set and cache.
 *
 * Asserts: PROP-10 (the x86-64 level is the highest whose features CPUID
 * reports and whose state XCR0 enables: synthetic CPUID/XCR0 words, and
 * this machine against /proc/cpuinfo), PROP-11 (the levels are cumulative:
 * a higher level's features count only over a lower level's),
 * PROP-12/PROP-13 (an arm64 Linux host is "arm64", on an arm64 machine),
 * and rig.txt's instruction_set and cache_bytes of the host (no rule ID).
 *
 * Not reached: PROP-13's macOS fp16 (rig reads it on macOS alone, which
 * this Linux runtime does not build for); PROP-14 (which arch runs whose
 * code is the code loader's rule, not a fact of the host).
 */
#include "rig_internal/host_facts.hpp"

#include <criterion/criterion.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using rig::CpuidWords;
using rig::x86_level;

namespace {

// The psABI's features at their Intel SDM bit positions, written out here
// independently of the implementation's table.
constexpr uint32_t bit(int n) { return uint32_t{1} << n; }

// CPUID.1:ECX
constexpr uint32_t SSE3 = bit(0), SSSE3 = bit(9), FMA = bit(12), CMPXCHG16B = bit(13),
                   SSE4_1 = bit(19), SSE4_2 = bit(20), MOVBE = bit(22), POPCNT = bit(23),
                   OSXSAVE = bit(27), AVX = bit(28), F16C = bit(29);
// CPUID.(7,0):EBX
constexpr uint32_t BMI1 = bit(3), AVX2 = bit(5), BMI2 = bit(8), AVX512F = bit(16),
                   AVX512DQ = bit(17), AVX512CD = bit(28), AVX512BW = bit(30), AVX512VL = bit(31);
// CPUID.80000001H:ECX
constexpr uint32_t LAHF_SAHF = bit(0), LZCNT = bit(5);
// XCR0 state components
constexpr uint64_t XCR0_X87 = 1, XCR0_SSE = 2, XCR0_AVX = 4, XCR0_OPMASK = 32,
                   XCR0_ZMM_HI256 = 64, XCR0_HI16_ZMM = 128;
constexpr uint64_t XCR0_V3 = XCR0_X87 | XCR0_SSE | XCR0_AVX;
constexpr uint64_t XCR0_V4 = XCR0_V3 | XCR0_OPMASK | XCR0_ZMM_HI256 | XCR0_HI16_ZMM;

// One feature of a level: the word it is in and its bit.
enum class Word { Leaf1Ecx, Leaf7Ebx, Ext1Ecx };
struct Feature {
  const char *name;
  Word word;
  uint32_t bit;
};

const std::vector<Feature> v2_features = {
    {"CMPXCHG16B", Word::Leaf1Ecx, CMPXCHG16B}, {"LAHF-SAHF", Word::Ext1Ecx, LAHF_SAHF},
    {"POPCNT", Word::Leaf1Ecx, POPCNT},         {"SSE3", Word::Leaf1Ecx, SSE3},
    {"SSE4_1", Word::Leaf1Ecx, SSE4_1},         {"SSE4_2", Word::Leaf1Ecx, SSE4_2},
    {"SSSE3", Word::Leaf1Ecx, SSSE3}};
const std::vector<Feature> v3_features = {
    {"AVX", Word::Leaf1Ecx, AVX},     {"AVX2", Word::Leaf7Ebx, AVX2},
    {"BMI1", Word::Leaf7Ebx, BMI1},   {"BMI2", Word::Leaf7Ebx, BMI2},
    {"F16C", Word::Leaf1Ecx, F16C},   {"FMA", Word::Leaf1Ecx, FMA},
    {"LZCNT", Word::Ext1Ecx, LZCNT},  {"MOVBE", Word::Leaf1Ecx, MOVBE},
    {"OSXSAVE", Word::Leaf1Ecx, OSXSAVE}};
const std::vector<Feature> v4_features = {
    {"AVX512F", Word::Leaf7Ebx, AVX512F},   {"AVX512BW", Word::Leaf7Ebx, AVX512BW},
    {"AVX512CD", Word::Leaf7Ebx, AVX512CD}, {"AVX512DQ", Word::Leaf7Ebx, AVX512DQ},
    {"AVX512VL", Word::Leaf7Ebx, AVX512VL}};

uint32_t &word_of(CpuidWords &words, Word word) {
  switch (word) {
    case Word::Leaf1Ecx: return words.leaf1_ecx;
    case Word::Leaf7Ebx: return words.leaf7_ebx;
    case Word::Ext1Ecx: break;
  }
  return words.ext1_ecx;
}

// The words of a processor with every feature of the given lists.
CpuidWords words_with(std::initializer_list<const std::vector<Feature> *> levels) {
  CpuidWords words;
  for (const auto *features : levels)
    for (const Feature &f : *features) word_of(words, f.word) |= f.bit;
  return words;
}

const CpuidWords v2_words = words_with({&v2_features});
const CpuidWords v3_words = words_with({&v2_features, &v3_features});
const CpuidWords v4_words = words_with({&v2_features, &v3_features, &v4_features});

// Criterion's cr_assert_str_eq keeps only a pointer into its argument,
// which dangles for a temporary std::string: compare the strings here.
void expect_string(const std::string &actual, const std::string &expected,
                   const std::string &context = "") {
  cr_assert(actual == expected, "\"%s\", expected \"%s\" %s", actual.c_str(), expected.c_str(),
            context.c_str());
}

// Asserts that words lacking each one feature of features is level below.
void expect_each_missing_feature_gives(const CpuidWords &words, uint64_t xcr0,
                                       const std::vector<Feature> &features, const char *below) {
  for (const Feature &f : features) {
    CpuidWords lacking = words;
    word_of(lacking, f.word) &= ~f.bit;
    expect_string(x86_level(lacking, xcr0), below, std::string("for CPUID without ") + f.name);
  }
}

// Asserts that xcr0 lacking each one of bits gives level below.
void expect_each_missing_state_gives(const CpuidWords &words, uint64_t xcr0,
                                     std::initializer_list<uint64_t> bits, const char *below) {
  for (uint64_t b : bits) {
    std::ostringstream context;
    context << "for XCR0 0x" << std::hex << (xcr0 & ~b);
    expect_string(x86_level(words, xcr0 & ~b), below, context.str());
  }
}

}  // namespace

Test(x86_level, PROP_10_no_psABI_feature_is_the_baseline) {
  expect_string(x86_level(CpuidWords{}, 0), "x86-64");
  expect_string(x86_level(CpuidWords{}, XCR0_V4), "x86-64");
}

Test(x86_level, PROP_10_v2_needs_each_of_its_features) {
  expect_string(x86_level(v2_words, 0), "x86-64-v2");
  expect_each_missing_feature_gives(v2_words, 0, v2_features, "x86-64");
}

Test(x86_level, PROP_10_v3_needs_each_of_its_features) {
  expect_string(x86_level(v3_words, XCR0_V3), "x86-64-v3");
  expect_each_missing_feature_gives(v3_words, XCR0_V3, v3_features, "x86-64-v2");
}

Test(x86_level, PROP_10_v3_needs_the_OS_to_enable_SSE_and_AVX_state) {
  // AVX2 and the rest reported, but XCR0 without SSE or AVX state.
  expect_each_missing_state_gives(v3_words, XCR0_V3, {XCR0_SSE, XCR0_AVX}, "x86-64-v2");
  expect_string(x86_level(v3_words, 0), "x86-64-v2");
  expect_string(x86_level(v4_words, XCR0_X87 | XCR0_SSE), "x86-64-v2");
}

Test(x86_level, PROP_10_v4_needs_each_of_its_features) {
  expect_string(x86_level(v4_words, XCR0_V4), "x86-64-v4");
  expect_each_missing_feature_gives(v4_words, XCR0_V4, v4_features, "x86-64-v3");
}

Test(x86_level, PROP_10_v4_needs_the_OS_to_enable_opmask_and_ZMM_state) {
  expect_each_missing_state_gives(v4_words, XCR0_V4, {XCR0_OPMASK, XCR0_ZMM_HI256, XCR0_HI16_ZMM},
                                  "x86-64-v3");
  expect_string(x86_level(v4_words, XCR0_V3), "x86-64-v3");
}

Test(x86_level, PROP_11_a_level_counts_only_over_the_levels_below) {
  // AVX-512 without a v3 feature is not v4; v3's features without v2's
  // are not v3.
  CpuidWords no_movbe = v4_words;
  no_movbe.leaf1_ecx &= ~MOVBE;
  expect_string(x86_level(no_movbe, XCR0_V4), "x86-64-v2");
  CpuidWords no_popcnt = v4_words;
  no_popcnt.leaf1_ecx &= ~POPCNT;
  expect_string(x86_level(no_popcnt, XCR0_V4), "x86-64");
}

Test(x86_level, PROP_10_unrelated_bits_do_not_matter) {
  CpuidWords noisy = v3_words;
  noisy.leaf1_ecx |= bit(25) | bit(30);  // AES, RDRAND
  noisy.leaf7_ebx |= bit(0) | bit(29);   // FSGSBASE, SHA
  noisy.ext1_ecx |= bit(6);              // SSE4A
  expect_string(x86_level(noisy, XCR0_V3 | bit(9)), "x86-64-v3");
}

Test(parse_cache_size, reads_sysfs_sizes_with_their_suffix) {
  const struct {
    const char *text;
    int64_t bytes;
  } cases[] = {{"32K", 32 << 10},           {"1024K\n", 1024 << 10}, {"32768K\n", 32768LL << 10},
               {"16M", 16LL << 20},          {"2G", 2LL << 30},       {"512", 512},
               {"48K  \n", 48 << 10}};
  for (const auto &c : cases) {
    const std::optional<int64_t> bytes = rig::parse_cache_size(c.text);
    cr_assert(bytes.has_value(), "\"%s\" not parsed", c.text);
    cr_assert_eq(*bytes, c.bytes, "\"%s\" gave %lld", c.text, static_cast<long long>(*bytes));
  }
}

Test(parse_cache_size, refuses_what_is_not_a_size) {
  for (const char *text : {"", "\n", "K", "12X", "-1K", "0K", "0", "x32K", "3 2K", "32KB", "1.5M",
                           "99999999999999999999K", "9007199254740992G"})
    cr_assert(!rig::parse_cache_size(text).has_value(), "\"%s\" parsed", text);
}

Test(instruction_set_of, names_the_instruction_set_of_an_arch) {
  for (const char *level : {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"})
    expect_string(rig::instruction_set_of(level), "x86_64", level);
  for (const char *arch : {"arm64", "arm64+fp16", "arm64+bf16+fp16"})
    expect_string(rig::instruction_set_of(arch), "arm64", arch);
  // Any other arch is its own instruction set, near-misses included.
  for (const char *arch : {"gfx1100", "sm_89", "Apple7", "memory", "", "x86-64-v5", "x86_64",
                           "arm64fp16", "riscv64"})
    expect_string(rig::instruction_set_of(arch), arch, arch);
}

#if defined(__x86_64__)

namespace {

// The flags of the first processor in /proc/cpuinfo.
std::set<std::string> cpuinfo_flags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!line.starts_with("flags")) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    return {std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
  }
  return {};
}

bool has_flags(const std::set<std::string> &flags, std::initializer_list<const char *> names) {
  return std::all_of(names.begin(), names.end(),
                     [&](const char *name) { return flags.count(name) != 0; });
}

// Whether LZCNT runs as LZCNT: where it does not, the processor reads it
// as BSR, which answers 0 for 1 where LZCNT answers 31.  Some hypervisors
// hide ABM (LZCNT) from the kernel's CPUID while user code's CPUID and
// LZCNT reach the processor itself (its cpuinfo then lacks "abm"): the
// instruction is the processor's own word on it.
bool lzcnt_runs() {
  uint32_t zeros = 0, one = 1;
  asm("lzcnt %1, %0" : "=r"(zeros) : "r"(one));
  return zeros == 31;
}

// The level Linux's view implies: its cpuinfo flags (it drops those whose
// state it does not save, and OSXSAVE shows as its "xsave"), gated by the
// state components it enables in XCR0 for user code where the kernel
// answers ARCH_GET_XCOMP_SUPP (Linux 5.16 on).
std::string level_linux_states() {
  const std::set<std::string> flags = cpuinfo_flags();
  uint64_t user_states = ~uint64_t{0};
  constexpr int arch_get_xcomp_supp = 0x1021;
  uint64_t supported = 0;
  if (syscall(SYS_arch_prctl, arch_get_xcomp_supp, &supported) == 0) user_states = supported;

  const bool v2 = has_flags(flags, {"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"});
  const bool v3 = v2 &&
                  has_flags(flags, {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "xsave"}) &&
                  (flags.count("abm") != 0 || lzcnt_runs()) &&
                  (user_states & XCR0_V3) == XCR0_V3;
  const bool v4 = v3 &&
                  has_flags(flags, {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}) &&
                  (user_states & XCR0_V4) == XCR0_V4;
  return v4 ? "x86-64-v4" : v3 ? "x86-64-v3" : v2 ? "x86-64-v2" : "x86-64";
}

}  // namespace

Test(host_arch, PROP_10_is_the_level_linux_states_for_this_machine) {
  const std::string arch = rig::host_arch();
  const std::set<std::string> levels = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  cr_assert(levels.count(arch) != 0, "host_arch() is \"%s\"", arch.c_str());
  expect_string(arch, level_linux_states());
  expect_string(rig::instruction_set_of(arch), "x86_64");
}

#elif defined(__aarch64__)

Test(host_arch, PROP_12_PROP_13_an_arm64_linux_host_is_arm64) {
  expect_string(rig::host_arch(), "arm64");
  expect_string(rig::instruction_set_of(rig::host_arch()), "arm64");
}

#endif

Test(host_arch, is_one_value_across_threads) {
  std::vector<std::string> seen(4);
  std::vector<std::thread> threads;
  for (std::string &s : seen) threads.emplace_back([&s] { s = rig::host_arch(); });
  for (std::thread &t : threads) t.join();
  for (const std::string &s : seen) expect_string(s, rig::host_arch());
  cr_assert(!rig::host_arch().empty());
}

namespace {

// The largest cache size sysfs states for cpu0, read with sscanf.
std::optional<int64_t> largest_sysfs_cache() {
  std::optional<int64_t> largest;
  const std::filesystem::path caches = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator(caches, error)) {
    if (!entry.path().filename().string().starts_with("index")) continue;
    std::ifstream file(entry.path() / "size");
    std::string text;
    std::getline(file, text);
    long long count = 0;
    char unit = 0;
    const int read = std::sscanf(text.c_str(), "%lld%c", &count, &unit);
    if (read < 1) continue;
    const int64_t scale = read == 1 ? 1 : unit == 'K' ? 1 << 10 : unit == 'M' ? 1 << 20 : 1 << 30;
    largest = std::max(largest.value_or(0), int64_t{count} * scale);
  }
  return largest;
}

}  // namespace

Test(host_cache_bytes, is_the_largest_cache_the_system_states) {
  const std::optional<int64_t> bytes = rig::host_cache_bytes();
  if (const std::optional<int64_t> sysfs = largest_sysfs_cache()) {
    cr_assert(bytes.has_value(), "sysfs states %lld bytes", static_cast<long long>(*sysfs));
    cr_assert_eq(*bytes, *sysfs, "%lld, sysfs states %lld", static_cast<long long>(*bytes),
                 static_cast<long long>(*sysfs));
  } else {
    long sysconf_largest = 0;
    for (int name : {_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL4_CACHE_SIZE})
      sysconf_largest = std::max(sysconf_largest, sysconf(name));
    cr_assert_eq(bytes.value_or(0), sysconf_largest);
  }
  cr_assert_eq(rig::host_cache_bytes(), bytes, "not one value");
}
