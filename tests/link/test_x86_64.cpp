/* The linker's x86_64 relocations and stubs, checked through
 * link_for_test on images linked at chosen addresses: each patched field
 * is read back and compared with the psABI formula, computed here from the
 * object's own entries (support.cpp reads them with <elf.h>).
 *
 * Asserts: LINK-20 (layout: every allocated section at a multiple of its
 * alignment, no overlap, bytes unchanged outside the fields), LINK-23
 * (R_X86_64_PC32 = S + A - P, in .text and in a .rodata jump table),
 * LINK-24 (R_X86_64_PLT32 = S + A - P in reach, to the last byte of
 * reach), LINK-25 (through the stub one byte past reach, either way),
 * LINK-31 (one stub per undefined symbol, after the image, its word holding
 * the address), LINK-32 (the stub is jmp *0(%rip) and its word; on an
 * x86_64 host a copy of it runs and reaches the function), LINK-34 (an
 * undefined name the object defines resolves to the object's definition),
 * LINK-17 (PC32 out of reach), LINK-05 in part (no machine but EM_X86_64
 * and EM_AARCH64 links).
 *
 * Not reached: LINK-05 on a host that is neither (none runs these tests).
 */
#include "support.hpp"

#include <criterion/criterion.h>

#include <sys/mman.h>

#include <cmath>
#include <limits>
#include <set>

using namespace link_test;

namespace {

constexpr uint16_t kMachine = EM_X86_64;

// Resolves the process's functions the kernels call to addresses first,
// first + stride, ..., recording the names asked.
struct TableResolver {
  uint64_t first, stride;
  std::shared_ptr<std::vector<std::string>> asked = std::make_shared<std::vector<std::string>>();
  std::optional<uint64_t> operator()(std::string_view name) const {
    static const char *const names[] = {"sinf", "cosf", "memcpy", "outside_constant"};
    asked->emplace_back(name);
    for (size_t i = 0; i < std::size(names); i++)
      if (name == names[i]) return first + i * stride;
    return std::nullopt;
  }
};

uint32_t whole_word(uint32_t) { return 0xffffffffu; }

bool fits_int32(int64_t v) { return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(); }

Elf x86_object(const char *kernel) { return Elf(compile(kernel, Arch::x86_64)); }

// The set of undefined symbols the object's relocations use.
std::set<std::string> undefined_uses(const Elf &object) {
  std::set<std::string> names;
  for (const Elf::Relocation &r : object.relocations())
    if (object.symbol(r.symbol()).st_shndx == SHN_UNDEF) names.insert(object.symbol_name(r.symbol()));
  return names;
}

// LINK-31, LINK-32: each stub is jmp *0(%rip) followed by its word.
void check_stubs(const Elf &object, const rig::LinkedForTest &linked, const Resolver &resolve) {
  std::set<std::string> names;
  for (const auto &[name, stub] : linked.stubs) names.insert(name);
  cr_assert(names == undefined_uses(object), "LINK-31: the stubs are not one per undefined symbol");
  for (const auto &[name, stub] : linked.stubs) {
    const uint8_t *bytes = linked.image.data() + (stub - linked.base);
    const uint8_t jmp_rip[6] = {0xff, 0x25, 0, 0, 0, 0};  // jmp *0(%rip): FF /4, ModRM 00 100 101, disp32 0
    cr_assert(std::memcmp(bytes, jmp_rip, 6) == 0, "LINK-32: the stub of %s is not jmp *0(%%rip)", name.c_str());
    uint64_t word;
    std::memcpy(&word, bytes + 6, 8);
    cr_assert_eq(word, *resolve(name), "LINK-31: the stub word of %s", name.c_str());
  }
}

struct Counts {
  int pc32 = 0, plt32_direct = 0, plt32_stub = 0;
};

// LINK-23, LINK-24, LINK-25: every field against its formula.
Counts check_relocations(const Elf &object, const rig::LinkedForTest &linked, const Resolver &resolve) {
  Counts counts;
  for (const Elf::Relocation &r : object.relocations()) {
    Formula f = formula_of(object, linked, r, resolve);
    int64_t field = int32_t(word_at(linked, f.P));
    int64_t direct = int64_t(f.S + f.A - f.P);
    switch (r.type()) {
      case R_X86_64_PC32:
        cr_assert(fits_int32(direct), "the test placed %s out of PC32 reach", f.name.c_str());
        cr_assert_eq(field, direct, "LINK-23: PC32 at 0x%lx against %s", (unsigned long)f.P, f.name.c_str());
        counts.pc32++;
        break;
      case R_X86_64_PLT32:
        if (fits_int32(direct)) {
          cr_assert_eq(field, direct, "LINK-24: PLT32 at 0x%lx against %s", (unsigned long)f.P, f.name.c_str());
          counts.plt32_direct++;
        } else {
          cr_assert(f.undefined, "a defined symbol out of reach");
          int64_t through_stub = int64_t(linked.stubs.at(f.name) + f.A - f.P);
          cr_assert_eq(field, through_stub, "LINK-25: PLT32 against %s not through its stub", f.name.c_str());
          counts.plt32_stub++;
        }
        break;
      default:
        cr_assert_fail("clang emitted relocation type %u", r.type());
    }
  }
  return counts;
}

}  // namespace

