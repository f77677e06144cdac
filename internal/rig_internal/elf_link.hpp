// The host's ELF linker (rig.txt, Running work: Host code, Linking,
// Relocations, Symbols, Platform support; RULES.md LINK-01..41).
//
// It links one relocatable ELF object (ET_REL) made by a C compiler for no
// operating system, such as clang -c -O2 -fPIC
// --target=x86_64-none-unknown-elf, into read-and-execute memory of this
// process.  It depends on nothing else of lib/.
//
// Decisions where the spec leaves room, applied alike by both entry points:
// - Every relocation section of the object counts, whichever section it
//   patches: a relocation of a section outside the image, such as debug
//   information (.rela.debug_info of -g), patches outside the image and is
//   refused (LINK-16).
// - A relocation may use a symbol defined in an allocated section, an
//   undefined symbol, or a section symbol.  An absolute symbol (SHN_ABS),
//   a common one (SHN_COMMON), any other reserved index, a thread-local one
//   (STT_TLS) or one of a section outside the image is "defined outside the
//   image" and refused (LINK-15).
// - The symbols the object "refers to" are those its relocations use.  Each
//   one that the object leaves undefined, and does not define under the
//   same name either, gets a stub, whether or not its uses go through it.
// - A weak undefined symbol must be defined by the process as any other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rig {

// A linked image in memory of this process that is readable and
// executable and never writable (LINK-22, LINK-41).
class HostImage {
 public:
  HostImage(const HostImage &) = delete;
  HostImage &operator=(const HostImage &) = delete;
  ~HostImage();  // unmaps the image

  // The address of a function of the image: a named symbol of type
  // STT_FUNC or STT_NOTYPE, global, weak or local, defined in an allocated
  // executable section (Host code).  A global or weak symbol wins over a
  // local one of the same name.  nullptr if there is none.
  void *resolve(std::string_view name) const;

  // Bytes of the image and its stubs, from base().
  size_t size() const { return size_; }
  const void *base() const { return base_; }
  // Bytes of the mapping that holds them: size() in whole pages.
  size_t mapped_bytes() const { return mapping_bytes_; }

 private:
  friend std::variant<std::unique_ptr<HostImage>, std::string> link_host(const void *, size_t);
  HostImage(void *mapping, size_t mapping_bytes, const void *base, size_t size,
            std::map<std::string, uint64_t, std::less<>> functions);

  void *mapping_;
  size_t mapping_bytes_;
  const void *base_;
  size_t size_;
  std::map<std::string, uint64_t, std::less<>> functions_;  // name -> offset from base_
};

// Links a relocatable ELF object for the host's machine (EM_X86_64 on
// x86_64, EM_AARCH64 on arm64) into new executable memory, resolving the
// symbols it does not define with dlsym(RTLD_DEFAULT, name); or returns the
// reason it cannot.  Never throws, and never crashes on any n bytes at
// bytes (bytes may be null when n is 0).
std::variant<std::unique_ptr<HostImage>, std::string> link_host(const void *bytes, size_t n);

// An image linked by link_for_test.
struct LinkedForTest {
  std::vector<uint8_t> image;                 // image and stubs, as they would lie at base
  uint64_t base = 0;                          // the address the image was linked for
  std::map<std::string, uint64_t> symbols;    // each function resolve() would find -> address
  std::map<std::string, uint64_t> stubs;      // each undefined symbol -> address of its stub
  std::map<uint32_t, uint64_t> sections;      // each allocated section's index -> address
};

// For tests: links for machine (EM_X86_64 or EM_AARCH64, whatever the host)
// into a writable buffer as if it lay at base, without mapping anything
// executable, resolving undefined symbols through resolve_external
// (nullopt: the process does not define it).  base must be a multiple of
// the largest alignment the image asks (at least 16).  Images over 64 MiB
// are refused, as a buffer of that size serves no test.
std::variant<LinkedForTest, std::string> link_for_test(
    const void *bytes, size_t n, uint16_t machine, uint64_t base,
    const std::function<std::optional<uint64_t>(std::string_view)> &resolve_external);

}  // namespace rig
