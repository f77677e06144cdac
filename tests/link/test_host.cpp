/* The host's linker on this host (link_host): objects that meet every
 * linking rule link and their functions run when called as the host calls
 * them; every other object is refused with a reason.  The kernels are
 * compiled for this host's machine when the tests run, so on an arm64
 * host these same tests reach LINK-02 and LINK-40's arm64 half.
 *
 * Asserts: LINK-01 (LINK-02 on an arm64 host), LINK-03 in part (the add
 * object links, "add" resolves, and calls over 64 groups of (n + 63) / 64
 * threads give z[i] = x[i] + y[i]), LINK-04, LINK-06..LINK-16, LINK-17,
 * LINK-18, LINK-19, LINK-20 (alignment of a section in executable memory),
 * LINK-21/LINK-22/LINK-41 (the image runs with its relocations applied and
 * its final protection is read and execute, never write), LINK-34,
 * LINK-35, LINK-36, LINK-37 (the linked side: a call through an address in
 * the parameters), LINK-38, LINK-39, LINK-40 (x86_64 Linux here).
 *
 * Not reached: LINK-03's launch through Submission.make and submit (the
 * runtime's suites: this file calls the function as a launch's calls
 * would); LINK-05 (no host here is neither x86_64 nor arm64;
 * test_x86_64.cpp checks that the linker links for no other machine);
 * LINK-22's "at no time" during the link (only the final protection is
 * observable: the link writes, then mprotects, in one call); LINK-02 and
 * LINK-40's arm64 half on an x86_64 host (no arm64 machine runs here:
 * test_aarch64.cpp checks arm64 fields instead).
 */
#include "support.hpp"

#include <criterion/criterion.h>

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <fstream>
#include <limits>
#include <sstream>

using namespace link_test;

namespace {

using HostFunction = void (*)(const void *params, int64_t first, int64_t end);

HostFunction function_of(const rig::HostImage &image, const char *name) {
  void *address = image.resolve(name);
  cr_assert(address != nullptr, "resolve(\"%s\") found nothing", name);
  return reinterpret_cast<HostFunction>(address);
}

Elf host_object(const char *kernel) { return Elf(compile(kernel, host_arch())); }

// Runs a launch of groups groups of threads threads the way the host's
// calls do: one call per group, in reverse order (calls run in any order).
void launch(HostFunction f, const void *params, int64_t groups, int64_t threads) {
  for (int64_t g = groups - 1; g >= 0; g--) f(params, g * threads, (g + 1) * threads);
}

// The relocation type the host's compiler uses for data of the object.
uint32_t host_data_relocation() {
  return host_arch() == Arch::x86_64 ? R_X86_64_PC32 : R_AARCH64_ADR_PREL_PG_HI21;
}

// The first relocation of .text's that uses a symbol the object defines.
Elf::Relocation first_defined_use(const Elf &object) {
  for (const Elf::Relocation &r : object.relocations())
    if (object.section_name(r.patched_section) == ".text" && object.symbol(r.symbol()).st_shndx != SHN_UNDEF) return r;
  cr_assert_fail("no relocation of .text uses a defined symbol");
  return {};
}

size_t rela_text(const Elf &object) { return object.section_index(".rela.text"); }

}  // namespace

/* LINK-01 (LINK-02 on arm64), LINK-03 in part, LINK-38, LINK-40 */
Test(host, add_example_links_and_adds) {
  Elf object = host_object("add");
  auto image = host_link_ok(object);
  HostFunction add = function_of(*image, "add");

  const int64_t n = 1000, groups = 64, threads = (n + 63) / 64;
  std::vector<float> x(groups * threads), y(x.size()), z(x.size(), -1.0f);
  for (size_t i = 0; i < x.size(); i++) {
    x[i] = float(i) * 0.5f;
    y[i] = 1000.0f - float(i);
  }
  struct {
    const float *x, *y;
    float *z;
    int64_t n;
  } params = {x.data(), y.data(), z.data(), n};
  static_assert(offsetof(decltype(params), n) == 24, "the spec's layout: int64 n at offset 24");
  launch(add, &params, groups, threads);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(z[i], x[i] + y[i], "z[%ld]", (long)i);
  for (size_t i = n; i < z.size(); i++) cr_assert_eq(z[i], -1.0f, "z[%zu] past n was written", i);
}