/* LINK-20, LINK-23, LINK-24, LINK-31, LINK-32: everything in reach. */
Test(x86_64, fields_in_reach_follow_the_formulas) {
  Counts total;
  for (const char *kernel : {"calls", "rodata", "hidden_data", "own_symbol", "add"}) {
    Elf object = x86_object(kernel);
    for (uint64_t base : {uint64_t{0x40000000}, uint64_t{0x7ffffff0}}) {
      TableResolver resolve{base + (128u << 20) + 0x7f8, 0x1008};
      rig::LinkedForTest linked = link_ok(object, kMachine, base, resolve);
      cr_assert_eq(linked.base, base);
      check_layout(object, linked, whole_word);
      check_stubs(object, linked, resolve);
      Counts counts = check_relocations(object, linked, resolve);
      cr_assert_eq(counts.plt32_stub, 0, "a call in reach went through a stub");
      total.pc32 += counts.pc32;
      total.plt32_direct += counts.plt32_direct;
    }
  }
  cr_assert_gt(total.pc32, 10, "the kernels exercise PC32 (code, rodata jump table, .eh_frame)");
  cr_assert_gt(total.plt32_direct, 3);
}

/* LINK-25, LINK-31, LINK-32: the process's functions out of reach. */
Test(x86_64, calls_out_of_reach_go_through_stubs) {
  Elf object = x86_object("calls");
  const uint64_t base = 0x400000;
  TableResolver resolve{0x7f0000000000, 0x10};
  rig::LinkedForTest linked = link_ok(object, kMachine, base, resolve);
  check_layout(object, linked, whole_word);
  check_stubs(object, linked, resolve);
  Counts counts = check_relocations(object, linked, resolve);
  cr_assert_eq(counts.plt32_direct, 0);
  cr_assert_geq(counts.plt32_stub, 5);
  // Each call lands on its stub: the call's end (P + 4) plus its displacement.
  for (const Elf::Relocation &r : object.relocations()) {
    if (r.type() != R_X86_64_PLT32) continue;
    Formula f = formula_of(object, linked, r, resolve);
    cr_assert_eq(f.A, -4);
    uint64_t destination = f.P + 4 + int64_t(int32_t(word_at(linked, f.P)));
    cr_assert_eq(destination, linked.stubs.at(f.name), "LINK-25: the call to %s misses its stub", f.name.c_str());
  }
}

/* LINK-24, LINK-25: the edges of PLT32's reach, above and below. */
Test(x86_64, plt32_reach_edges) {
  Elf object = x86_object("calls");
  Elf::Relocation call = object.first_relocation(R_X86_64_PLT32);
  const uint64_t base = uint64_t{1} << 36;
  // Learn P (the layout does not depend on the symbols' addresses).
  TableResolver near{base, 0x10};
  Formula f = formula_of(object, link_ok(object, kMachine, base, near), call, near);
  struct Edge {
    int64_t value;  // S + A - P
    bool direct;
  };
  for (Edge edge : {Edge{INT32_MAX, true}, Edge{int64_t{INT32_MAX} + 1, false}, Edge{INT32_MIN, true},
                    Edge{int64_t{INT32_MIN} - 1, false}}) {
    uint64_t S = f.P + edge.value - f.A;
    Resolver resolve = [&](std::string_view name) -> std::optional<uint64_t> {
      return name == f.name ? S : near(name);
    };
    rig::LinkedForTest linked = link_ok(object, kMachine, base, resolve);
    int64_t field = int32_t(word_at(linked, f.P));
    int64_t expected = edge.direct ? edge.value : int64_t(linked.stubs.at(f.name) + f.A - f.P);
    cr_assert_eq(field, expected, "PLT32 with S + A - P = %ld", (long)edge.value);
  }
}

