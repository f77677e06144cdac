/* Helpers of the run suites (tests/run): compiling kernels with clang when a
 * test runs, as a program hands rig its objects (rig.txt, Objects), loading
 * and resolving them, patching ELF objects, and making, taking and
 * submitting submissions.  Each helper fails the current test (cr_assert)
 * where a call into rig it makes does not answer RIG_OK. */
#ifndef RIG_RUN_SUPPORT_H
#define RIG_RUN_SUPPORT_H

#include <rig/rig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "helpers.h" /* function_of */

/* The source of kernel name of this suite (tests/run/kernels) or of the
 * linker's suite (tests/link/kernels), whose kernels it reuses. */
#define RUN_KERNEL(name) RIG_RUN_KERNELS "/" name ".c"
#define LINK_KERNEL(name) RIG_LINK_KERNELS "/" name ".c"

/* ---- Objects ------------------------------------------------------------ */

/* An object's bytes (malloc'd; object_free releases them). */
typedef struct object {
  uint8_t *bytes;
  int64_t n;
} object_t;

/* The machines compile_object targets. */
typedef enum object_machine {
  FOR_HOST,  /* the host's: x86_64, or arm64 with -ffixed-x18 */
  FOR_OTHER, /* the other of the two */
} object_machine_t;

/* Compiles source with the spec's flags (clang -c -O2 -fPIC
 * --target=<arch>-none-unknown-elf, and -ffixed-x18 for arm64) for machine,
 * with extra_flag too where it is not NULL, in a temporary directory that
 * it removes.  Fails the test if clang fails. */
object_t compile_object(const char *source, object_machine_t machine, const char *extra_flag);
/* compile_object(source, FOR_HOST, NULL). */
object_t host_object(const char *source);
void object_free(object_t *o);

/* Section index of the section named name; fails the test if none. */
size_t elf_section(const object_t *o, const char *name);
/* Offset in o of field_offset within section index's header (an
 * Elf64_Shdr), for patching. */
size_t elf_section_field(const object_t *o, size_t index, size_t field_offset);
/* Reads and writes a little-endian value at offset of o's bytes. */
uint64_t elf_read(const object_t *o, size_t offset, size_t bytes);
void elf_write(object_t *o, size_t offset, size_t bytes, uint64_t value);

/* ---- Images and functions ----------------------------------------------- */

/* rig_image_load of o on d; the image. */
rig_image_t *load_image(rig_device_t *d, const object_t *o);
/* Compiles source for the host and loads it on d. */
rig_image_t *load_kernels(rig_device_t *d, const char *source);
/* Fails the test unless text contains word. */
void assert_mentions(const char *text, const char *word);

/* ---- Parts -------------------------------------------------------------- */

rig_operand_t slot(uint32_t index);
rig_operand_t fixed(rig_buffer_t *b);
/* A ref of kind (READ, WRITE, READ_WRITE) to memory at byte at. */
rig_ref_t ref(rig_ref_kind_t kind, rig_operand_t memory, int64_t at);
/* A RIG_REF_UNORDERED ref to memory at byte at, used as access says. */
rig_ref_t unordered_ref(rig_operand_t memory, int64_t at, rig_access_t access);
/* A RIG_REF_ENTRY ref placing f's address at byte at. */
rig_ref_t entry_ref(const rig_function_t *f, int64_t at);
rig_part_t launch_part(const rig_function_t *f, const rig_ref_t *refs, size_t ref_count, int64_t params);
rig_part_t copy_part(rig_operand_t src, rig_operand_t dst);
rig_part_t fill_part(rig_operand_t dst, uint8_t value);
rig_part_t words_part(const rig_word_write_t *writes, size_t count);

/* ---- Submissions and runs ----------------------------------------------- */

