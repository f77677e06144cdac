/* The helpers run_support.h declares. */
#define _GNU_SOURCE

#include "run_support.h"


#include <criterion/criterion.h>
#include <elf.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "helpers.h"

extern char **environ;

/* ---- Objects ------------------------------------------------------------ */

/* Runs argv (argv[0] a path) and waits; its exit status, or -1. */
static int run_program(char *const *argv) {
  pid_t pid;
  if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0) return -1;
  int status;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The whole file at path (malloc'd), its length in *n; NULL if unreadable. */
static uint8_t *read_file(const char *path, int64_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *bytes = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long length = ftell(f);
    if (length > 0 && fseek(f, 0, SEEK_SET) == 0) {
      bytes = allocate_bytes(length);
      if (fread(bytes, 1, (size_t)length, f) == (size_t)length) {
        *n = length;
      } else {
        free(bytes);
        bytes = NULL;
      }
    }
  }
  fclose(f);
  return bytes;
}

static bool host_is_arm64(void) {
#if defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

object_t compile_object(const char *source, object_machine_t machine, const char *extra_flag) {
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/rig-run-XXXXXX", tmp && tmp[0] ? tmp : P_tmpdir);
  cr_assert_not_null(mkdtemp(dir), "cannot make a temporary directory");
  char output[4200];
  snprintf(output, sizeof output, "%s/kernel.o", dir);

  bool arm64 = host_is_arm64() == (machine == FOR_HOST);
  char *argv[12];
  int argc = 0;
  argv[argc++] = (char *)RIG_RUN_CLANG;
  argv[argc++] = "-c";
  argv[argc++] = "-O2";
  argv[argc++] = "-fPIC";
  argv[argc++] = arm64 ? "--target=aarch64-none-unknown-elf" : "--target=x86_64-none-unknown-elf";
  if (arm64) argv[argc++] = "-ffixed-x18";
  if (extra_flag) argv[argc++] = (char *)extra_flag;
  argv[argc++] = (char *)source;
  argv[argc++] = "-o";
  argv[argc++] = output;
  argv[argc] = NULL;

  int status = run_program(argv);
  object_t o = {NULL, 0};
  o.bytes = read_file(output, &o.n);
  unlink(output);
  rmdir(dir);
  cr_assert(status == 0 && o.bytes != NULL, "clang failed on %s (status %d)", source, status);
  return o;
}

object_t host_object(const char *source) { return compile_object(source, FOR_HOST, NULL); }

void object_free(object_t *o) {
  free(o->bytes);
  o->bytes = NULL;
  o->n = 0;
}

uint64_t elf_read(const object_t *o, size_t offset, size_t bytes) {
  cr_assert(bytes <= 8 && offset + bytes <= (size_t)o->n, "a read past the object's end");
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; i++) value |= (uint64_t)o->bytes[offset + i] << (8 * i);
  return value;
}

void elf_write(object_t *o, size_t offset, size_t bytes, uint64_t value) {
  cr_assert(bytes <= 8 && offset + bytes <= (size_t)o->n, "a write past the object's end");
  for (size_t i = 0; i < bytes; i++) o->bytes[offset + i] = (uint8_t)(value >> (8 * i));
}

size_t elf_section_field(const object_t *o, size_t index, size_t field_offset) {
  uint64_t shoff = elf_read(o, offsetof(Elf64_Ehdr, e_shoff), 8);
  return (size_t)shoff + index * sizeof(Elf64_Shdr) + field_offset;
}

size_t elf_section(const object_t *o, const char *name) {
  size_t count = (size_t)elf_read(o, offsetof(Elf64_Ehdr, e_shnum), 2);
  size_t names = (size_t)elf_read(o, offsetof(Elf64_Ehdr, e_shstrndx), 2);
  size_t names_at = (size_t)elf_read(o, elf_section_field(o, names, offsetof(Elf64_Shdr, sh_offset)), 8);
  for (size_t i = 1; i < count; i++) {
    size_t name_at = names_at + (size_t)elf_read(o, elf_section_field(o, i, offsetof(Elf64_Shdr, sh_name)), 4);
    size_t length = strlen(name) + 1;
    if (name_at + length <= (size_t)o->n && memcmp(o->bytes + name_at, name, length) == 0) return i;
  }
  cr_assert_fail("the object has no section %s", name);
  return 0;
}

