/* The linker's arm64 relocations and stubs, checked on any host through
 * link_for_test(EM_AARCH64): each patched instruction is decoded here
 * (ADRP immhi:immlo, ADD imm12, LDR/STR imm12 scaled by the access size,
 * B/BL imm26) and compared with the formula of ELF for the Arm 64-bit
 * Architecture §5.7, computed from the object's own entries.
 *
 * Asserts: LINK-20 (layout, bytes unchanged outside the fields), LINK-26
 * (ADR_PREL_PG_HI21 = Page(S + A) - Page(P)), LINK-27 (ADD_ABS_LO12_NC),
 * LINK-28 (LDST8/16/32/64/128_ABS_LO12_NC, and each ADRP with its load
 * addresses the constant the C source placed there), LINK-29 (CALL26 and
 * JUMP26 = S + A - P, to the edge of ±128 MiB), LINK-30 (through the stub
 * past it), LINK-31, LINK-33 (the stub is ldr x17, #8; br x17; its word),
 * LINK-17 (ADRP past ±4 GiB, an LDST16 address off its access size),
 * LINK-10 and LINK-14 for arm64 objects.
 *
 * Not reached: LINK-02 and LINK-40's arm64 half, LINK-33 by execution:
 * no arm64 machine runs here (test_host.cpp reaches them on an arm64 host).
 */
#include "support.hpp"

#include <criterion/criterion.h>

#include <set>

using namespace link_test;

