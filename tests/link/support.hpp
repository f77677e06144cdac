// Helpers of the linker's suites: compiling the kernels of kernels/ with
// clang when a test runs, reading and mutating ELF objects, and linking
// with assertions.  The ELF reader here uses <elf.h> and shares no code with
// lib/elf_link.cpp, so that the suites check the linker's layout and fields
// against values they compute on their own.
#pragma once

#include "rig_internal/elf_link.hpp"

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace link_test {

enum class Arch { x86_64, aarch64 };

uint16_t machine_of(Arch arch);

// The host's architecture: the one whose objects link_host takes.
Arch host_arch();

// Compiles kernels/<kernel>.c with the spec's flags for arch (rig.txt,
// Objects): clang -c -O2 -fPIC --target=<arch>-none-unknown-elf, and
// -ffixed-x18 for arm64, then extra_flags.  Fails the test if clang fails.
std::vector<uint8_t> compile(const std::string &kernel, Arch arch, const std::vector<std::string> &extra_flags = {});

// An ELF object's bytes, read and written in place.
class Elf {
 public:
  struct Relocation {
    size_t patched_section;  // the section the relocation patches
    size_t entry_offset;     // the file offset of its Elf64_Rela
    Elf64_Rela rela;
    uint32_t type() const { return uint32_t(ELF64_R_TYPE(rela.r_info)); }
    uint32_t symbol() const { return uint32_t(ELF64_R_SYM(rela.r_info)); }
  };

  explicit Elf(std::vector<uint8_t> bytes) : bytes(std::move(bytes)) {}

  template <typename T>
  T read(size_t offset) const {
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof value);
    return value;
  }
  template <typename T>
  void write(size_t offset, T value) {
    std::memcpy(bytes.data() + offset, &value, sizeof value);
  }

  Elf64_Ehdr header() const { return read<Elf64_Ehdr>(0); }
  size_t section_count() const { return header().e_shnum; }
  size_t section_header_offset(size_t index) const { return header().e_shoff + index * sizeof(Elf64_Shdr); }
  Elf64_Shdr section(size_t index) const { return read<Elf64_Shdr>(section_header_offset(index)); }
  std::string section_name(size_t index) const;
  // The index of the first section of that name; fails the test if none.
  size_t section_index(const std::string &name) const;

  size_t symtab_index() const;
  size_t symbol_count() const { return section(symtab_index()).sh_size / sizeof(Elf64_Sym); }
  size_t symbol_offset(size_t index) const { return section(symtab_index()).sh_offset + index * sizeof(Elf64_Sym); }
  Elf64_Sym symbol(size_t index) const { return read<Elf64_Sym>(symbol_offset(index)); }
  std::string symbol_name(size_t index) const;
  size_t symbol_index(const std::string &name) const;  // fails the test if none

  // Every relocation of every SHT_RELA section, in file order.
  std::vector<Relocation> relocations() const;
  // The first relocation of that type; fails the test if none.
  Relocation first_relocation(uint32_t type) const;

  // Sets a field of section index's header, at offsetof(Elf64_Shdr, field).
  template <typename T>
  void set_section_field(size_t index, size_t field_offset, T value) {
    write<T>(section_header_offset(index) + field_offset, value);
  }

  std::vector<uint8_t> bytes;

 private:
  std::string string_at(size_t table, size_t offset) const;
};

using Resolver = std::function<std::optional<uint64_t>(std::string_view)>;

// Links for machine at base, failing the test with the reason if it fails.
rig::LinkedForTest link_ok(const Elf &object, uint16_t machine, uint64_t base, const Resolver &resolve);
// Links for machine at base, failing the test if it links; the reason,
// which must not be empty.
std::string link_error(const Elf &object, uint16_t machine, uint64_t base, const Resolver &resolve);

std::unique_ptr<rig::HostImage> host_link_ok(const Elf &object);
std::string host_link_error(const Elf &object);

// Fails the test unless text contains every one of words.
void assert_mentions(const std::string &text, std::initializer_list<const char *> words);

// The addresses a relocation's formula uses, from the object's entries and
// the link's section addresses: P, the place; S, the symbol's address (the
// section's address plus the value, or what resolve gives an undefined
// symbol); A, the addend.
struct Formula {
  uint64_t P = 0, S = 0;
  int64_t A = 0;
  bool undefined = false;
  std::string name;  // the symbol's name
};
Formula formula_of(const Elf &object, const rig::LinkedForTest &linked, const Elf::Relocation &relocation,
                   const Resolver &resolve);

// The little-endian 32-bit word of the linked image at address.
uint32_t word_at(const rig::LinkedForTest &linked, uint64_t address);
uint64_t quad_at(const rig::LinkedForTest &linked, uint64_t address);

// Asserts LINK-20 and that the link changed nothing but fields: every
// allocated section of the object has an address in linked.sections that
// is a multiple of its alignment, sections do not overlap, the stubs lie
// after them all, and each section's bytes equal the object's but for the
// bits that field_mask(type) gives in the 4 bytes each relocation patches.
void check_layout(const Elf &object, const rig::LinkedForTest &linked,
                  const std::function<uint32_t(uint32_t type)> &field_mask);

}  // namespace link_test