#if defined(__x86_64__)
/* LINK-32: an x86_64 stub run on this host reaches its function. */
Test(x86_64, stub_runs_to_its_function) {
  Elf object = x86_object("calls");
  Resolver resolve = [](std::string_view name) -> std::optional<uint64_t> {
    if (name == "cosf") return reinterpret_cast<uintptr_t>(static_cast<float (*)(float)>(cosf));
    return uint64_t{0x7f0000000000};
  };
  rig::LinkedForTest linked = link_ok(object, kMachine, 0x400000, resolve);
  const uint8_t *stub = linked.image.data() + (linked.stubs.at("cosf") - linked.base);
  void *page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(page, MAP_FAILED);
  std::memcpy(page, stub, 16);
  cr_assert_eq(mprotect(page, 4096, PROT_READ | PROT_EXEC), 0);
  auto through_stub = reinterpret_cast<float (*)(float)>(page);
  for (float v : {0.0f, 0.5f, -3.0f, 10.0f}) cr_assert_eq(through_stub(v), cosf(v));
  munmap(page, 4096);
}
#endif

/* LINK-17: PC32 to data out of reach. */
Test(x86_64, pc32_out_of_reach_is_refused) {
  Elf object = x86_object("hidden_data");
  TableResolver far{uint64_t{1} << 40, 0x10};
  assert_mentions(link_error(object, kMachine, 0x400000, far), {"R_X86_64_PC32", "outside_constant", "does not fit"});
}

/* LINK-34: an undefined name the object defines resolves to its
 * definition, and a call to the object's global function goes to it. */
Test(x86_64, object_definitions_win) {
  // calls.o's undefined cosf renamed tail_cos, which calls.o defines.
  Elf object = x86_object("calls");
  size_t cosf_symbol = object.symbol_index("cosf");
  uint32_t tail_cos_name = object.symbol(object.symbol_index("tail_cos")).st_name;
  object.write<uint32_t>(object.symbol_offset(cosf_symbol) + offsetof(Elf64_Sym, st_name), tail_cos_name);
  TableResolver resolve{0x7f0000000000, 0x10};
  rig::LinkedForTest linked = link_ok(object, kMachine, 0x400000, resolve);
  cr_assert_eq(linked.stubs.count("tail_cos"), 0u, "a stub for a symbol the object defines");
  for (const std::string &name : *resolve.asked) cr_assert_neq(name, "tail_cos", "the process was asked for tail_cos");
  bool seen = false;
  for (const Elf::Relocation &r : object.relocations()) {
    if (r.symbol() != cosf_symbol) continue;
    uint64_t P = linked.sections.at(uint32_t(r.patched_section)) + r.rela.r_offset;
    int64_t expected = int64_t(linked.symbols.at("tail_cos") + r.rela.r_addend - P);
    cr_assert_eq(int64_t(int32_t(word_at(linked, P))), expected);
    seen = true;
  }
  cr_assert(seen);

  // own_symbol.o calls its own global sinf.
  Elf own = x86_object("own_symbol");
  rig::LinkedForTest linked_own = link_ok(own, kMachine, 0x400000, resolve);
  cr_assert_eq(linked_own.stubs.count("sinf"), 0u);
  cr_assert_eq(linked_own.stubs.count("cosf"), 1u);
  Elf::Relocation call = own.first_relocation(R_X86_64_PLT32);
  cr_assert_eq(own.symbol_name(call.symbol()), "sinf");
  uint64_t P = linked_own.sections.at(uint32_t(call.patched_section)) + call.rela.r_offset;
  cr_assert_eq(int64_t(int32_t(word_at(linked_own, P))), int64_t(linked_own.symbols.at("sinf") + call.rela.r_addend - P));
}

/* LINK-20: large alignments; link_for_test's base must honour them. */
Test(x86_64, sections_at_their_alignment) {
  Elf object = x86_object("rodata");
  object.set_section_field<uint64_t>(object.section_index(".rodata"), offsetof(Elf64_Shdr, sh_addralign), 4096);
  object.set_section_field<uint64_t>(object.section_index(".eh_frame"), offsetof(Elf64_Shdr, sh_addralign), 1 << 20);
  TableResolver resolve{0x7f0000000000, 0x10};
  rig::LinkedForTest linked = link_ok(object, kMachine, 1 << 20, resolve);
  check_layout(object, linked, whole_word);
  check_relocations(object, linked, resolve);
  assert_mentions(link_error(object, kMachine, 4096, resolve), {"multiple"});
}

/* LINK-05 in part: the linker links for EM_X86_64 and EM_AARCH64 only. */
Test(x86_64, other_machines_are_not_linked) {
  Elf object = x86_object("add");
  object.write<uint16_t>(offsetof(Elf64_Ehdr, e_machine), EM_RISCV);
  TableResolver resolve{0x7f0000000000, 0x10};
  cr_assert(!link_error(object, EM_RISCV, 0x400000, resolve).empty());
  assert_mentions(link_error(x86_object("add"), EM_AARCH64, 0x400000, resolve), {"EM_X86_64"});
}