namespace {

constexpr uint16_t kMachine = EM_AARCH64;

Elf arm_object(const char *kernel) { return Elf(compile(kernel, Arch::aarch64)); }

// Resolves the process's functions the kernels call to first, first +
// stride, ...
Resolver table_resolver(uint64_t first, uint64_t stride) {
  return [=](std::string_view name) -> std::optional<uint64_t> {
    static const char *const names[] = {"sinf", "cosf", "memcpy", "far_function", "tail_function", "outside_constant"};
    for (size_t i = 0; i < std::size(names); i++)
      if (name == names[i]) return first + i * stride;
    return std::nullopt;
  };
}

int64_t sign_extend(uint64_t v, int bits) { return int64_t(v << (64 - bits)) >> (64 - bits); }

// The instruction fields, as the Arm ARM encodes them.
int64_t adrp_pages(uint32_t insn) { return sign_extend(((insn >> 5) & 0x7ffff) << 2 | ((insn >> 29) & 3), 21); }
uint32_t imm12(uint32_t insn) { return (insn >> 10) & 0xfff; }
int64_t branch_offset(uint32_t insn) { return sign_extend(insn & 0x3ffffff, 26) * 4; }

// log2 of the bytes an LDSTn relocation's access moves; -1 for other types.
int ldst_scale(uint32_t type) {
  switch (type) {
    case R_AARCH64_LDST8_ABS_LO12_NC: return 0;
    case R_AARCH64_LDST16_ABS_LO12_NC: return 1;
    case R_AARCH64_LDST32_ABS_LO12_NC: return 2;
    case R_AARCH64_LDST64_ABS_LO12_NC: return 3;
    case R_AARCH64_LDST128_ABS_LO12_NC: return 4;
    default: return -1;
  }
}

uint32_t field_mask(uint32_t type) {
  switch (type) {
    case R_AARCH64_ADR_PREL_PG_HI21: return (0x3u << 29) | (0x7ffffu << 5);
    case R_AARCH64_CALL26:
    case R_AARCH64_JUMP26: return 0x3ffffffu;
    default: return 0xfffu << 10;  // ADD and LDST imm12
  }
}

uint64_t page(uint64_t address) { return address & ~uint64_t{0xfff}; }

bool in_branch_reach(int64_t v) { return v % 4 == 0 && v >= -(int64_t{1} << 27) && v < (int64_t{1} << 27); }

// LINK-31, LINK-33: one stub per undefined symbol: ldr x17, #8; br x17; word.
void check_stubs(const Elf &object, const rig::LinkedForTest &linked, const Resolver &resolve) {
  std::set<std::string> undefined, stubbed;
  for (const Elf::Relocation &r : object.relocations())
    if (object.symbol(r.symbol()).st_shndx == SHN_UNDEF) undefined.insert(object.symbol_name(r.symbol()));
  for (const auto &[name, stub] : linked.stubs) stubbed.insert(name);
  cr_assert(undefined == stubbed, "LINK-31: the stubs are not one per undefined symbol");
  for (const auto &[name, stub] : linked.stubs) {
    uint32_t ldr = word_at(linked, stub), br = word_at(linked, stub + 4);
    // LDR (literal), 64-bit: 01 011 0 00 imm19 Rt.
    cr_assert_eq(ldr & 0xff000000u, 0x58000000u, "LINK-33: the stub of %s does not start with LDR (literal)", name.c_str());
    cr_assert_eq(ldr & 31, 17u, "LINK-33: the stub of %s loads x%u, not x17", name.c_str(), ldr & 31);
    cr_assert_eq(sign_extend((ldr >> 5) & 0x7ffff, 19) * 4, 8, "LINK-33: the stub's LDR does not read its word");
    // BR Xn: 1101011 0000 11111 000000 Rn 00000.
    cr_assert_eq(br & 0xfffffc1fu, 0xd61f0000u, "LINK-33: the stub of %s does not branch with BR", name.c_str());
    cr_assert_eq((br >> 5) & 31, 17u, "LINK-33: the stub of %s branches through x%u", name.c_str(), (br >> 5) & 31);
    cr_assert_eq(quad_at(linked, stub + 8), *resolve(name), "LINK-31: the stub word of %s", name.c_str());
  }
}

// LINK-26..LINK-30: every field against its formula; returns the count of
// each type, and of branches through stubs under the key 0.
std::map<uint32_t, int> check_relocations(const Elf &object, const rig::LinkedForTest &linked, const Resolver &resolve) {
  std::map<uint32_t, int> counts;
  for (const Elf::Relocation &r : object.relocations()) {
    Formula f = formula_of(object, linked, r, resolve);
    uint32_t insn = word_at(linked, f.P);
    uint64_t target = f.S + f.A;
    counts[r.type()]++;
    if (r.type() == R_AARCH64_ADR_PREL_PG_HI21) {
      int64_t pages = int64_t(page(target) - page(f.P)) >> 12;
      cr_assert_eq(adrp_pages(insn), pages, "LINK-26: ADRP at 0x%lx against %s", (unsigned long)f.P, f.name.c_str());
    } else if (r.type() == R_AARCH64_ADD_ABS_LO12_NC) {
      cr_assert_eq(imm12(insn), target & 0xfff, "LINK-27: ADD at 0x%lx", (unsigned long)f.P);
    } else if (int scale = ldst_scale(r.type()); scale >= 0) {
      cr_assert_eq(target & ((1u << scale) - 1), 0u, "the compiler's access is off its size");
      cr_assert_eq(imm12(insn), (target & 0xfff) >> scale, "LINK-28: LDST%d at 0x%lx", 8 << scale, (unsigned long)f.P);
    } else if (r.type() == R_AARCH64_CALL26 || r.type() == R_AARCH64_JUMP26) {
      int64_t direct = int64_t(target - f.P);
      uint64_t destination = f.P + branch_offset(insn);
      if (in_branch_reach(direct)) {
        cr_assert_eq(destination, target, "LINK-29: branch at 0x%lx to %s", (unsigned long)f.P, f.name.c_str());
      } else {
        cr_assert(f.undefined, "a defined symbol out of reach");
        cr_assert_eq(destination, linked.stubs.at(f.name) + f.A, "LINK-30: the branch to %s misses its stub", f.name.c_str());
        counts[0]++;
      }
    } else {
      cr_assert_fail("clang emitted relocation type %u", r.type());
    }
  }
  return counts;
}

std::vector<uint8_t> little_endian(uint64_t value, size_t width) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < width; i++) bytes.push_back(uint8_t(value >> (8 * i)));
  return bytes;
}

std::vector<uint8_t> float_bytes(std::initializer_list<float> values) {
  // Sized first: growing with insert trips a false -Wstringop-overflow of
  // GCC 12 at -O3.
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  size_t at = 0;
  for (float v : values) {
    std::memcpy(bytes.data() + at, &v, sizeof v);
    at += sizeof v;
  }
  return bytes;
}

// The address that the ADRP of low's symbol and addend and the ADD or load
// at low's place form, decoded from the linked instructions.
uint64_t paired_address(const Elf &object, const rig::LinkedForTest &linked, const Elf::Relocation &low, int scale) {
  for (const Elf::Relocation &high : object.relocations()) {
    if (high.type() != R_AARCH64_ADR_PREL_PG_HI21 || high.symbol() != low.symbol() ||
        high.rela.r_addend != low.rela.r_addend)
      continue;
    uint64_t adrp_place = linked.sections.at(uint32_t(high.patched_section)) + high.rela.r_offset;
    uint64_t low_place = linked.sections.at(uint32_t(low.patched_section)) + low.rela.r_offset;
    return page(adrp_place) + adrp_pages(word_at(linked, adrp_place)) * 4096 +
           (uint64_t(imm12(word_at(linked, low_place))) << scale);
  }
  cr_assert_fail("no ADRP pairs with the relocation at 0x%lx", (unsigned long)low.rela.r_offset);
  return 0;
}

