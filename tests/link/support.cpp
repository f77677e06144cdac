#include "support.hpp"

#include <criterion/criterion.h>

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

extern char **environ;

namespace link_test {

uint16_t machine_of(Arch arch) { return arch == Arch::x86_64 ? EM_X86_64 : EM_AARCH64; }

Arch host_arch() {
#if defined(__aarch64__)
  return Arch::aarch64;
#else
  return Arch::x86_64;
#endif
}

namespace {

// Runs argv[0] with argv and waits for it; its exit status, or -1.
int run(const std::vector<std::string> &args) {
  std::vector<char *> argv;
  for (const std::string &arg : args) argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::vector<uint8_t> compile(const std::string &kernel, Arch arch, const std::vector<std::string> &extra_flags) {
  namespace fs = std::filesystem;
  std::string pattern = (fs::temp_directory_path() / "rig-link-XXXXXX").string();
  cr_assert(mkdtemp(pattern.data()) != nullptr, "cannot make a temporary directory");
  fs::path dir = pattern;
  std::string output = (dir / (kernel + ".o")).string();
  std::vector<std::string> args = {RIG_LINK_CLANG, "-c", "-O2", "-fPIC"};
  if (arch == Arch::x86_64) {
    args.push_back("--target=x86_64-none-unknown-elf");
  } else {
    args.push_back("--target=aarch64-none-unknown-elf");
    args.push_back("-ffixed-x18");
  }
  args.insert(args.end(), extra_flags.begin(), extra_flags.end());
  args.insert(args.end(), {std::string(RIG_LINK_KERNELS) + "/" + kernel + ".c", "-o", output});
  int status = run(args);
  std::ifstream file(output, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  fs::remove_all(dir);
  cr_assert(status == 0 && !bytes.empty(), "clang failed on %s.c (status %d)", kernel.c_str(), status);
  return bytes;
}

std::string Elf::string_at(size_t table, size_t offset) const {
  Elf64_Shdr strtab = section(table);
  cr_assert(offset < strtab.sh_size, "the test's object has a name out of its string table");
  return std::string(reinterpret_cast<const char *>(bytes.data() + strtab.sh_offset + offset));
}

std::string Elf::section_name(size_t index) const {
  return string_at(header().e_shstrndx, section(index).sh_name);
}

size_t Elf::section_index(const std::string &name) const {
  for (size_t i = 1; i < section_count(); i++)
    if (section_name(i) == name) return i;
  cr_assert_fail("the object has no section %s", name.c_str());
  return 0;
}

size_t Elf::symtab_index() const {
  for (size_t i = 1; i < section_count(); i++)
    if (section(i).sh_type == SHT_SYMTAB) return i;
  cr_assert_fail("the object has no symbol table");
  return 0;
}

std::string Elf::symbol_name(size_t index) const {
  return string_at(section(symtab_index()).sh_link, symbol(index).st_name);
}

size_t Elf::symbol_index(const std::string &name) const {
  for (size_t i = 1; i < symbol_count(); i++)
    if (symbol_name(i) == name) return i;
  cr_assert_fail("the object has no symbol %s", name.c_str());
  return 0;
}

std::vector<Elf::Relocation> Elf::relocations() const {
  std::vector<Relocation> all;
  for (size_t i = 1; i < section_count(); i++) {
    Elf64_Shdr table = section(i);
    if (table.sh_type != SHT_RELA) continue;
    for (size_t e = 0; e < table.sh_size / sizeof(Elf64_Rela); e++) {
      size_t offset = table.sh_offset + e * sizeof(Elf64_Rela);
      all.push_back(Relocation{table.sh_info, offset, read<Elf64_Rela>(offset)});
    }
  }
  return all;
}

Elf::Relocation Elf::first_relocation(uint32_t type) const {
  for (const Relocation &r : relocations())
    if (r.type() == type) return r;
  cr_assert_fail("the object has no relocation of type %u", type);
  return {};
}

rig::LinkedForTest link_ok(const Elf &object, uint16_t machine, uint64_t base, const Resolver &resolve) {
  auto result = rig::link_for_test(object.bytes.data(), object.bytes.size(), machine, base, resolve);
  if (auto *why = std::get_if<std::string>(&result)) cr_assert_fail("link_for_test failed: %s", why->c_str());
  return std::get<rig::LinkedForTest>(std::move(result));
}

std::string link_error(const Elf &object, uint16_t machine, uint64_t base, const Resolver &resolve) {
  auto result = rig::link_for_test(object.bytes.data(), object.bytes.size(), machine, base, resolve);
  cr_assert(std::holds_alternative<std::string>(result), "link_for_test linked an object it must refuse");
  std::string why = std::get<std::string>(result);
  cr_assert(!why.empty(), "link_for_test refused with an empty reason");
  return why;
}

std::unique_ptr<rig::HostImage> host_link_ok(const Elf &object) {
  auto result = rig::link_host(object.bytes.data(), object.bytes.size());
  if (auto *why = std::get_if<std::string>(&result)) cr_assert_fail("link_host failed: %s", why->c_str());
  return std::get<std::unique_ptr<rig::HostImage>>(std::move(result));
}

std::string host_link_error(const Elf &object) {
  auto result = rig::link_host(object.bytes.data(), object.bytes.size());
  cr_assert(std::holds_alternative<std::string>(result), "link_host linked an object it must refuse");
  std::string why = std::get<std::string>(result);
  cr_assert(!why.empty(), "link_host refused with an empty reason");
  return why;
}

void assert_mentions(const std::string &text, std::initializer_list<const char *> words) {
  for (const char *word : words)
    cr_assert(text.find(word) != std::string::npos, "the reason \"%s\" does not mention \"%s\"", text.c_str(), word);
}

Formula formula_of(const Elf &object, const rig::LinkedForTest &linked, const Elf::Relocation &relocation,
                   const Resolver &resolve) {
  Formula f;
  auto section_address = [&](size_t index) {
    auto found = linked.sections.find(uint32_t(index));
    cr_assert(found != linked.sections.end(), "section %s has no address", object.section_name(index).c_str());
    return found->second;
  };
  f.P = section_address(relocation.patched_section) + relocation.rela.r_offset;
  f.A = relocation.rela.r_addend;
  Elf64_Sym sym = object.symbol(relocation.symbol());
  f.name = object.symbol_name(relocation.symbol());
  f.undefined = sym.st_shndx == SHN_UNDEF;
  if (f.undefined) {
    std::optional<uint64_t> address = resolve(f.name);
    cr_assert(address.has_value(), "the test's resolver does not define %s", f.name.c_str());
    f.S = *address;
  } else {
    f.S = section_address(sym.st_shndx) + sym.st_value;
  }
  return f;
}

uint32_t word_at(const rig::LinkedForTest &linked, uint64_t address) {
  cr_assert(address >= linked.base && address - linked.base + 4 <= linked.image.size(), "address outside the image");
  uint32_t word;
  std::memcpy(&word, linked.image.data() + (address - linked.base), 4);
  return word;
}

uint64_t quad_at(const rig::LinkedForTest &linked, uint64_t address) {
  cr_assert(address >= linked.base && address - linked.base + 8 <= linked.image.size(), "address outside the image");
  uint64_t quad;
  std::memcpy(&quad, linked.image.data() + (address - linked.base), 8);
  return quad;
}

void check_layout(const Elf &object, const rig::LinkedForTest &linked,
                  const std::function<uint32_t(uint32_t type)> &field_mask) {
  struct Range {
    uint64_t start, end;
  };
  std::vector<Range> ranges;
  for (size_t i = 1; i < object.section_count(); i++) {
    Elf64_Shdr s = object.section(i);
    auto found = linked.sections.find(uint32_t(i));
    if (!(s.sh_flags & SHF_ALLOC)) {
      cr_assert(found == linked.sections.end(), "unallocated section %s in the image", object.section_name(i).c_str());
      continue;
    }
    cr_assert(found != linked.sections.end(), "LINK-20: allocated section %s not in the image",
              object.section_name(i).c_str());
    uint64_t address = found->second;
    if (s.sh_addralign > 1)
      cr_assert(address % s.sh_addralign == 0, "LINK-20: section %s at 0x%lx is not a multiple of its alignment %lu",
                object.section_name(i).c_str(), (unsigned long)address, (unsigned long)s.sh_addralign);
    cr_assert(address >= linked.base && address - linked.base + s.sh_size <= linked.image.size(),
              "LINK-20: section %s lies outside the image", object.section_name(i).c_str());
    ranges.push_back({address, address + s.sh_size});

    // The bytes the link wrote: the object's, or zeros for SHT_NOBITS.
    std::vector<uint8_t> expected(s.sh_size, 0);
    if (s.sh_type != SHT_NOBITS)
      std::copy_n(object.bytes.begin() + s.sh_offset, s.sh_size, expected.begin());
    std::vector<uint8_t> mask(s.sh_size, 0xff);  // bits the link must leave alone
    for (const Elf::Relocation &r : object.relocations()) {
      if (r.patched_section != i) continue;
      uint32_t field = field_mask(r.type());
      for (int b = 0; b < 4; b++) mask[r.rela.r_offset + b] &= uint8_t(~(field >> (8 * b)));
    }
    const uint8_t *actual = linked.image.data() + (address - linked.base);
    for (uint64_t b = 0; b < s.sh_size; b++)
      cr_assert((actual[b] & mask[b]) == (expected[b] & mask[b]),
                "section %s byte %lu differs from the object's outside the relocated fields",
                object.section_name(i).c_str(), (unsigned long)b);
  }
  std::sort(ranges.begin(), ranges.end(), [](Range a, Range b) { return a.start < b.start; });
  uint64_t image_end = linked.base;
  for (size_t i = 0; i < ranges.size(); i++) {
    if (i > 0) cr_assert(ranges[i - 1].end <= ranges[i].start, "LINK-20: two sections overlap");
    image_end = std::max(image_end, ranges[i].end);
  }
  for (const auto &[name, stub] : linked.stubs)
    cr_assert(stub >= image_end && stub + 16 <= linked.base + linked.image.size(),
              "LINK-31: the stub of %s does not lie after the image", name.c_str());
}

}  // namespace link_test