/* LINK-38: params, first and end arrive as the host passes them.
 * LINK-37: linked code calls another function through an address in its
 * parameters. */
static int64_t triple(int64_t v) { return 3 * v + 1; }

Test(host, arguments_arrive_and_indirect_calls_work) {
  auto image = host_link_ok(host_object("arguments"));
  HostFunction arguments = function_of(*image, "arguments");
  int64_t seen[4] = {0, 0, 0, 0};
  struct {
    int64_t *seen;
    int64_t (*other)(int64_t);
    int64_t x;
  } params = {seen, triple, 41};
  arguments(&params, 123456789012345, 123456789012345 + 77);
  cr_assert_eq(seen[0], (int64_t)(intptr_t)&params);
  cr_assert_eq(seen[1], 123456789012345);
  cr_assert_eq(seen[2], 123456789012345 + 77);
  cr_assert_eq(seen[3], triple(41));
}

/* LINK-35 (sinf, memcpy, cosf from the process), LINK-36 (a struct copy
 * the compiler turns into a memcpy call), LINK-31 */
Test(host, calls_into_the_process) {
  auto image = host_link_ok(host_object("calls"));
  HostFunction calls = function_of(*image, "calls");
  std::vector<float> in(100), out(100);
  for (size_t i = 0; i < in.size(); i++) in[i] = float(i) * 0.37f - 10.0f;
  char src[300], dst[300] = {0};
  for (int i = 0; i < 300; i++) src[i] = char(i * 7);
  struct Block {
    char bytes[256];
  } block_src, block_dst = {};
  for (int i = 0; i < 256; i++) block_src.bytes[i] = char(255 - i);
  struct {
    const float *in;
    float *out;
    char *dst;
    const char *src;
    int64_t copy_bytes;
    Block *block_dst;
    const Block *block_src;
  } params = {in.data(), out.data(), dst, src, 300, &block_dst, &block_src};
  calls(&params, 0, int64_t(in.size()));
  for (size_t i = 0; i < in.size(); i++)
    cr_assert_eq(out[i], sinf(in[i]) * float(i % 8 + 1), "out[%zu]: %g, sinf gives %g", i, out[i], sinf(in[i]) * float(i % 8 + 1));
  cr_assert(std::memcmp(dst, src, 300) == 0, "memcpy did not copy");
  cr_assert(std::memcmp(block_dst.bytes, block_src.bytes, 256) == 0, "the struct copy did not copy");

  auto tail_cos = reinterpret_cast<float (*)(float)>(image->resolve("tail_cos"));
  cr_assert_not_null(tail_cos);
  for (float v : {0.0f, 1.0f, -2.5f, 100.0f}) cr_assert_eq(tail_cos(v), cosf(v * 0.5f));
}

/* LINK-20, LINK-21: read-only data in the image, and a jump table in
 * .rodata whose entries are relocated against .text. */
static int64_t pick(int64_t x, int64_t y) {
  switch (x & 7) {
    case 0: return y * 3;
    case 1: return y + 7;
    case 2: return y ^ 5;
    case 3: return y - 11;
    case 4: return y * y;
    case 5: return 99;
    case 6: return y << 3;
    default: return -y;
  }
}

Test(host, read_only_data) {
  auto image = host_link_ok(host_object("rodata"));
  HostFunction rodata = function_of(*image, "rodata");
  const int64_t primes[16] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
  std::vector<int64_t> in(64), out(64);
  for (size_t i = 0; i < in.size(); i++) in[i] = int64_t(i * 13 + 5);
  struct {
    const int64_t *in;
    int64_t *out;
  } params = {in.data(), out.data()};
  rodata(&params, 0, int64_t(in.size()));
  for (size_t i = 0; i < in.size(); i++) cr_assert_eq(out[i], pick(in[i], primes[in[i] & 15]), "out[%zu]", i);
}

