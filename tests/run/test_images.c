/* The run suite: loading images through rig_image_load (rig.txt, Running
 * work: Host code, Linking; Devices: a memory device loads no code;
 * Timelines: a load assigns a value).  Each refused object answers
 * RIG_EIMAGE with the linker's reason, which must name what it refused.
 *
 * Asserts: LINK-04, LINK-06, LINK-07, LINK-08, LINK-09, LINK-10, LINK-11,
 *   LINK-13, LINK-14, LINK-15, LINK-18, DEV-37, TL-03, ERR-22, and of
 *   Reclamation RECL-26, RECL-36, RECL-46 for loaded code.
 *
 * Not reached here: LINK-16, LINK-17, LINK-19 and the relocations'
 * formulas (LINK-23..33) need objects the linker's own suites build field
 * by field (tests/link); through rig.h they answer as the refusals here.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "helpers.h"
#include "run_support.h"

/* Asserts that rig_image_load of the n bytes at bytes on d answers
 * RIG_EIMAGE with a reason that mentions word (where word is not NULL). */
static void expect_refused_bytes(rig_device_t *d, const void *bytes, int64_t n, const char *word, const char *what) {
  rig_image_t *image = NULL;
  rig_status_t status = rig_image_load(d, bytes, n, &image);
  const char *why = check_error_copy();
  cr_assert_eq(status, RIG_EIMAGE, "%s: rig_image_load answered %s (%s), not RIG_EIMAGE", what,
               rig_status_name(status), why);
  cr_assert(why[0] != '\0', "%s: RIG_EIMAGE without a reason", what);
  if (word) assert_mentions(why, word);
}

static void expect_refused(const object_t *o, const char *word, const char *what) {
  expect_refused_bytes(rig_host(), o->bytes, o->n, word, what);
}

/* Compiles source for the host, refuses it as expect_refused, frees it. */
static void expect_source_refused(const char *source, const char *extra_flag, const char *word, const char *what) {
  object_t o = compile_object(source, FOR_HOST, extra_flag);
  expect_refused(&o, word, what);
  object_free(&o);
}

/* The offset in o of .rela.text's first entry's r_info. */
static size_t first_relocation_info(const object_t *o) {
  size_t rela = elf_section(o, ".rela.text");
  size_t entries = (size_t)elf_read(o, elf_section_field(o, rela, offsetof(Elf64_Shdr, sh_offset)), 8);
  cr_assert_gt(elf_read(o, elf_section_field(o, rela, offsetof(Elf64_Shdr, sh_size)), 8), 0);
  return entries + offsetof(Elf64_Rela, r_info);
}

Test(images, a_well_formed_object_loads) {
  /* LINK-01, LINK-04 */
  object_t o = host_object(LINK_KERNEL("calls"));
  rig_image_t *image = load_image(rig_host(), &o);
  cr_assert(rig_image_device(image) == rig_host());
  function_of(image, "calls");
  function_of(image, "tail_cos");
  rig_image_unref(image);
  object_free(&o);
}

Test(images, input_that_is_not_an_object_is_refused) {
  /* LINK-04, LINK-06 */
  static const char text[] = "not an object at all";
  expect_refused_bytes(rig_host(), text, sizeof text, NULL, "text");
  expect_refused_bytes(rig_host(), NULL, 0, NULL, "no bytes");
  object_t o = host_object(LINK_KERNEL("add"));
  int64_t lengths[] = {4, 63, 64, o.n / 2, o.n - 1};
  for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++)
    expect_refused_bytes(rig_host(), o.bytes, lengths[i], NULL, "a truncated object");
  object_free(&o);
}

