/* io devices: safetensors files read into device memory (rig/safetensors.h).
 *
 * No rule ID: the safetensors format is Hugging Face's, and its loader
 * rig's addition (issue #22, item 4).  Files are made by the tests in
 * /var/tmp (RIG_TEST_IO_DIR overrides it).  Asserts: the header's tensors,
 * in the order of their bytes, with dtype, shape, offset and bytes; loads
 * into one buffer per tensor and into one arena, on MEM:43 (host-addressed)
 * and SIM:43 (through staging), every byte checked, for tensors at offsets
 * that are and are not multiples of 4096 and for empty tensors; files the
 * format refuses, each answered RIG_EIO naming the file and what is wrong
 * (a header that lies about offsets: past the data, overlapping, with a
 * gap, or spanning other than its shape; a truncated file; a header count
 * past the file; malformed JSON; an unknown dtype; a directory); the
 * arguments' errors. */
#define _GNU_SOURCE

#include <criterion/criterion.h>
#include <rig/rig.h>
#include <rig/safetensors.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_OK(call)                                                                        \
  do {                                                                                        \
    rig_status_t s_ = (call);                                                                 \
    cr_assert_eq(s_, RIG_OK, "%s: %s: %s", #call, rig_status_name(s_), rig_last_error()); \
  } while (0)

static const char *io_dir(void) {
  const char *dir = getenv("RIG_TEST_IO_DIR");
  return dir && *dir ? dir : "/var/tmp";
}

/* Writes a safetensors file of header (its count given by count, or the
 * header's length where count is -1) then n bytes of data; its path. */
static char *write_file(const char *header, int64_t count, const uint8_t *data, size_t n) {
  char *path = NULL;
  cr_assert_geq(asprintf(&path, "%s/rig-safetensors-XXXXXX", io_dir()), 0);
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0, "mkstemp %s", path);
  uint64_t c = count < 0 ? strlen(header) : (uint64_t)count;
  uint8_t bytes[8];
  for (int i = 0; i < 8; i++) bytes[i] = (uint8_t)(c >> (8 * i));
  cr_assert_eq(write(fd, bytes, 8), 8);
  cr_assert_eq(write(fd, header, strlen(header)), (ssize_t)strlen(header));
  if (n) cr_assert_eq(write(fd, data, n), (ssize_t)n);
  close(fd);
  return path;
}

/* n bytes of a pattern that differs per byte and per seed. */
static uint8_t *pattern(size_t n, unsigned seed) {
  uint8_t *p = calloc(n ? n : 1, 1);
  cr_assert_not_null(p);
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 131 + seed * 17 + (i >> 8));
  return p;
}

static void assert_bytes(rig_buffer_t *b, const uint8_t *want, int64_t n) {
  cr_assert_eq(rig_buffer_bytes(b), n);
  if (n == 0) return;
  uint8_t *got = malloc((size_t)n);
  CHECK_OK(rig_buffer_blit_to_bytes(b, 0, got, n, 0, n));
  cr_assert(memcmp(got, want, (size_t)n) == 0, "the buffer's bytes are not the file's");
  free(got);
}

/* A file of four tensors: a at data byte 0 (4096 F32: 16384 bytes, a
 * multiple of 4096), b an empty I64 [0, 3], c 3 x 5 BF16 (30 bytes), d 7
 * U8 at an odd offset. */
#define DATA_BYTES (16384 + 30 + 7)
static const char *four_tensors =
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"d\":{\"dtype\":\"U8\",\"shape\":[7],\"data_offsets\":[16414,16421]},"
    "\"a\":{\"dtype\":\"F32\",\"shape\":[64,64],\"data_offsets\":[0,16384]},"
    "\"b\":{\"dtype\":\"I64\",\"shape\":[0,3],\"data_offsets\":[16384,16384]},"
    "\"c\":{\"dtype\":\"BF16\",\"shape\":[3,5],\"data_offsets\":[16384,16414]}}   ";

