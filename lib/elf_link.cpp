// The host's ELF linker: parse and check an object, lay out its image and
// stubs, resolve its symbols, write and relocate the image, and map it
// executable.  See elf_link.hpp for the rules and the decisions taken.
//
// Every read of the input goes through Bytes, which checks its range with
// overflow-safe arithmetic, and every refusal throws Refusal, which the two
// entry points turn into their reason.  Relocation arithmetic runs in 128
// bits, so that S + A - P never overflows before its field is checked.
#include "rig_internal/elf_link.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <unordered_map>

namespace rig {
namespace {

// ---- ELF constants: System V gABI, x86-64 psABI §4.4, ELF for the Arm 64-bit Architecture §5.7.

constexpr uint16_t kEmX86_64 = 62;
constexpr uint16_t kEmAarch64 = 183;
constexpr uint16_t kEtRel = 1;

constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtStrtab = 3;
constexpr uint32_t kShtRela = 4;
constexpr uint32_t kShtNobits = 8;
constexpr uint32_t kShtRel = 9;
constexpr uint32_t kShtSymtabShndx = 18;

constexpr uint64_t kShfWrite = 0x1;
constexpr uint64_t kShfAlloc = 0x2;
constexpr uint64_t kShfExecinstr = 0x4;
constexpr uint64_t kShfCompressed = 0x800;

constexpr uint32_t kShnUndef = 0;
constexpr uint32_t kShnLoreserve = 0xff00;
constexpr uint32_t kShnAbs = 0xfff1;
constexpr uint32_t kShnCommon = 0xfff2;
constexpr uint32_t kShnXindex = 0xffff;

constexpr uint8_t kSttNotype = 0;
constexpr uint8_t kSttFunc = 2;
constexpr uint8_t kSttTls = 6;
constexpr uint8_t kStbLocal = 0;
constexpr uint8_t kStbGlobal = 1;
constexpr uint8_t kStbWeak = 2;

constexpr uint32_t kRX86_64Pc32 = 2;
constexpr uint32_t kRX86_64Plt32 = 4;
constexpr uint32_t kRAarch64AdrPrelPgHi21 = 275;
constexpr uint32_t kRAarch64AddAbsLo12Nc = 277;
constexpr uint32_t kRAarch64Ldst8AbsLo12Nc = 278;
constexpr uint32_t kRAarch64Jump26 = 282;
constexpr uint32_t kRAarch64Call26 = 283;
constexpr uint32_t kRAarch64Ldst16AbsLo12Nc = 284;
constexpr uint32_t kRAarch64Ldst32AbsLo12Nc = 285;
constexpr uint32_t kRAarch64Ldst64AbsLo12Nc = 286;
constexpr uint32_t kRAarch64Ldst128AbsLo12Nc = 299;

constexpr size_t kEhdrSize = 64;
constexpr size_t kShdrSize = 64;
constexpr size_t kSymSize = 24;
constexpr size_t kRelaSize = 24;

// Each stub is 16 bytes at a multiple of 16 after the image.
constexpr uint64_t kStubSize = 16;
constexpr uint64_t kMaxImageBytes = std::numeric_limits<int64_t>::max();  // max_int (LINK-19)
constexpr uint64_t kMaxTestImageBytes = uint64_t{64} << 20;

using i128 = __int128;

// ---- Refusals and messages.

struct Refusal {
  std::string why;
};

[[noreturn]] void refuse(std::string why) { throw Refusal{std::move(why)}; }

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, v);
  return text;
}

std::string hex128(i128 v) {
  // Built in a buffer: "-" + string trips a false -Wrestrict of GCC 12.
  i128 magnitude = v < 0 ? -v : v;
  if (magnitude > std::numeric_limits<uint64_t>::max()) return "more than 64 bits";
  char text[32];
  std::snprintf(text, sizeof text, "%s0x%" PRIx64, v < 0 ? "-" : "", static_cast<uint64_t>(magnitude));
  return text;
}

// A name from the object as a reason quotes it: bytes outside printable
// ASCII become '?', so that a reason is always readable text.
std::string printable(std::string_view name) {
  std::string text(name);
  for (char &c : text)
    if (c < 0x20 || c > 0x7e) c = '?';
  return text;
}

const char *machine_name(uint16_t machine) {
  switch (machine) {
    case kEmX86_64: return "EM_X86_64";
    case kEmAarch64: return "EM_AARCH64";
    default: return nullptr;
  }
}

std::string describe_machine(uint16_t machine) {
  const char *name = machine_name(machine);
  return name ? name : "machine " + std::to_string(machine);
}