Test(images, objects_of_another_kind_are_refused) {
  /* LINK-07, LINK-08, LINK-09, LINK-10 */
  object_t o = host_object(LINK_KERNEL("add"));
  o.bytes[EI_CLASS] = ELFCLASS32;
  expect_refused(&o, "64-bit", "LINK-07: ELFCLASS32");
  o.bytes[EI_CLASS] = ELFCLASS64;
  o.bytes[EI_DATA] = ELFDATA2MSB;
  expect_refused(&o, "little-endian", "LINK-08: big-endian");
  o.bytes[EI_DATA] = ELFDATA2LSB;
  const uint16_t types[] = {ET_EXEC, ET_DYN};
  for (size_t i = 0; i < 2; i++) {
    elf_write(&o, offsetof(Elf64_Ehdr, e_type), 2, types[i]);
    expect_refused(&o, "ET_REL", "LINK-09: not ET_REL");
  }
  elf_write(&o, offsetof(Elf64_Ehdr, e_type), 2, ET_REL);
  rig_image_unref(load_image(rig_host(), &o)); /* the patches are undone */
  object_free(&o);

  object_t other = compile_object(LINK_KERNEL("add"), FOR_OTHER, NULL);
  expect_refused(&other, "machine", "LINK-10: an object for the other machine");
  object_free(&other);
}

Test(images, objects_that_break_a_linking_rule_are_refused) {
  /* LINK-11, LINK-13, LINK-14, LINK-15, LINK-18 */
  expect_source_refused(LINK_KERNEL("data"), NULL, ".data", "LINK-11: a .data in use");
  expect_source_refused(LINK_KERNEL("bss"), NULL, ".bss", "LINK-11: a .bss in use");
  expect_source_refused(LINK_KERNEL("undefined"), NULL, "no_such_symbol_xyz",
                        "LINK-18: a symbol nowhere defined");
  expect_source_refused(RUN_KERNEL("common"), "-fcommon", "common", "LINK-15: a common symbol");

  object_t o = host_object(LINK_KERNEL("calls"));
  size_t rela = elf_section(&o, ".rela.text");
  size_t type_at = elf_section_field(&o, rela, offsetof(Elf64_Shdr, sh_type));
  elf_write(&o, type_at, 4, SHT_REL);
  expect_refused(&o, "SHT_REL", "LINK-13: SHT_REL");
  elf_write(&o, type_at, 4, SHT_RELA);

  size_t info_at = first_relocation_info(&o);
  uint64_t info = elf_read(&o, info_at, 8);
  elf_write(&o, info_at, 8, ELF64_R_INFO(ELF64_R_SYM(info), 9999));
  expect_refused(&o, "9999", "LINK-14: a relocation of type 9999");
  object_free(&o);
}

Test(images, a_memory_device_loads_no_code) {
  /* DEV-37 */
  rig_device_t *mem = open_named("MEM:0");
  uint64_t before = rig_submitted(mem);
  object_t o = host_object(LINK_KERNEL("add"));
  expect_refused_bytes(mem, o.bytes, o.n, NULL, "DEV-37: an object on a memory device");
  cr_assert_eq(rig_submitted(mem), before, "a refused load assigned a value");
  object_free(&o);
}

Test(images, a_load_on_a_sim_device_assigns_a_value) {
  /* TL-03 */
  rig_device_t *sim = open_sim("SIM:30", "latency_us=0");
  uint64_t before = rig_submitted(sim);
  rig_image_t *image = load_kernels(sim, LINK_KERNEL("add"));
  cr_assert_eq(rig_submitted(sim), before + 1, "TL-03: the load assigned %llu values",
               (unsigned long long)(rig_submitted(sim) - before));
  cr_assert(rig_image_device(image) == sim);
  function_of(image, "add");
  rig_image_unref(image);
  CHECK_OK(rig_close(sim));
}

Test(images, a_function_the_device_cannot_run_loses_nothing) {
  skip_through_rigd("it drives the sim through its injection capability (sim_inject.h), which a proxy does not declare");
  /* ERR-22: the sim's entry answers once that it cannot run add (the
   * driver's invalid_argument); resolve answers RIG_EINVAL with the
   * driver's reason, the device is not lost, and the next resolve runs. */
  rig_device_t *sim = open_sim("SIM:31", "latency_us=0");
  const rig_sim_inject_t *inj = sim_inject(sim);
  rig_image_t *image = load_kernels(sim, LINK_KERNEL("add"));
  inj->entries_refuse(inj->device, 1);
  rig_function_t *f = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_image_resolve(image, "add", &f), "ERR-22: a function the sim cannot run");
  assert_mentions(rig_last_error(), "needs more than the sim offers");
  cr_assert_null(f);
  cr_assert_null(rig_lost(sim), "ERR-22: the refusal lost %s", rig_device_name(sim));
  CHECK_OK(rig_image_resolve(image, "add", &f));
  cr_assert_not_null(f, "the device serves the next resolve");
  rig_image_unref(image);
  CHECK_OK(rig_close(sim));
}