std::vector<uint8_t> bytes_at(const rig::LinkedForTest &linked, uint64_t address, size_t n) {
  cr_assert(address >= linked.base && address - linked.base + n <= linked.image.size(), "address outside the image");
  auto start = linked.image.begin() + ptrdiff_t(address - linked.base);
  return std::vector<uint8_t>(start, start + ptrdiff_t(n));
}

}  // namespace

/* LINK-20, LINK-26..LINK-29, LINK-31, LINK-33: every type in reach. */
Test(aarch64, fields_in_reach_follow_the_formulas) {
  std::map<uint32_t, int> total;
  for (const char *kernel : {"aarch64", "calls", "rodata", "hidden_data", "add"}) {
    Elf object = arm_object(kernel);
    // Bases that set every bit of the low 12 somewhere, and move data
    // across pages from its code.
    for (uint64_t base : {uint64_t{0x40000000}, uint64_t{0x40000800}, uint64_t{0x40000ff0}}) {
      Resolver resolve = table_resolver(base + (64u << 20) + 0x7f8, 0x1008);
      rig::LinkedForTest linked = link_ok(object, kMachine, base, resolve);
      check_layout(object, linked, field_mask);
      check_stubs(object, linked, resolve);
      for (auto [type, count] : check_relocations(object, linked, resolve)) total[type] += count;
    }
  }
  cr_assert_eq(total[0], 0, "a branch in reach went through a stub");
  for (uint32_t type : {R_AARCH64_ADR_PREL_PG_HI21, R_AARCH64_ADD_ABS_LO12_NC, R_AARCH64_LDST8_ABS_LO12_NC,
                        R_AARCH64_LDST16_ABS_LO12_NC, R_AARCH64_LDST32_ABS_LO12_NC, R_AARCH64_LDST64_ABS_LO12_NC,
                        R_AARCH64_LDST128_ABS_LO12_NC, R_AARCH64_CALL26, R_AARCH64_JUMP26})
    cr_assert_gt(total[type], 0, "no kernel exercised relocation type %u", type);
}

/* LINK-26, LINK-27, LINK-28: each ADRP with its ADD or load addresses the
 * constant that aarch64.c placed in .rodata, at bases that put the data
 * on the code's page, on the next, and across every low-12-bit value. */
Test(aarch64, adrp_pairs_address_their_constants) {
  Elf object = arm_object("aarch64");
  // The constants of aarch64.c by log2 of their size.
  std::map<int, std::vector<uint8_t>> constants = {
      {0, little_endian(0x5a, 1)},
      {1, little_endian(0x1234, 2)},
      {2, little_endian(0xdeadbeef, 4)},
      {3, little_endian(0x0123456789abcdefull, 8)},
      {4, float_bytes({1.0f, 2.0f, 3.0f, 4.0f})},
  };
  for (uint64_t base = 0x7ffff000; base < 0x80001000; base += 0x90) {
    rig::LinkedForTest linked = link_ok(object, kMachine, base, table_resolver(0x10000000, 0x1000));
    int checked = 0;
    for (const Elf::Relocation &r : object.relocations()) {
      if (int scale = ldst_scale(r.type()); scale >= 0) {
        cr_assert(bytes_at(linked, paired_address(object, linked, r, scale), size_t{1} << scale) == constants[scale],
                  "LINK-28: LDST%d at base 0x%lx reads the wrong bytes", 8 << scale, (unsigned long)base);
        checked++;
      } else if (r.type() == R_AARCH64_ADD_ABS_LO12_NC) {
        cr_assert(bytes_at(linked, paired_address(object, linked, r, 0), 12) == float_bytes({1.5f, 2.5f, 3.5f}),
                  "LINK-27: ADD at base 0x%lx addresses the wrong table", (unsigned long)base);
        checked++;
      }
    }
    cr_assert_eq(checked, 6);
  }
}

/* LINK-29, LINK-30, LINK-31, LINK-33: the process's functions out of
 * ±128 MiB reach go through stubs that load x17. */