/* LINK-34: the object's own sinf wins over the process's; cosf comes
 * from the process. */
Test(host, object_definition_wins) {
  auto image = host_link_ok(host_object("own_symbol"));
  HostFunction own = function_of(*image, "own");
  float in[3] = {0.5f, 2.0f, -3.0f}, out[6];
  struct {
    const float *in;
    float *out;
  } params = {in, out};
  own(&params, 0, 3);
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(out[2 * i], in[i] + 1000.0f, "the process's sinf was called, not the object's");
    cr_assert_eq(out[2 * i + 1], cosf(in[i]));
  }
  void *object_sinf = image->resolve("sinf");
  cr_assert_not_null(object_sinf, "the object's sinf is a function of the image");
  cr_assert_neq(object_sinf, dlsym(RTLD_DEFAULT, "sinf"));
}

/* LINK-39: a 1 MiB frame runs, unprobed, on threads whose stacks hold it. */
struct BigStackRun {
  HostFunction f;
  int64_t out = 0;
};

static void *run_big_stack(void *argument) {
  auto *run = static_cast<BigStackRun *>(argument);
  struct {
    int64_t *out;
    int64_t seed;
  } params = {&run->out, 3};
  run->f(&params, 10, 15);
  return nullptr;
}

Test(host, big_stack_frame_runs) {
  Elf object = host_object("big_stack");
  for (size_t i = 1; i < object.symbol_count(); i++)
    cr_assert(object.symbol(i).st_shndx != SHN_UNDEF || object.symbol_name(i).empty(),
              "the kernel calls %s: code for no system should probe no stack", object.symbol_name(i).c_str());
  auto image = host_link_ok(object);
  // 256 pages, each written (3 + page) & 0xff, plus end - first.
  int64_t expected = 5;
  for (int64_t page = 0; page < 256; page++) expected += (3 + page) & 0xff;

  BigStackRun on_main{function_of(*image, "big_stack")};
  run_big_stack(&on_main);
  cr_assert_eq(on_main.out, expected);

  BigStackRun on_thread{on_main.f};
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, 3 << 20);
  pthread_t thread;
  cr_assert_eq(pthread_create(&thread, &attributes, run_big_stack, &on_thread), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
  cr_assert_eq(on_thread.out, expected);
}

/* LINK-21, LINK-22, LINK-41: the linked image's memory is read and
 * execute, and no mapping over it is writable. */
Test(host, image_memory_is_read_execute) {
  auto image = host_link_ok(host_object("calls"));
  uintptr_t start = reinterpret_cast<uintptr_t>(image->base());
  uintptr_t end = start + image->mapped_bytes();
  cr_assert_gt(image->size(), 0u);
  cr_assert_geq(image->mapped_bytes(), image->size());
  cr_assert_eq(image->mapped_bytes() % size_t(sysconf(_SC_PAGESIZE)), 0u);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool covered = false;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, permissions;
    fields >> range >> permissions;
    uintptr_t low = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    uintptr_t high = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    if (high <= start || low >= end) continue;
    cr_assert_eq(permissions.substr(0, 3), "r-x", "image memory mapped %s", permissions.c_str());
    if (low <= start && high >= end) covered = true;
  }
  cr_assert(covered, "no single mapping holds the image");
}

/* LINK-20: a section that asks an alignment over a page gets it in
 * executable memory. */
Test(host, section_alignment_over_a_page) {
  Elf object = host_object("add");
  size_t text = object.section_index(".text");
  object.set_section_field<uint64_t>(text, offsetof(Elf64_Shdr, sh_addralign), uint64_t{1} << 16);
  auto image = host_link_ok(object);
  void *add = image->resolve("add");
  cr_assert_eq(reinterpret_cast<uintptr_t>(add) % (uintptr_t{1} << 16), 0u, "LINK-20: .text not on 64 KiB");
  float x[3] = {1, 2, 3}, y[3] = {10, 20, 30}, z[3];
  struct {
    const float *x, *y;
    float *z;
    int64_t n;
  } params = {x, y, z, 3};
  reinterpret_cast<HostFunction>(add)(&params, 0, 3);
  cr_assert(z[0] == 11 && z[1] == 22 && z[2] == 33);
}