// The names of the relocation types the linker supports, and of those a
// compiler commonly emits that it refuses, for the reasons it gives.
std::string relocation_name(uint16_t machine, uint32_t type) {
  static const std::unordered_map<uint32_t, const char *> x86_64 = {
      {0, "R_X86_64_NONE"}, {1, "R_X86_64_64"}, {2, "R_X86_64_PC32"}, {3, "R_X86_64_GOT32"},
      {4, "R_X86_64_PLT32"}, {9, "R_X86_64_GOTPCREL"}, {10, "R_X86_64_32"}, {11, "R_X86_64_32S"},
      {19, "R_X86_64_TLSGD"}, {20, "R_X86_64_TLSLD"}, {21, "R_X86_64_DTPOFF32"},
      {22, "R_X86_64_GOTTPOFF"}, {23, "R_X86_64_TPOFF32"}, {24, "R_X86_64_PC64"},
      {26, "R_X86_64_GOTPC32"}, {41, "R_X86_64_GOTPCRELX"}, {42, "R_X86_64_REX_GOTPCRELX"}};
  static const std::unordered_map<uint32_t, const char *> aarch64 = {
      {0, "R_AARCH64_NONE"}, {257, "R_AARCH64_ABS64"}, {258, "R_AARCH64_ABS32"},
      {260, "R_AARCH64_PREL64"}, {261, "R_AARCH64_PREL32"}, {274, "R_AARCH64_ADR_PREL_LO21"},
      {275, "R_AARCH64_ADR_PREL_PG_HI21"}, {276, "R_AARCH64_ADR_PREL_PG_HI21_NC"},
      {277, "R_AARCH64_ADD_ABS_LO12_NC"}, {278, "R_AARCH64_LDST8_ABS_LO12_NC"},
      {282, "R_AARCH64_JUMP26"}, {283, "R_AARCH64_CALL26"}, {284, "R_AARCH64_LDST16_ABS_LO12_NC"},
      {285, "R_AARCH64_LDST32_ABS_LO12_NC"}, {286, "R_AARCH64_LDST64_ABS_LO12_NC"},
      {299, "R_AARCH64_LDST128_ABS_LO12_NC"}, {311, "R_AARCH64_ADR_GOT_PAGE"},
      {312, "R_AARCH64_LD64_GOT_LO12_NC"}};
  const auto &names = machine == kEmX86_64 ? x86_64 : aarch64;
  auto found = names.find(type);
  std::string number = "type " + std::to_string(type);
  return found == names.end() ? number : std::string(found->second) + " (" + number + ")";
}

bool supported_relocation(uint16_t machine, uint32_t type) {
  if (machine == kEmX86_64) return type == kRX86_64Pc32 || type == kRX86_64Plt32;
  switch (type) {
    case kRAarch64AdrPrelPgHi21:
    case kRAarch64AddAbsLo12Nc:
    case kRAarch64Ldst8AbsLo12Nc:
    case kRAarch64Ldst16AbsLo12Nc:
    case kRAarch64Ldst32AbsLo12Nc:
    case kRAarch64Ldst64AbsLo12Nc:
    case kRAarch64Ldst128AbsLo12Nc:
    case kRAarch64Jump26:
    case kRAarch64Call26:
      return true;
    default:
      return false;
  }
}

// ---- Bounds-checked little-endian reads of the input.

class Bytes {
 public:
  Bytes(const void *data, size_t size) : data_(static_cast<const uint8_t *>(data)), size_(data ? size : 0) {}

  size_t size() const { return size_; }
  bool contains(uint64_t offset, uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }
  // The width-byte little-endian integer at offset, which must lie inside.
  uint64_t le(uint64_t offset, int width) const {
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; i--) v = (v << 8) | data_[offset + i];
    return v;
  }
  const uint8_t *at(uint64_t offset) const { return data_ + offset; }

 private:
  const uint8_t *data_;
  size_t size_;
};

uint32_t get32(const uint8_t *p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = uint8_t(v >> (8 * i));
}
void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = uint8_t(v >> (8 * i));
}

// ---- The object, as parsed and checked.

struct Section {
  std::string_view name;
  uint32_t type = 0;
  uint64_t flags = 0, offset = 0, size = 0, align = 0, entsize = 0;
  uint32_t link = 0, info = 0;
  bool allocated() const { return flags & kShfAlloc; }
};

struct Symbol {
  std::string_view name;
  uint8_t bind = 0, type = 0;
  uint32_t section = 0;  // its section's index, or a reserved SHN_ value
  uint64_t value = 0;
};

struct Relocation {
  uint32_t section = 0;  // the section it patches
  uint64_t offset = 0;
  uint32_t type = 0;
  uint32_t symbol = 0;
  int64_t addend = 0;
};

struct Object {
  uint16_t machine = 0;
  std::vector<Section> sections;
  std::vector<Symbol> symbols;
  std::vector<Relocation> relocations;

  std::string section_name(uint32_t index) const {
    if (index < sections.size() && !sections[index].name.empty()) return printable(sections[index].name);
    return "section " + std::to_string(index);
  }
  std::string symbol_name(uint32_t index) const {
    const Symbol &s = symbols[index];
    // Appended: "`" + string trips the same false -Wrestrict of GCC 12 as
    // in hex128 where this is inlined with hidden visibility.
    if (!s.name.empty()) return std::string("`").append(printable(s.name)).append("'");
    return "symbol " + std::to_string(index) + " (" + section_name(s.section) + ")";
  }
  std::string describe(const Relocation &r) const {
    return "relocation " + relocation_name(machine, r.type) + " at " + section_name(r.section) + "+" +
           hex(r.offset) + " against " + symbol_name(r.symbol);
  }
};