Test(safetensors, the_header_names_each_tensor_in_the_order_of_its_bytes) {
  uint8_t *data = pattern(DATA_BYTES, 1);
  char *path = write_file(four_tensors, -1, data, DATA_BYTES);
  rig_safetensors_t *st = NULL;
  CHECK_OK(rig_safetensors_open(path, &st));
  cr_assert_eq(rig_safetensors_count(st), 4);
  cr_assert_eq(rig_safetensors_data_bytes(st), DATA_BYTES);
  int64_t data_start = 8 + (int64_t)strlen(four_tensors);
  const char *names[] = {"a", "b", "c", "d"}, *dtypes[] = {"F32", "I64", "BF16", "U8"};
  int64_t offsets[] = {0, 16384, 16384, 16414}, bytes[] = {16384, 0, 30, 7};
  size_t ranks[] = {2, 2, 2, 1};
  for (size_t i = 0; i < 4; i++) {
    const rig_tensor_info_t *t = rig_safetensors_tensor(st, i);
    cr_assert_str_eq(t->name, names[i]);
    cr_assert_str_eq(t->dtype, dtypes[i]);
    cr_assert_eq(t->rank, ranks[i]);
    cr_assert_eq(t->offset, data_start + offsets[i]);
    cr_assert_eq(t->bytes, bytes[i]);
  }
  cr_assert_eq(rig_safetensors_tensor(st, 2)->shape[0], 3);
  cr_assert_eq(rig_safetensors_tensor(st, 2)->shape[1], 5);
  cr_assert_null(rig_safetensors_tensor(st, 4));
  rig_safetensors_close(st);
  unlink(path);
  free(path);
  free(data);
}

static void load_each_way(const char *device) {
  rig_device_t *d = NULL;
  CHECK_OK(rig_open(device, NULL, &d));
  uint8_t *data = pattern(DATA_BYTES, 2);
  char *path = write_file(four_tensors, -1, data, DATA_BYTES);
  rig_safetensors_t *st = NULL;
  CHECK_OK(rig_safetensors_open(path, &st));
  int64_t data_start = 8 + (int64_t)strlen(four_tensors);
  rig_buffer_t *buffers[4], *views[4], *arena = NULL;
  CHECK_OK(rig_safetensors_load(st, d, RIG_MEMORY_DEVICE, buffers));
  CHECK_OK(rig_safetensors_load_arena(st, d, RIG_MEMORY_DEVICE, &arena, views));
  cr_assert_eq(rig_buffer_bytes(arena), DATA_BYTES);
  assert_bytes(arena, data, DATA_BYTES);
  for (size_t i = 0; i < 4; i++) {
    const rig_tensor_info_t *t = rig_safetensors_tensor(st, i);
    cr_assert_eq(rig_buffer_device(buffers[i]), d);
    assert_bytes(buffers[i], data + (t->offset - data_start), t->bytes);
    assert_bytes(views[i], data + (t->offset - data_start), t->bytes);
    rig_buffer_unref(buffers[i]);
    rig_buffer_unref(views[i]);
  }
  rig_buffer_unref(arena);
  rig_safetensors_close(st);
  unlink(path);
  free(path);
  free(data);
}

Test(safetensors, loads_every_byte_on_a_memory_device) { load_each_way("MEM:43"); }
Test(safetensors, loads_every_byte_through_staging) { load_each_way("SIM:43"); }

/* Fails unless opening the file of header (count as write_file's) and
 * data_bytes bytes answers RIG_EIO with a message that names the file and
 * says words. */
static void assert_refused(const char *header, int64_t count, size_t data_bytes, const char *words) {
  uint8_t *data = pattern(data_bytes, 3);
  char *path = write_file(header, count, data, data_bytes);
  rig_safetensors_t *st = (rig_safetensors_t *)&st;
  rig_status_t s = rig_safetensors_open(path, &st);
  cr_assert_eq(s, RIG_EIO, "%s: %s", header, rig_status_name(s));
  cr_assert_null(st);
  cr_assert(strstr(rig_last_error(), path) != NULL, "the message names no file: %s", rig_last_error());
  cr_assert(strstr(rig_last_error(), words) != NULL, "\"%s\" not in: %s", words, rig_last_error());
  unlink(path);
  free(path);
  free(data);
}