/* LINK-12: an allocated writable section that is empty, PROGBITS or
 * NOBITS, does not stop the link. */
Test(host, empty_writable_section_links) {
  for (uint32_t type : {SHT_PROGBITS, SHT_NOBITS}) {
    Elf object = host_object("add");
    size_t note = object.section_index(".note.GNU-stack");
    cr_assert_eq(object.section(note).sh_size, 0u);
    object.set_section_field<uint64_t>(note, offsetof(Elf64_Shdr, sh_flags), SHF_ALLOC | SHF_WRITE);
    object.set_section_field<uint32_t>(note, offsetof(Elf64_Shdr, sh_type), type);
    auto image = host_link_ok(object);
    cr_assert_not_null(image->resolve("add"));
  }
}

/* LINK-04, LINK-06: input that is not a well-formed ELF object. */
Test(host, malformed_input_is_refused) {
  Elf valid = host_object("calls");
  auto refused = [](const void *bytes, size_t n) {
    auto result = rig::link_host(bytes, n);
    cr_assert(std::holds_alternative<std::string>(result), "malformed input linked");
    cr_assert(!std::get<std::string>(result).empty());
  };
  refused(nullptr, 0);
  refused("not an object at all", 20);
  for (size_t n : {size_t{3}, size_t{16}, size_t{40}, size_t{63}, size_t{64}, valid.bytes.size() / 2, valid.bytes.size() - 1})
    refused(valid.bytes.data(), n);  // truncated

  auto mutated = [&](auto &&mutate) {
    Elf object = valid;
    mutate(object);
    return host_link_error(object);
  };
  size_t text = valid.section_index(".text");
  size_t symtab = valid.symtab_index();
  assert_mentions(mutated([](Elf &o) { o.write<uint64_t>(offsetof(Elf64_Ehdr, e_shoff), o.bytes.size()); }),
                  {"section header"});
  assert_mentions(mutated([](Elf &o) { o.write<uint64_t>(offsetof(Elf64_Ehdr, e_shoff), ~uint64_t{0} - 8); }),
                  {"section header"});
  assert_mentions(mutated([](Elf &o) { o.write<uint16_t>(offsetof(Elf64_Ehdr, e_shnum), 0x7fff); }),
                  {"section header"});
  assert_mentions(mutated([](Elf &o) { o.write<uint16_t>(offsetof(Elf64_Ehdr, e_shstrndx), 0x7fff); }),
                  {"out of range"});
  assert_mentions(mutated([&](Elf &o) { o.set_section_field<uint64_t>(text, offsetof(Elf64_Shdr, sh_offset), o.bytes.size()); }),
                  {"outside the file"});
  assert_mentions(mutated([&](Elf &o) { o.set_section_field<uint64_t>(text, offsetof(Elf64_Shdr, sh_size), ~uint64_t{0}); }),
                  {"outside the file"});
  assert_mentions(mutated([&](Elf &o) { o.set_section_field<uint32_t>(text, offsetof(Elf64_Shdr, sh_name), 0xffffff); }),
                  {"string table"});
  assert_mentions(mutated([&](Elf &o) { o.set_section_field<uint64_t>(text, offsetof(Elf64_Shdr, sh_addralign), 24); }),
                  {"power of two"});
  assert_mentions(mutated([&](Elf &o) { o.set_section_field<uint32_t>(symtab, offsetof(Elf64_Shdr, sh_link), 0x7fff); }),
                  {"out of range"});
  assert_mentions(mutated([&](Elf &o) { o.write<uint32_t>(o.symbol_offset(1) + offsetof(Elf64_Sym, st_name), 0xffffff); }),
                  {"string table"});
  size_t defined = valid.symbol_offset(first_defined_use(valid).symbol());
  assert_mentions(mutated([&](Elf &o) { o.write<uint16_t>(defined + offsetof(Elf64_Sym, st_shndx), 0x7000); }),
                  {"out of range"});
  assert_mentions(mutated([&](Elf &o) { o.write<uint64_t>(defined + offsetof(Elf64_Sym, st_value), 1u << 30); }),
                  {"outside its section"});
  size_t rela = rela_text(valid);
  assert_mentions(mutated([&](Elf &o) { o.set_section_field<uint32_t>(rela, offsetof(Elf64_Shdr, sh_info), 0x7fff); }),
                  {"out of range"});
  assert_mentions(mutated([&](Elf &o) { o.set_section_field<uint32_t>(rela, offsetof(Elf64_Shdr, sh_link), uint32_t(text)); }),
                  {"symbol table"});
  assert_mentions(mutated([&](Elf &o) { o.set_section_field<uint64_t>(rela, offsetof(Elf64_Shdr, sh_entsize), 16); }),
                  {"24 bytes"});
  assert_mentions(mutated([&](Elf &o) {
                    size_t entry = o.relocations()[0].entry_offset + offsetof(Elf64_Rela, r_info);
                    o.write<uint64_t>(entry, ELF64_R_INFO(0xfffff, ELF64_R_TYPE(o.read<uint64_t>(entry))));
                  }),
                  {"out of range"});
}