// The NUL-terminated string at offset of string table section index.
std::string_view string_at(const Bytes &file, const std::vector<Section> &sections, uint32_t index,
                           uint64_t offset, const char *what) {
  const Section &table = sections[index];
  if (table.type != kShtStrtab) refuse("malformed ELF: the string table of " + std::string(what) + " is not SHT_STRTAB");
  if (offset >= table.size)
    refuse("malformed ELF: the name of " + std::string(what) + " lies outside its string table");
  const char *start = reinterpret_cast<const char *>(file.at(table.offset + offset));
  const void *end = std::memchr(start, 0, table.size - offset);
  if (!end) refuse("malformed ELF: the name of " + std::string(what) + " runs past its string table");
  return std::string_view(start, static_cast<const char *>(end) - start);
}

// Checks the ELF header and reads the section headers.
std::vector<Section> read_sections(const Bytes &file, uint16_t machine, bool for_host) {
  if (file.size() < 4 || std::memcmp(file.at(0), "\x7f" "ELF", 4) != 0) refuse("not an ELF file");
  // e_ident (16 bytes) says the class and byte order of the rest.
  if (file.size() < 16) refuse("malformed ELF: truncated ELF identification");
  if (file.le(4, 1) != 2) refuse("not a 64-bit ELF object (EI_CLASS " + std::to_string(file.le(4, 1)) + ")");
  if (file.le(5, 1) != 1) refuse("not a little-endian ELF object (EI_DATA " + std::to_string(file.le(5, 1)) + ")");
  if (file.le(6, 1) != 1) refuse("malformed ELF: unknown ELF version");
  if (file.size() < kEhdrSize) refuse("malformed ELF: truncated ELF header");
  if (file.le(20, 4) != 1) refuse("malformed ELF: unknown ELF version");
  uint64_t type = file.le(16, 2);
  if (type != kEtRel) refuse("not a relocatable ELF object (ET_REL): its type is " + std::to_string(type));
  uint16_t object_machine = uint16_t(file.le(18, 2));
  if (object_machine != machine)
    refuse("the object's machine is " + describe_machine(object_machine) + ", not " + describe_machine(machine) +
           (for_host ? ", the host's" : ""));

  uint64_t shoff = file.le(40, 8);
  uint64_t shentsize = file.le(58, 2);
  uint64_t shnum = file.le(60, 2);
  uint64_t shstrndx = file.le(62, 2);
  if (shoff == 0) {
    if (shnum != 0 || shstrndx != 0) refuse("malformed ELF: sections counted without a section header table");
    return {};
  }
  if (shentsize != kShdrSize) refuse("malformed ELF: section header size " + std::to_string(shentsize));
  if (!file.contains(shoff, kShdrSize)) refuse("malformed ELF: the section header table lies outside the file");
  // Extended numbering: section 0 holds counts that do not fit the header.
  uint64_t count = shnum != 0 ? shnum : file.le(shoff + 32, 8);
  if (shstrndx == kShnXindex) shstrndx = file.le(shoff + 40, 4);
  if (count == 0 || count > (file.size() - shoff) / kShdrSize)
    refuse("malformed ELF: the section header table lies outside the file");
  if (shstrndx >= count) refuse("malformed ELF: section name table index out of range");

  std::vector<Section> sections(count);
  for (uint64_t i = 0; i < count; i++) {
    uint64_t h = shoff + i * kShdrSize;
    Section &s = sections[i];
    s.type = uint32_t(file.le(h + 4, 4));
    s.flags = file.le(h + 8, 8);
    s.offset = file.le(h + 24, 8);
    s.size = file.le(h + 32, 8);
    s.link = uint32_t(file.le(h + 40, 4));
    s.info = uint32_t(file.le(h + 44, 4));
    s.align = file.le(h + 48, 8);
    s.entsize = file.le(h + 56, 8);
    if (i == 0) continue;  // SHT_NULL, or the extended counts
    if (s.type != kShtNobits && !file.contains(s.offset, s.size))
      refuse("malformed ELF: section " + std::to_string(i) + " lies outside the file");
    if (s.align & (s.align - 1))
      refuse("malformed ELF: section " + std::to_string(i) + " has an alignment that is not a power of two");
  }
  if (shstrndx != 0) {
    for (uint64_t i = 1; i < count; i++) {
      std::string what = "section " + std::to_string(i);
      sections[i].name = string_at(file, sections, uint32_t(shstrndx), file.le(shoff + i * kShdrSize, 4), what.c_str());
    }
  }
  return sections;
}