Test(images, loads_refuse_bad_arguments_and_lost_devices) {
  object_t o = host_object(LINK_KERNEL("add"));
  rig_image_t *image = NULL;
  CHECK_FAILS(RIG_EINVAL, rig_image_load(NULL, o.bytes, o.n, &image));
  CHECK_FAILS(RIG_EINVAL, rig_image_load(rig_host(), o.bytes, o.n, NULL));
  CHECK_FAILS(RIG_EINVAL, rig_image_load(rig_host(), o.bytes, -1, &image));
  CHECK_FAILS(RIG_EINVAL, rig_image_load(rig_host(), NULL, o.n, &image));

  rig_device_t *sim = open_sim("SIM:31", "latency_us=0");
  CHECK_OK(rig_close(sim));
  CHECK_LOST(sim, rig_image_load(sim, o.bytes, o.n, &image), "a load on a closed device");
  object_free(&o);
}

/* ---- Loaded code counts in its device's budget (RECL-26) --------------- */

/* The bytes o's image holds in the sim's budget while loaded, which return
 * at its unload (RECL-46): the pages the sim's link mapped on the host. */
static int64_t code_bytes(rig_device_t *sim, const object_t *o) {
  int64_t start = rig_allocated(sim);
  rig_image_t *image = load_image(sim, o);
  int64_t code = rig_allocated(sim) - start;
  cr_assert_gt(code, 0, "RECL-46: the loaded image counts in allocated");
  cr_assert_eq(code % 4096, 0, "the image's mapping is whole pages, not %lld bytes", (long long)code);
  rig_image_unref(image);
  cr_assert_eq(rig_allocated(sim), start, "the unloaded image's bytes returned");
  return code;
}

Test(images, loaded_code_counts_in_the_budget_until_unloaded) {
  /* RECL-26 RECL-46 */
  rig_device_t *sim = open_with("SIM:34", "latency_us=0");
  object_t o = host_object(LINK_KERNEL("add"));
  int64_t start = rig_allocated(sim);
  int64_t code = code_bytes(sim, &o);
  rig_image_t *image = NULL;

  /* A budget without room for the code refuses the load. */
  CHECK_OK(rig_set_budget(sim, start + code - 1));
  CHECK_FAILS(RIG_ENOMEM, rig_image_load(sim, o.bytes, o.n, &image), "RECL-26: no room for the code");
  cr_assert_null(image);
  cr_assert(rig_error_device() == sim);
  cr_assert_eq(rig_error_bytes(), code);
  cr_assert_eq(rig_allocated(sim), start, "a refused load holds nothing");
  CHECK_OK(rig_set_budget(sim, start + code));
  image = load_image(sim, &o);
  cr_assert_eq(rig_allocated(sim), start + code);
  rig_image_unref(image);
  object_free(&o);
  CHECK_OK(rig_close(sim));
}

Test(images, a_load_reclaims_cached_memory_for_its_code) {
  /* RECL-26 RECL-36 */
  rig_device_t *sim = open_with("SIM:35", "latency_us=0");
  object_t o = host_object(LINK_KERNEL("add"));
  int64_t start = rig_allocated(sim);
  int64_t code = code_bytes(sim, &o);
  /* Collected memory of the code's size waits in the cache, and the budget
   * has room for it alone: the load's rounds of reclamation free it. */
  rig_buffer_t *b = create(sim, code);
  CHECK_OK(rig_buffer_fill(b, 1));
  rig_buffer_unref(b);
  int64_t cached = rig_allocated(sim);
  cr_assert_eq(cached, start + code, "the collected buffer waits in the cache");
  CHECK_OK(rig_set_budget(sim, cached));
  rig_image_t *image = load_image(sim, &o);
  cr_assert_eq(rig_allocated(sim), start + code, "the cache made room for the code");
  rig_image_unref(image);

  CHECK_OK(rig_set_budget(sim, 0));
  CHECK_FAILS(RIG_ENOMEM, rig_image_load(sim, o.bytes, o.n, &image), "a budget of 0 holds no code");
  object_free(&o);
  CHECK_OK(rig_close(sim));
}