/* LINK-07 */
Test(host, elfclass32_is_refused) {
  Elf object = host_object("add");
  object.bytes[EI_CLASS] = ELFCLASS32;
  assert_mentions(host_link_error(object), {"64-bit"});
}

/* LINK-08 */
Test(host, big_endian_is_refused) {
  Elf object = host_object("add");
  object.bytes[EI_DATA] = ELFDATA2MSB;
  assert_mentions(host_link_error(object), {"little-endian"});
}

/* LINK-09 */
Test(host, not_relocatable_is_refused) {
  for (uint16_t type : {ET_EXEC, ET_DYN, ET_CORE}) {
    Elf object = host_object("add");
    object.write<uint16_t>(offsetof(Elf64_Ehdr, e_type), type);
    assert_mentions(host_link_error(object), {"ET_REL"});
  }
}

/* LINK-10: an object for another machine, compiled or relabelled. */
Test(host, other_machine_is_refused) {
  Arch other = host_arch() == Arch::x86_64 ? Arch::aarch64 : Arch::x86_64;
  assert_mentions(host_link_error(Elf(compile("add", other))), {"machine"});
  Elf object = host_object("add");
  object.write<uint16_t>(offsetof(Elf64_Ehdr, e_machine), EM_386);
  assert_mentions(host_link_error(object), {"machine"});
}

/* LINK-11: a .data or .bss in use. */
Test(host, writable_section_in_use_is_refused) {
  assert_mentions(host_link_error(host_object("data")), {".data", "writable"});
  assert_mentions(host_link_error(host_object("bss")), {".bss", "writable"});
}

/* LINK-13 */
Test(host, rel_without_addend_is_refused) {
  Elf object = host_object("calls");
  object.set_section_field<uint32_t>(rela_text(object), offsetof(Elf64_Shdr, sh_type), SHT_REL);
  assert_mentions(host_link_error(object), {"SHT_REL"});
}

/* LINK-14: a type not listed, by mutation and as clang emits it when code
 * takes the address of a function of the process. */
Test(host, unlisted_relocation_is_refused) {
  Elf object = host_object("calls");
  Elf::Relocation r = object.first_relocation(host_data_relocation());
  uint32_t absolute = host_arch() == Arch::x86_64 ? R_X86_64_64 : R_AARCH64_ABS64;
  object.write<uint64_t>(r.entry_offset + offsetof(Elf64_Rela, r_info), ELF64_R_INFO(r.symbol(), absolute));
  assert_mentions(host_link_error(object), {host_arch() == Arch::x86_64 ? "R_X86_64_64" : "R_AARCH64_ABS64"});

  object.write<uint64_t>(r.entry_offset + offsetof(Elf64_Rela, r_info), ELF64_R_INFO(r.symbol(), 9999));
  assert_mentions(host_link_error(object), {"9999"});

  assert_mentions(host_link_error(host_object("address_taken")),
                  {host_arch() == Arch::x86_64 ? "GOTPCRELX" : "R_AARCH64_ADR_GOT_PAGE", "sinf"});
}