// The section rules of Linking: no writable allocated section in use
// (LINK-11, LINK-12), every relocation with its addend (LINK-13).
void check_sections(const Object &object) {
  for (uint32_t i = 1; i < object.sections.size(); i++) {
    const Section &s = object.sections[i];
    if (s.allocated() && (s.flags & kShfWrite) && s.size > 0)
      refuse("the allocated section " + object.section_name(i) + " is writable and not empty (" +
             std::to_string(s.size) + " bytes): code gets its variables through its parameters");
    if (s.allocated() && (s.flags & kShfCompressed))
      refuse("malformed ELF: the allocated section " + object.section_name(i) + " is compressed");
    if (s.type == kShtRel)
      refuse("the relocation section " + object.section_name(i) +
             " is SHT_REL: each relocation must hold its addend (SHT_RELA)");
  }
}

// Reads the symbol table, if any; returns its section index (0 if none).
uint32_t read_symbols(const Bytes &file, Object &object) {
  const auto &sections = object.sections;
  uint32_t symtab = 0;
  for (uint32_t i = 1; i < sections.size(); i++) {
    if (sections[i].type != kShtSymtab) continue;
    if (symtab != 0) refuse("malformed ELF: more than one symbol table");
    symtab = i;
  }
  if (symtab == 0) return 0;
  const Section &table = sections[symtab];
  if (table.entsize != kSymSize || table.size % kSymSize != 0)
    refuse("malformed ELF: the symbol table's entries are not 24 bytes");
  if (table.link == 0 || table.link >= sections.size())
    refuse("malformed ELF: the symbol table's string table index is out of range");
  uint64_t count = table.size / kSymSize;

  // Extended section indices, where a symbol's st_shndx is SHN_XINDEX.
  const Section *extended = nullptr;
  for (const Section &s : sections)
    if (s.type == kShtSymtabShndx && s.link == symtab) extended = &s;

  object.symbols.resize(count);
  for (uint64_t i = 0; i < count; i++) {
    uint64_t e = table.offset + i * kSymSize;
    Symbol &sym = object.symbols[i];
    std::string what = "symbol " + std::to_string(i);
    sym.name = string_at(file, sections, table.link, file.le(e, 4), what.c_str());
    uint64_t info = file.le(e + 4, 1);
    sym.bind = uint8_t(info >> 4);
    sym.type = uint8_t(info & 0xf);
    sym.section = uint32_t(file.le(e + 6, 2));
    sym.value = file.le(e + 8, 8);
    if (sym.section == kShnXindex) {
      if (!extended || i >= extended->size / 4)
        refuse("malformed ELF: " + what + " has an extended section index and no SHT_SYMTAB_SHNDX entry");
      sym.section = uint32_t(file.le(extended->offset + i * 4, 4));
      if (sym.section == kShnUndef || sym.section >= sections.size())
        refuse("malformed ELF: " + what + "'s section index is out of range");
    } else if (sym.section >= kShnLoreserve || sym.section == kShnUndef) {
      continue;  // undefined, absolute, common or another reserved index
    }
    if (sym.section >= sections.size()) refuse("malformed ELF: " + what + "'s section index is out of range");
    if (sym.value > sections[sym.section].size)
      refuse("malformed ELF: " + what + " lies outside its section " + object.section_name(sym.section));
  }
  return symtab;
}

// Reads every relocation, checking each against the rules of Linking:
// listed type (LINK-14), a symbol defined in the image or undefined
// (LINK-15), a place inside the image (LINK-16).
void read_relocations(const Bytes &file, Object &object, uint32_t symtab) {
  const auto &sections = object.sections;
  for (uint32_t i = 1; i < sections.size(); i++) {
    const Section &table = sections[i];
    if (table.type != kShtRela) continue;
    if (table.entsize != kRelaSize || table.size % kRelaSize != 0)
      refuse("malformed ELF: the entries of " + object.section_name(i) + " are not 24 bytes");
    if (symtab == 0 || table.link != symtab)
      refuse("malformed ELF: " + object.section_name(i) + " does not use the symbol table");
    if (table.info == 0 || table.info >= sections.size())
      refuse("malformed ELF: " + object.section_name(i) + " patches a section out of range");
    const Section &target = sections[table.info];
    if (!target.allocated() && table.size > 0)
      refuse("the relocations of " + object.section_name(i) + " patch " + object.section_name(table.info) +
             ", which is not allocated and so lies outside the image");
    for (uint64_t e = table.offset; e < table.offset + table.size; e += kRelaSize) {
      Relocation r;
      r.section = table.info;
      r.offset = file.le(e, 8);
      uint64_t info = file.le(e + 8, 8);
      r.symbol = uint32_t(info >> 32);
      r.type = uint32_t(info);
      r.addend = int64_t(file.le(e + 16, 8));
      if (r.symbol == 0 || r.symbol >= object.symbols.size())
        refuse("malformed ELF: a relocation of " + object.section_name(r.section) + " at " + hex(r.offset) +
               " uses symbol index " + std::to_string(r.symbol) + ", out of range");
      if (!supported_relocation(object.machine, r.type))
        refuse(object.describe(r) + ": the type is not one the linker supports");
      // Every supported relocation patches one 32-bit word.
      if (!(r.offset <= target.size && target.size - r.offset >= 4))
        refuse(object.describe(r) + ": the place lies outside its section and so outside the image");
      const Symbol &s = object.symbols[r.symbol];
      if (s.type == kSttTls) refuse(object.describe(r) + ": the symbol is thread-local, defined outside the image");
      if (s.section == kShnCommon) refuse(object.describe(r) + ": the symbol is common, defined outside the image");
      if (s.section == kShnAbs) refuse(object.describe(r) + ": the symbol is absolute, defined outside the image");
      if (s.section >= kShnLoreserve)
        refuse(object.describe(r) + ": the symbol's section index " + hex(s.section) + " lies outside the image");
      if (s.section != kShnUndef && !sections[s.section].allocated())
        refuse(object.describe(r) + ": the symbol is defined in " + object.section_name(s.section) +
               ", which is not allocated and so lies outside the image");
      if (s.section == kShnUndef && s.name.empty())
        refuse("malformed ELF: " + object.describe(r) + ": an undefined symbol without a name");
      object.relocations.push_back(r);
    }
  }
}