/* rig_submission_make of the n parts on d, without options. */
rig_submission_t *make(rig_device_t *d, const rig_part_t *parts, size_t n);
/* rig_submission_take of s. */
rig_run_t *take(rig_submission_t *s);
/* Stores a grid of gx*gy*gz groups of tx*ty*tz threads into block k. */
void set_grid(rig_run_t *r, int64_t k, int64_t gx, int64_t gy, int64_t gz, int64_t tx, int64_t ty,
              int64_t tz);
/* set_grid of groups groups of threads threads along x. */
void set_line(rig_run_t *r, int64_t k, int64_t groups, int64_t threads);
/* rig_submit of r with the n buffers and no waits; its point. */
rig_point_t submit(rig_run_t *r, rig_buffer_t *const *buffers, size_t n);

/* ---- The set kernel (kernels/work.c) ------------------------------------ */

/* A launch of set writing through one ref of kind to memory: out at byte
 * 0, value at 8, 16 bytes of parameters.  refs is the caller's storage of
 * the ref, which the part points to. */
rig_part_t set_launch(const rig_function_t *set, rig_ref_t *refs, rig_ref_kind_t kind, rig_operand_t memory);
/* Stores into block k of r a launch of set over count threads (one group)
 * writing value. */
void store_set(rig_run_t *r, int64_t k, int64_t count, int64_t value);
/* Takes a run of s, whose part 0 is a launch of set, stores count threads
 * writing value, and submits it with the n buffers and no waits;
 * rig_submit's answer, its point in *out (may be NULL). */
rig_status_t try_set(rig_submission_t *s, rig_buffer_t *const *buffers, size_t n, int64_t count, int64_t value,
                     rig_point_t *out);
/* try_set with the one buffer b, which must answer RIG_OK; its point. */
rig_point_t submit_set(rig_submission_t *s, rig_buffer_t *b, int64_t count, int64_t value);

/* ---- Buffers of int64 values --------------------------------------------- */

/* A buffer of count int64 values on d (d's own memory), each value. */
rig_buffer_t *int64s(rig_device_t *d, int64_t count, int64_t value);
/* Copies b's first count int64 values into out, through the host
 * (rig_buffer_blit_to_bytes, which follows b's last writes). */
void read_int64s(rig_buffer_t *b, int64_t *out, int64_t count);
/* b's int64 value at index i, read as read_int64s does. */
int64_t int64_at(rig_buffer_t *b, int64_t i);
/* Asserts that b's first count int64 values are each want. */
void expect_int64s(rig_buffer_t *b, int64_t count, int64_t want, const char *what);
/* A buffer of count int64 zeros of d's Pinned memory, which the host
 * addresses (on a sim device: reads and fills without the device's work). */
rig_buffer_t *pinned_zeros(rig_device_t *d, int64_t count);
/* A buffer over b's bytes that admits only Read, made by consuming b
 * under a hold that is not exclusive; releases the caller's b, which is
 * dead. */
rig_buffer_t *read_only(rig_buffer_t *b);

/* ---- Sim devices --------------------------------------------------------- */

/* The config of a sim device that runs each value's work at once. */
#define SIM_QUICK "latency_us=0,commit_every=1"
/* A latency, in microseconds, after which a sim device's work has surely
 * not run right after its submit returned (the sim suite's SLOW). */
#define SIM_SLOW_US 250000

/* The sim device name, opened with config; or, where RIG_RUN_SIM names a
 * device (SIM:0@rigd, through the rigd that RIG_SERVICE names), that one
 * with config, so that the suites' cases run through rigd. */
rig_device_t *open_sim(const char *name, const char *config);
/* Skips the calling test where RIG_RUN_SIM is set, saying why the case
 * does not apply through rigd. */
void skip_through_rigd(const char *why);

/* Makes every later value's work on the sim device d take at least us
 * microseconds: a test opens a device quick, makes what it needs, then
 * slows it so that work it submits next is surely still queued. */
void sim_latency(const rig_device_t *d, int64_t us);

#endif