/* LINK-15: a common, thread-local, absolute or unallocated symbol. */
Test(host, symbol_defined_outside_the_image_is_refused) {
  Elf valid = host_object("calls");
  size_t symbol = valid.symbol_offset(first_defined_use(valid).symbol());
  auto with_index = [&](uint16_t index) {
    Elf object = valid;
    object.write<uint16_t>(symbol + offsetof(Elf64_Sym, st_shndx), index);
    object.write<uint64_t>(symbol + offsetof(Elf64_Sym, st_value), 0);
    return host_link_error(object);
  };
  assert_mentions(with_index(SHN_COMMON), {"common"});
  assert_mentions(with_index(SHN_ABS), {"absolute"});
  assert_mentions(with_index(uint16_t(valid.section_index(".comment"))), {".comment", "not allocated"});

  Elf object = valid;
  uint8_t info = object.read<uint8_t>(symbol + offsetof(Elf64_Sym, st_info));
  object.write<uint8_t>(symbol + offsetof(Elf64_Sym, st_info), uint8_t(ELF64_ST_INFO(ELF64_ST_BIND(info), STT_TLS)));
  assert_mentions(host_link_error(object), {"thread-local"});
}

/* LINK-16: a place outside its section, or a patched section outside the
 * image, such as debug information (clang -g). */
Test(host, patch_outside_the_image_is_refused) {
  Elf valid = host_object("calls");
  Elf::Relocation r = valid.relocations()[0];
  uint64_t size = valid.section(r.patched_section).sh_size;
  for (uint64_t offset : {size, size - 3, ~uint64_t{0} - 1}) {
    Elf object = valid;
    object.write<uint64_t>(r.entry_offset + offsetof(Elf64_Rela, r_offset), offset);
    assert_mentions(host_link_error(object), {"outside"});
  }
  // .rela.text made to patch .comment, at places inside .comment.
  Elf object = valid;
  object.set_section_field<uint32_t>(rela_text(object), offsetof(Elf64_Shdr, sh_info), uint32_t(object.section_index(".comment")));
  for (const Elf::Relocation &r : object.relocations())
    if (r.patched_section == object.section_index(".comment"))
      object.write<uint64_t>(r.entry_offset + offsetof(Elf64_Rela, r_offset), 0);
  assert_mentions(host_link_error(object), {".comment", "outside the image"});
  // Debug information's relocations patch sections outside the image.
  assert_mentions(host_link_error(Elf(compile("add", host_arch(), {"-g"}))), {".debug", "outside the image"});
}

/* LINK-17: a value that overflows its field. */
Test(host, value_over_its_field_is_refused) {
  Elf object = host_object("calls");
  Elf::Relocation r = object.first_relocation(host_data_relocation());
  object.write<int64_t>(r.entry_offset + offsetof(Elf64_Rela, r_addend), int64_t{1} << 40);
  assert_mentions(host_link_error(object), {"does not fit"});
}

/* LINK-18 */
Test(host, symbol_the_process_lacks_is_refused) {
  assert_mentions(host_link_error(host_object("undefined")), {"no_such_symbol_xyz"});
}

/* LINK-19: an image over max_int bytes (a read-only SHT_NOBITS section
 * needs no bytes in the file). */
Test(host, image_over_max_int_is_refused) {
  Elf object = host_object("calls");
  size_t rodata = object.section_index(".rodata.cst32");
  object.set_section_field<uint32_t>(rodata, offsetof(Elf64_Shdr, sh_type), SHT_NOBITS);
  object.set_section_field<uint64_t>(rodata, offsetof(Elf64_Shdr, sh_size), uint64_t(std::numeric_limits<int64_t>::max()) - 15);
  assert_mentions(host_link_error(object), {"do not fit", "9223372036854775807"});
}