Object parse(const Bytes &file, uint16_t machine, bool for_host) {
  Object object;
  object.machine = machine;
  object.sections = read_sections(file, machine, for_host);
  check_sections(object);
  uint32_t symtab = read_symbols(file, object);
  read_relocations(file, object, symtab);
  return object;
}

// ---- Layout and symbol resolution.

// What a relocation's symbol resolves to: an offset in the image, or the
// index of an external symbol, which has a stub.
struct Target {
  bool external = false;
  uint64_t value = 0;
};

struct Fixup {
  uint64_t place = 0;  // offset in the image
  Target target;
  const Relocation *relocation = nullptr;
};

struct Plan {
  std::vector<uint64_t> section_offset;  // by section index; meaningful for allocated sections
  uint64_t stubs_offset = 0;
  uint64_t size = 0;        // image and stubs
  uint64_t alignment = 16;  // the largest alignment a section or stub asks
  std::vector<std::string_view> externals;  // the undefined symbols, in stub order
  std::vector<Fixup> fixups;
  std::map<std::string, uint64_t, std::less<>> functions;  // name -> offset
};

// Offsets grow in 128 bits and are checked against max_int after each
// step, so no step overflows (LINK-19).
uint64_t grow(i128 end) {
  if (end > i128(kMaxImageBytes))
    refuse("the image and its stubs do not fit in " + std::to_string(kMaxImageBytes) + " bytes");
  return uint64_t(end);
}

uint64_t align_up(uint64_t offset, uint64_t align) {
  if (align <= 1) return offset;
  return grow((i128(offset) + align - 1) / align * align);
}

// AArch64 mapping symbols ($x, $d, $x.n, $d.n) mark code and data, and are
// no functions.
bool mapping_symbol(uint16_t machine, std::string_view name) {
  if (machine != kEmAarch64 || name.size() < 2 || name[0] != '$') return false;
  return (name[1] == 'x' || name[1] == 'd') && (name.size() == 2 || name[2] == '.');
}

// The functions of the image: named STT_FUNC or STT_NOTYPE symbols of
// allocated executable sections, global and weak ones before local ones.
std::map<std::string, uint64_t, std::less<>> find_functions(const Object &object, const Plan &plan) {
  std::map<std::string, uint64_t, std::less<>> functions;
  for (bool global : {true, false}) {
    for (const Symbol &s : object.symbols) {
      if (s.name.empty() || (s.type != kSttFunc && s.type != kSttNotype)) continue;
      bool is_global = s.bind == kStbGlobal || s.bind == kStbWeak;
      if (is_global != global || (!is_global && s.bind != kStbLocal)) continue;
      if (s.section == kShnUndef || s.section >= object.sections.size()) continue;
      const Section &section = object.sections[s.section];
      if (!section.allocated() || !(section.flags & kShfExecinstr)) continue;
      if (mapping_symbol(object.machine, s.name)) continue;
      functions.emplace(std::string(s.name), plan.section_offset[s.section] + s.value);
    }
  }
  return functions;
}

