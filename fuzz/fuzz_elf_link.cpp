// libFuzzer target of the host's ELF linker (lib/elf_link.cpp, LINK-04,
// LINK-06): on any bytes, link_host and link_for_test return an image or
// a reason, and never crash, leak or trip a sanitizer.  The seed corpus is
// the link suites' kernels (tests/link/kernels) compiled for x86_64 and
// arm64, which fuzz/CMakeLists.txt builds as fuzz_elf_link_corpus.
#include "rig_internal/elf_link.hpp"

#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace {

// Defines every name but those of odd length (so that LINK-18's refusal is
// reached), some within a branch's reach of the test base and some far.
std::optional<uint64_t> resolve(std::string_view name) {
  if (name.size() % 2 == 1) return std::nullopt;
  uint64_t hash = 1469598103934665603ull;
  for (char c : name) hash = (hash ^ uint8_t(c)) * 1099511628211ull;
  return hash % 4 == 0 ? 0x7f0000001230 + (hash & 0xfff0) : 0x100400000 + (hash & 0xffff0);
}

// Reads the image's functions for a few names, as a program would.
void use(const rig::HostImage &image) {
  for (const char *name : {"add", "f", "k", "main", ""}) (void)image.resolve(name);
  (void)image.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto host = rig::link_host(data, size);
  if (auto *image = std::get_if<std::unique_ptr<rig::HostImage>>(&host)) use(**image);

  const uint64_t base = uint64_t{1} << 32;
  for (uint16_t machine : {uint16_t{62} /* EM_X86_64 */, uint16_t{183} /* EM_AARCH64 */}) {
    auto linked = rig::link_for_test(data, size, machine, base, resolve);
    if (auto *image = std::get_if<rig::LinkedForTest>(&linked)) {
      // Every address the link reports lies inside its image.
      for (const auto *table : {&image->symbols, &image->stubs})
        for (const auto &[name, address] : *table)
          if (address < base || address - base > image->image.size()) __builtin_trap();
    }
  }
  return 0;
}