Test(aarch64, branches_out_of_reach_go_through_stubs) {
  for (const char *kernel : {"aarch64", "calls"}) {
    Elf object = arm_object(kernel);
    const uint64_t base = 0x40000000;
    Resolver resolve = table_resolver(base + (uint64_t{1} << 30), 0x1000);
    rig::LinkedForTest linked = link_ok(object, kMachine, base, resolve);
    check_layout(object, linked, field_mask);
    check_stubs(object, linked, resolve);
    std::map<uint32_t, int> counts = check_relocations(object, linked, resolve);
    cr_assert_eq(counts[0], counts[R_AARCH64_CALL26] + counts[R_AARCH64_JUMP26], "a far branch went direct");
    cr_assert_gt(counts[0], 1);
  }
}

/* LINK-29, LINK-30: the edges of B and BL's reach, above and below. */
Test(aarch64, branch_reach_edges) {
  Elf object = arm_object("aarch64");
  for (uint32_t type : {R_AARCH64_CALL26, R_AARCH64_JUMP26}) {
    Elf::Relocation branch = object.first_relocation(type);
    const uint64_t base = uint64_t{1} << 36;
    Resolver near = table_resolver(base, 0x1000);
    Formula f = formula_of(object, link_ok(object, kMachine, base, near), branch, near);
    struct Edge {
      int64_t value;  // S + A - P
      bool direct;
    };
    const int64_t reach = int64_t{1} << 27;
    for (Edge edge : {Edge{reach - 4, true}, Edge{reach, false}, Edge{-reach, true}, Edge{-reach - 4, false}}) {
      uint64_t S = f.P + edge.value - f.A;
      Resolver resolve = [&](std::string_view name) -> std::optional<uint64_t> {
        return name == f.name ? S : near(name);
      };
      rig::LinkedForTest linked = link_ok(object, kMachine, base, resolve);
      uint64_t destination = f.P + branch_offset(word_at(linked, f.P));
      uint64_t expected = edge.direct ? S + f.A : linked.stubs.at(f.name) + f.A;
      cr_assert_eq(destination, expected, "type %u with S + A - P = %ld", type, (long)edge.value);
    }
  }
}

/* LINK-17: ADRP past ±4 GiB, at the edge and over it; an LDST16 whose
 * address is odd. */
Test(aarch64, values_over_their_fields_are_refused) {
  Elf object = arm_object("hidden_data");
  const uint64_t base = uint64_t{1} << 36;
  Elf::Relocation adrp = object.first_relocation(R_AARCH64_ADR_PREL_PG_HI21);
  Resolver near = table_resolver(base, 0x1000);
  Formula f = formula_of(object, link_ok(object, kMachine, base, near), adrp, near);
  auto at = [&](uint64_t S) -> Resolver {
    return [=](std::string_view) -> std::optional<uint64_t> { return S; };
  };
  // The last page in reach links; the next one does not.
  const uint64_t last_page = page(f.P) + (uint64_t{1} << 32) - 4096;
  rig::LinkedForTest linked = link_ok(object, kMachine, base, at(last_page + 8));
  cr_assert_eq(adrp_pages(word_at(linked, f.P)), ((int64_t{1} << 32) - 4096) >> 12);
  assert_mentions(link_error(object, kMachine, base, at(last_page + 4096)),
                  {"R_AARCH64_ADR_PREL_PG_HI21", "outside_constant", "does not fit"});
  assert_mentions(link_error(object, kMachine, base, at(page(f.P) - (uint64_t{1} << 32) - 4096)), {"does not fit"});

  Elf loads = arm_object("aarch64");
  Elf::Relocation ldst16 = loads.first_relocation(R_AARCH64_LDST16_ABS_LO12_NC);
  loads.write<int64_t>(ldst16.entry_offset + offsetof(Elf64_Rela, r_addend), ldst16.rela.r_addend + 1);
  assert_mentions(link_error(loads, kMachine, 0x40000000, table_resolver(0x50000000, 16)),
                  {"R_AARCH64_LDST16_ABS_LO12_NC", "does not fit"});
}

/* LINK-10: machines must match; LINK-14: clang's GOT relocations, for
 * code that takes a function's address, are not in the list. */
Test(aarch64, refusals) {
  Resolver resolve = table_resolver(0x50000000, 16);
  assert_mentions(link_error(arm_object("add"), EM_X86_64, 0x40000000, resolve), {"EM_AARCH64", "EM_X86_64"});
  assert_mentions(link_error(Elf(compile("add", Arch::x86_64)), kMachine, 0x40000000, resolve), {"EM_X86_64"});
  assert_mentions(link_error(arm_object("address_taken"), kMachine, 0x40000000, resolve),
                  {"R_AARCH64_ADR_GOT_PAGE", "sinf"});
}