Plan make_plan(const Object &object) {
  Plan plan;
  const auto &sections = object.sections;
  plan.section_offset.assign(sections.size(), 0);
  uint64_t end = 0;
  for (uint32_t i = 1; i < sections.size(); i++) {
    const Section &s = sections[i];
    if (!s.allocated()) continue;
    plan.alignment = std::max(plan.alignment, s.align);
    plan.section_offset[i] = align_up(end, s.align);
    end = grow(i128(plan.section_offset[i]) + s.size);
  }

  // A symbol the object leaves undefined resolves to the object's own
  // definition of that name when it has one (LINK-34).
  std::unordered_map<std::string_view, uint32_t> defined;
  for (uint32_t i = 1; i < object.symbols.size(); i++) {
    const Symbol &s = object.symbols[i];
    if ((s.bind == kStbGlobal || s.bind == kStbWeak) && !s.name.empty() && s.section != kShnUndef &&
        s.section < sections.size() && sections[s.section].allocated() && s.type != kSttTls)
      defined.emplace(s.name, i);
  }
  std::unordered_map<std::string_view, uint64_t> external_index;
  for (const Relocation &r : object.relocations) {
    const Symbol *s = &object.symbols[r.symbol];
    if (s->section == kShnUndef) {
      auto definition = defined.find(s->name);
      if (definition != defined.end()) s = &object.symbols[definition->second];
    }
    Fixup fixup;
    fixup.place = plan.section_offset[r.section] + r.offset;
    fixup.relocation = &r;
    if (s->section == kShnUndef) {
      auto [it, added] = external_index.emplace(s->name, plan.externals.size());
      if (added) plan.externals.push_back(s->name);
      fixup.target = Target{true, it->second};
    } else {
      fixup.target = Target{false, plan.section_offset[s->section] + s->value};
    }
    plan.fixups.push_back(fixup);
  }

  plan.stubs_offset = align_up(end, kStubSize);
  plan.size = grow(i128(plan.stubs_offset) + i128(plan.externals.size()) * kStubSize);
  plan.functions = find_functions(object, plan);
  return plan;
}

// The address of each external symbol, in stub order (LINK-18, LINK-35).
std::vector<uint64_t> resolve_externals(const Plan &plan,
                                        const std::function<std::optional<uint64_t>(std::string_view)> &resolve) {
  std::vector<uint64_t> addresses;
  addresses.reserve(plan.externals.size());
  for (std::string_view name : plan.externals) {
    std::optional<uint64_t> address = resolve(name);
    if (!address)
      refuse("the object refers to `" + printable(name) + "', which neither it nor the process defines");
    addresses.push_back(*address);
  }
  return addresses;
}

// ---- Writing the image.

bool fits_signed(i128 v, int bits) { return v >= -(i128(1) << (bits - 1)) && v < (i128(1) << (bits - 1)); }

// A stub jumps to its word, which holds the symbol's address (LINK-31).
void write_stub(uint16_t machine, uint8_t *stub, uint64_t address) {
  if (machine == kEmX86_64) {
    // jmp *0(%rip): jumps through the word that follows, using no register (LINK-32).
    static const uint8_t jmp[6] = {0xff, 0x25, 0x00, 0x00, 0x00, 0x00};
    std::memcpy(stub, jmp, sizeof jmp);
    put64(stub + 6, address);
    stub[14] = stub[15] = 0xcc;  // int3
  } else {
    // ldr x17, #8; br x17: x17 is IP1, which a veneer may use (LINK-33).
    put32(stub, 0x58000051);
    put32(stub + 4, 0xd61f0220);
    put64(stub + 8, address);
  }
}

// The low 12 bits of an address, as a load or store of 1 << scale bytes
// encodes them: bits [11:scale] (AArch64 ELF, LDSTn_ABS_LO12_NC).
uint32_t aarch64_scale(uint32_t type) {
  switch (type) {
    case kRAarch64Ldst16AbsLo12Nc: return 1;
    case kRAarch64Ldst32AbsLo12Nc: return 2;
    case kRAarch64Ldst64AbsLo12Nc: return 3;
    case kRAarch64Ldst128AbsLo12Nc: return 4;
    default: return 0;
  }
}

class Writer {
 public:
  Writer(const Object &object, const Plan &plan, uint8_t *image, uint64_t base, std::span<const uint64_t> externals)
      : object_(object), plan_(plan), image_(image), base_(base), externals_(externals) {}

  void write(const Bytes &file) {
    for (uint32_t i = 1; i < object_.sections.size(); i++) {
      const Section &s = object_.sections[i];
      if (s.allocated() && s.type != kShtNobits && s.size > 0)
        std::memcpy(image_ + plan_.section_offset[i], file.at(s.offset), s.size);
    }
    for (size_t i = 0; i < externals_.size(); i++) write_stub(object_.machine, image_ + stub_offset(i), externals_[i]);
    for (const Fixup &fixup : plan_.fixups) apply(fixup);
  }

 private:
  uint64_t stub_offset(uint64_t index) const { return plan_.stubs_offset + index * kStubSize; }

  // S: the symbol's address; for a branch, its stub's when out of reach.
  i128 symbol_address(const Target &target) const {
    return target.external ? i128(externals_[target.value]) : i128(base_) + target.value;
  }
  i128 stub_address(const Target &target) const { return i128(base_) + stub_offset(target.value); }

  [[noreturn]] void overflow(const Fixup &fixup, i128 value, const char *field) const {
    refuse(object_.describe(*fixup.relocation) + ": its value " + hex128(value) + " does not fit its " + field);
  }