Test(safetensors, a_header_that_lies_about_offsets_is_refused) {
  assert_refused("{\"x\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]}}", -1, 4, "span 8 bytes of data");
  assert_refused("{\"x\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                 "\"y\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}}",
                 -1, 6, "overlaps");
  assert_refused("{\"x\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}", -1, 8, "a gap");
  assert_refused("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", -1, 4, "its F32 shape 8");
  assert_refused("{\"x\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[4,2]}}", -1, 4, "end before they begin");
  assert_refused("{\"x\":{\"dtype\":\"U8\",\"shape\":[-2],\"data_offsets\":[0,2]}}", -1, 2, "negative");
  assert_refused("{\"x\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}", -1, 0,
                 "more than 2^63 - 1");
}

Test(safetensors, a_truncated_file_is_refused) {
  /* Its header says 16 bytes; the file holds 10 after it. */
  assert_refused("{\"x\":{\"dtype\":\"U8\",\"shape\":[16],\"data_offsets\":[0,16]}}", -1, 10, "the file holds 10");
}

Test(safetensors, a_header_larger_than_the_file_is_refused) {
  assert_refused("{}", 1 << 20, 0, "does not fit");
  assert_refused("{}", 1, 0, "does not fit");
  assert_refused("{}", (int64_t)1 << 40, 0, "does not fit");
}

Test(safetensors, malformed_headers_are_refused) {
  assert_refused("{\"x\": [1, 2", -1, 0, "not JSON");
  assert_refused("[1, 2]", -1, 0, "not a JSON object");
  assert_refused("{\"x\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,1]}}", -1, 1, "unknown dtype Q7");
  assert_refused("{\"x\":{\"shape\":[1],\"data_offsets\":[0,1]}}", -1, 1, "no dtype");
  assert_refused("{\"x\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", -1, 1, "no shape");
  assert_refused("{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0]}}", -1, 1, "no data_offsets");
  assert_refused("{\"__metadata__\":{\"a\":1}}", -1, 0, "not a string");
}

Test(safetensors, an_empty_file_of_no_tensors_loads_nothing) {
  char *path = write_file("{}", -1, NULL, 0);
  rig_safetensors_t *st = NULL;
  CHECK_OK(rig_safetensors_open(path, &st));
  cr_assert_eq(rig_safetensors_count(st), 0);
  rig_device_t *d = NULL;
  CHECK_OK(rig_open("MEM:43", NULL, &d));
  rig_buffer_t *arena = NULL, *none[1] = {NULL};
  CHECK_OK(rig_safetensors_load(st, d, RIG_MEMORY_DEVICE, none));
  CHECK_OK(rig_safetensors_load_arena(st, d, RIG_MEMORY_DEVICE, &arena, none));
  cr_assert_eq(rig_buffer_bytes(arena), 0);
  rig_buffer_unref(arena);
  rig_safetensors_close(st);
  unlink(path);
  free(path);
}

Test(safetensors, what_is_not_a_file_is_refused_at_once) {
  rig_safetensors_t *st = NULL;
  cr_assert_eq(rig_safetensors_open(io_dir(), &st), RIG_EIO);
  cr_assert(strstr(rig_last_error(), "not a regular file") != NULL, "%s", rig_last_error());
  cr_assert_eq(rig_safetensors_open("/nonexistent/rig.safetensors", &st), RIG_EIO);
  cr_assert(strstr(rig_last_error(), "/nonexistent/rig.safetensors") != NULL, "%s", rig_last_error());
  cr_assert_eq(rig_safetensors_open(NULL, &st), RIG_EINVAL);
  cr_assert_eq(rig_safetensors_open("x", NULL), RIG_EINVAL);
  cr_assert_eq(rig_safetensors_load(NULL, NULL, RIG_MEMORY_DEVICE, NULL), RIG_EINVAL);
  cr_assert_eq(rig_safetensors_count(NULL), 0);
  cr_assert_null(rig_safetensors_tensor(NULL, 0));
  rig_safetensors_close(NULL);
}