/* ---- Images and functions ----------------------------------------------- */

rig_image_t *load_image(rig_device_t *d, const object_t *o) {
  rig_image_t *image = NULL;
  CHECK_OK(rig_image_load(d, o->bytes, o->n, &image), "loading on %s", rig_device_name(d));
  cr_assert_not_null(image, "rig_image_load answered RIG_OK without an image");
  return image;
}

rig_image_t *load_kernels(rig_device_t *d, const char *source) {
  object_t o = host_object(source);
  rig_image_t *image = load_image(d, &o);
  object_free(&o);
  return image;
}

void assert_mentions(const char *text, const char *word) {
  cr_assert(strstr(text, word) != NULL, "\"%s\" does not mention %s", text, word);
}

/* ---- Parts -------------------------------------------------------------- */

rig_operand_t slot(uint32_t index) { return (rig_operand_t){.slot = index, .fixed = NULL}; }

rig_operand_t fixed(rig_buffer_t *b) { return (rig_operand_t){.slot = 0, .fixed = b}; }

rig_ref_t ref(rig_ref_kind_t kind, rig_operand_t memory, int64_t at) {
  return (rig_ref_t){.kind = kind, .memory = memory, .at = at};
}

rig_ref_t unordered_ref(rig_operand_t memory, int64_t at, rig_access_t access) {
  return (rig_ref_t){.kind = RIG_REF_UNORDERED, .memory = memory, .at = at, .access = access};
}

rig_ref_t entry_ref(const rig_function_t *f, int64_t at) {
  return (rig_ref_t){.kind = RIG_REF_ENTRY, .at = at, .entry = f};
}

rig_part_t launch_part(const rig_function_t *f, const rig_ref_t *refs, size_t ref_count, int64_t params) {
  rig_part_t p = {.kind = RIG_LAUNCH};
  p.u.launch.function = f;
  p.u.launch.refs = refs;
  p.u.launch.ref_count = ref_count;
  p.u.launch.params = params;
  return p;
}

rig_part_t copy_part(rig_operand_t src, rig_operand_t dst) {
  rig_part_t p = {.kind = RIG_COPY};
  p.u.copy.src = src;
  p.u.copy.dst = dst;
  return p;
}

rig_part_t fill_part(rig_operand_t dst, uint8_t value) {
  rig_part_t p = {.kind = RIG_FILL};
  p.u.fill.dst = dst;
  p.u.fill.value = value;
  return p;
}

rig_part_t words_part(const rig_word_write_t *writes, size_t count) {
  rig_part_t p = {.kind = RIG_WORDS};
  p.u.words.writes = writes;
  p.u.words.count = count;
  return p;
}

/* ---- Submissions and runs ----------------------------------------------- */

rig_submission_t *make(rig_device_t *d, const rig_part_t *parts, size_t n) {
  rig_submission_t *s = NULL;
  CHECK_OK(rig_submission_make(d, parts, n, NULL, &s), "making a submission on %s", rig_device_name(d));
  cr_assert_not_null(s, "rig_submission_make answered RIG_OK without a submission");
  return s;
}

rig_run_t *take(rig_submission_t *s) {
  rig_run_t *r = NULL;
  CHECK_OK(rig_submission_take(s, &r));
  cr_assert_not_null(r, "rig_submission_take answered RIG_OK without a run");
  cr_assert(rig_run_submission(r) == s, "the run is not of the submission it was taken of");
  return r;
}

void set_grid(rig_run_t *r, int64_t k, int64_t gx, int64_t gy, int64_t gz, int64_t tx, int64_t ty,
              int64_t tz) {
  CHECK_OK(rig_run_groups(r, k, gx, gy, gz));
  CHECK_OK(rig_run_threads(r, k, tx, ty, tz));
}

void set_line(rig_run_t *r, int64_t k, int64_t groups, int64_t threads) {
  set_grid(r, k, groups, 1, 1, threads, 1, 1);
}

rig_point_t submit(rig_run_t *r, rig_buffer_t *const *buffers, size_t n) {
  rig_point_t p = {0};
  CHECK_OK(rig_submit(r, buffers, n, NULL, 0, &p));
  return p;
}

/* ---- The set kernel (kernels/work.c) ------------------------------------ */