  // S + A - P for a call or jump, through the symbol's stub when S is out
  // of reach (LINK-24/25, LINK-29/30).  A symbol the image defines has no
  // stub, so one out of reach does not fit.
  template <typename Fits>
  i128 branch(const Fixup &fixup, i128 place, Fits fits, const char *field) const {
    i128 addend = fixup.relocation->addend;
    i128 direct = symbol_address(fixup.target) + addend - place;
    if (fits(direct)) return direct;
    if (fixup.target.external) {
      i128 through_stub = stub_address(fixup.target) + addend - place;
      if (fits(through_stub)) return through_stub;
    }
    overflow(fixup, direct, field);
  }

  void apply(const Fixup &fixup) const {
    const Relocation &r = *fixup.relocation;
    uint8_t *field = image_ + fixup.place;
    i128 place = i128(base_) + fixup.place;
    i128 value = symbol_address(fixup.target) + r.addend;  // S + A
    uint32_t insn = get32(field);
    auto fits32 = [](i128 v) { return fits_signed(v, 32); };
    auto fits_branch26 = [](i128 v) { return v % 4 == 0 && fits_signed(v, 28); };
    switch (r.type) {
      case kRX86_64Pc32: {  // LINK-23
        i128 v = value - place;
        if (!fits32(v)) overflow(fixup, v, "signed 32-bit field");
        put32(field, uint32_t(v));
        return;
      }
      case kRX86_64Plt32:  // LINK-24, LINK-25
        put32(field, uint32_t(branch(fixup, place, fits32, "signed 32-bit field")));
        return;
      case kRAarch64AdrPrelPgHi21: {  // LINK-26: Page(S + A) - Page(P) in immhi:immlo
        i128 page_mask = ~i128(0xfff);
        i128 v = (value & page_mask) - (place & page_mask);
        if (!fits_signed(v, 33)) overflow(fixup, v, "21-bit page field");
        uint32_t pages = uint32_t(uint64_t(v >> 12));
        insn &= ~((0x3u << 29) | (0x7ffffu << 5));
        insn |= (pages & 0x3) << 29 | ((pages >> 2) & 0x7ffff) << 5;
        break;
      }
      case kRAarch64AddAbsLo12Nc:  // LINK-27
      case kRAarch64Ldst8AbsLo12Nc:  // LINK-28
      case kRAarch64Ldst16AbsLo12Nc:
      case kRAarch64Ldst32AbsLo12Nc:
      case kRAarch64Ldst64AbsLo12Nc:
      case kRAarch64Ldst128AbsLo12Nc: {
        uint32_t scale = r.type == kRAarch64AddAbsLo12Nc ? 0 : aarch64_scale(r.type);
        uint32_t low = uint32_t(uint64_t(value & 0xfff));
        // The access scales its offset, so an address off its size cannot be encoded.
        if (low & ((1u << scale) - 1)) overflow(fixup, value, "field, scaled by the access size");
        insn = (insn & ~(0xfffu << 10)) | (low >> scale) << 10;
        break;
      }
      case kRAarch64Call26:  // LINK-29, LINK-30
      case kRAarch64Jump26: {
        i128 v = branch(fixup, place, fits_branch26, "26-bit branch field");
        insn = (insn & ~0x3ffffffu) | (uint32_t(uint64_t(v >> 2)) & 0x3ffffff);
        break;
      }
      default:
        refuse(object_.describe(r) + ": the type is not one the linker supports");
    }
    put32(field, insn);
  }

  const Object &object_;
  const Plan &plan_;
  uint8_t *image_;
  uint64_t base_;
  std::span<const uint64_t> externals_;
};

// ---- Executable memory.

uint16_t host_machine() {
#if defined(__x86_64__)
  return kEmX86_64;
#elif defined(__aarch64__)
  return kEmAarch64;
#else
  return 0;
#endif
}

std::string system_error(const char *what) { return std::string(what) + ": " + std::strerror(errno); }

// Writable memory of size bytes at a multiple of alignment: a reservation
// with no access, trimmed to the aligned range, then made writable.
class Mapping {
 public:
  Mapping(uint64_t size, uint64_t alignment) {
    uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    alignment = std::max(alignment, page);
    i128 length = (i128(std::max<uint64_t>(size, 1)) + page - 1) / page * page;
    i128 reserve = length + alignment - page;
    if (reserve > i128(std::numeric_limits<size_t>::max()) / 2)
      refuse("cannot map " + std::to_string(size) + " bytes at a multiple of " + std::to_string(alignment));
    void *reserved = mmap(nullptr, size_t(reserve), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED) refuse(system_error("cannot reserve the image's memory"));
    uintptr_t start = reinterpret_cast<uintptr_t>(reserved);
    uintptr_t aligned = uintptr_t((i128(start) + alignment - 1) / alignment * alignment);
    if (aligned > start) munmap(reserved, aligned - start);
    uintptr_t tail = aligned + uintptr_t(length);
    if (start + uintptr_t(reserve) > tail) munmap(reinterpret_cast<void *>(tail), start + uintptr_t(reserve) - tail);
    address_ = reinterpret_cast<uint8_t *>(aligned);
    length_ = size_t(length);
    if (mprotect(address_, length_, PROT_READ | PROT_WRITE) != 0) {
      std::string why = system_error("cannot make the image's memory writable");
      munmap(address_, length_);
      refuse(why);
    }
  }
  ~Mapping() {
    if (address_) munmap(address_, length_);
  }
  Mapping(const Mapping &) = delete;
  Mapping &operator=(const Mapping &) = delete;

  uint8_t *address() const { return address_; }
  size_t length() const { return length_; }
  // Hands the mapping over, to be unmapped by its new owner.
  void release() { address_ = nullptr; }

 private:
  uint8_t *address_ = nullptr;
  size_t length_ = 0;
};

std::optional<uint64_t> process_symbol(std::string_view name) {
  void *address = dlsym(RTLD_DEFAULT, std::string(name).c_str());
  if (!address) return std::nullopt;
  return reinterpret_cast<uintptr_t>(address);
}

}  // namespace

HostImage::HostImage(void *mapping, size_t mapping_bytes, const void *base, size_t size,
                     std::map<std::string, uint64_t, std::less<>> functions)
    : mapping_(mapping), mapping_bytes_(mapping_bytes), base_(base), size_(size), functions_(std::move(functions)) {}

HostImage::~HostImage() { munmap(mapping_, mapping_bytes_); }

void *HostImage::resolve(std::string_view name) const {
  auto found = functions_.find(name);
  if (found == functions_.end()) return nullptr;
  return const_cast<uint8_t *>(static_cast<const uint8_t *>(base_)) + found->second;
}

std::variant<std::unique_ptr<HostImage>, std::string> link_host(const void *bytes, size_t n) {
  try {
    uint16_t machine = host_machine();
    if (machine == 0) return std::string("the host is neither x86_64 nor arm64, so it links no code");
    Bytes file(bytes, n);
    Object object = parse(file, machine, true);
    Plan plan = make_plan(object);
    std::vector<uint64_t> externals = resolve_externals(plan, process_symbol);

    // Written once while writable, then read and execute only (LINK-21, LINK-22, LINK-41).
    Mapping mapping(plan.size, plan.alignment);
    uint8_t *image = mapping.address();
    Writer(object, plan, image, reinterpret_cast<uintptr_t>(image), externals).write(file);
    __builtin___clear_cache(reinterpret_cast<char *>(image), reinterpret_cast<char *>(image + plan.size));
    if (mprotect(image, mapping.length(), PROT_READ | PROT_EXEC) != 0)
      return system_error("cannot make the image executable");
    auto linked = std::unique_ptr<HostImage>(
        new HostImage(image, mapping.length(), image, size_t(plan.size), std::move(plan.functions)));
    mapping.release();
    return linked;
  } catch (const Refusal &refusal) {
    return refusal.why;
  } catch (const std::bad_alloc &) {
    return std::string("out of memory while linking");
  }
}

std::variant<LinkedForTest, std::string> link_for_test(
    const void *bytes, size_t n, uint16_t machine, uint64_t base,
    const std::function<std::optional<uint64_t>(std::string_view)> &resolve_external) {
  try {
    if (machine != kEmX86_64 && machine != kEmAarch64)
      return "the linker links for EM_X86_64 or EM_AARCH64, not " + describe_machine(machine);
    Bytes file(bytes, n);
    Object object = parse(file, machine, false);
    Plan plan = make_plan(object);
    if (base % plan.alignment != 0) return "base " + hex(base) + " is not a multiple of " + hex(plan.alignment);
    if (plan.size > kMaxTestImageBytes) return "an image of " + std::to_string(plan.size) + " bytes is over a test's 64 MiB";
    if (base > std::numeric_limits<uint64_t>::max() - plan.size) return "the image does not fit above base " + hex(base);
    std::vector<uint64_t> externals = resolve_externals(plan, resolve_external);

    LinkedForTest linked;
    linked.base = base;
    linked.image.assign(plan.size, 0);
    Writer(object, plan, linked.image.data(), base, externals).write(file);
    for (const auto &[name, offset] : plan.functions) linked.symbols.emplace(name, base + offset);
    for (size_t i = 0; i < plan.externals.size(); i++)
      linked.stubs.emplace(std::string(plan.externals[i]), base + plan.stubs_offset + i * kStubSize);
    for (uint32_t i = 1; i < object.sections.size(); i++)
      if (object.sections[i].allocated()) linked.sections.emplace(i, base + plan.section_offset[i]);
    return linked;
  } catch (const Refusal &refusal) {
    return refusal.why;
  } catch (const std::bad_alloc &) {
    return std::string("out of memory while linking");
  }
}

}  // namespace rig