rig_part_t set_launch(const rig_function_t *set, rig_ref_t *refs, rig_ref_kind_t kind, rig_operand_t memory) {
  refs[0] = ref(kind, memory, 0);
  return launch_part(set, refs, 1, 16);
}

void store_set(rig_run_t *r, int64_t k, int64_t count, int64_t value) {
  set_line(r, k, 1, count);
  CHECK_OK(rig_run_int64(r, k, 8, value));
}

rig_status_t try_set(rig_submission_t *s, rig_buffer_t *const *buffers, size_t n, int64_t count, int64_t value,
                     rig_point_t *out) {
  rig_run_t *r = take(s);
  store_set(r, rig_submission_block(s, 0), count, value);
  return rig_submit(r, buffers, n, NULL, 0, out);
}

rig_point_t submit_set(rig_submission_t *s, rig_buffer_t *b, int64_t count, int64_t value) {
  rig_point_t p = {0};
  CHECK_OK(try_set(s, &b, 1, count, value, &p));
  return p;
}

/* ---- Buffers of int64 values --------------------------------------------- */

rig_buffer_t *int64s(rig_device_t *d, int64_t count, int64_t value) {
  int64_t n = count * (int64_t)sizeof(int64_t);
  rig_buffer_t *b = create(d, n);
  int64_t *values = (int64_t *)allocate_bytes(n);
  for (int64_t i = 0; i < count; i++) values[i] = value;
  CHECK_OK(rig_buffer_blit_from_bytes(values, n, 0, b, 0, n));
  free(values);
  return b;
}

void read_int64s(rig_buffer_t *b, int64_t *out, int64_t count) {
  int64_t n = count * (int64_t)sizeof(int64_t);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, out, n, 0, n));
}

int64_t int64_at(rig_buffer_t *b, int64_t i) {
  int64_t value = 0;
  int64_t n = (int64_t)sizeof value;
  CHECK_OK(rig_buffer_blit_to_bytes(b, i * n, &value, n, 0, n));
  return value;
}

void expect_int64s(rig_buffer_t *b, int64_t count, int64_t want, const char *what) {
  int64_t *got = (int64_t *)allocate_bytes(count * (int64_t)sizeof(int64_t));
  read_int64s(b, got, count);
  for (int64_t i = 0; i < count; i++)
    if (got[i] != want) {
      int64_t g = got[i];
      free(got);
      cr_assert_fail("%s: value %" PRId64 " is %" PRId64 ", want %" PRId64, what, i, g, want);
    }
  free(got);
}

rig_buffer_t *pinned_zeros(rig_device_t *d, int64_t count) {
  rig_buffer_t *b = create_kind(d, count * (int64_t)sizeof(int64_t), RIG_MEMORY_PINNED);
  cr_assert_not_null(rig_buffer_host(b), "the host does not address %s's Pinned memory", rig_device_name(d));
  CHECK_OK(rig_buffer_fill(b, 0));
  return b;
}

rig_buffer_t *read_only(rig_buffer_t *b) {
  /* A read claim first makes the hold not exclusive, so the consume's
   * buffer admits only Read. */
  bool exclusive = true;
  CHECK_OK(rig_claim_hold(b));
  CHECK_OK(rig_claim_begin(b, &exclusive));
  cr_assert(!exclusive, "a hold beside a read claim is exclusive");
  rig_buffer_t *ro = NULL;
  CHECK_OK(rig_claim_consume(b, "made read-only", &ro));
  CHECK_OK(rig_claim_end(ro));
  CHECK_OK(rig_claim_unhold(ro));
  cr_assert_eq(rig_buffer_access(ro), RIG_ACCESS_READ, "the consumed buffer admits Read_write");
  rig_buffer_unref(b);
  return ro;
}

/* ---- Sim devices --------------------------------------------------------- */

void sim_latency(const rig_device_t *d, int64_t us) {
  const rig_sim_inject_t *inj = sim_inject(d);
  inj->set_latency_us(inj->device, us);
}

rig_device_t *open_sim(const char *name, const char *config) {
  const char *through = getenv("RIG_RUN_SIM");
  return open_with(through && *through ? through : name, config);
}

void skip_through_rigd(const char *why) {
  const char *through = getenv("RIG_RUN_SIM");
  if (through && *through) cr_skip_test("does not apply on %s: %s", through, why);
}
