/* rig_last_error says what was wrong with its numbers: the lengths of a
 * copy's two sides, the range of a blit that does not fit, and beside a
 * RIG_ENOMEM the bytes asked for, the device's budget and what it holds. */
#include <criterion/criterion.h>

#include <rig/rig.h>

#include <string.h>

static void assert_says(const char *part) {
  cr_assert(strstr(rig_last_error(), part), "'%s' not in: %s", part, rig_last_error());
}

static rig_device_t *memory_device(void) {
  rig_device_t *d = NULL;
  cr_assert_eq(rig_open("MEM:0", NULL, &d), RIG_OK, "%s", rig_last_error());
  return d;
}

static rig_buffer_t *buffer_of(rig_device_t *d, int64_t n) {
  rig_buffer_t *b = NULL;
  cr_assert_eq(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &b), RIG_OK, "%s", rig_last_error());
  return b;
}

/* COPY-77: copy requires equal lengths (RIG_EINVAL otherwise); the message
 * names both. */
Test(messages, copy_names_both_lengths) {
  rig_device_t *d = memory_device();
  rig_buffer_t *src = buffer_of(d, 4096), *dst = buffer_of(d, 2048);
  cr_assert_eq(rig_buffer_copy(src, dst), RIG_EINVAL);
  assert_says("4096 bytes");
  assert_says("2048 bytes");
  rig_buffer_unref(dst);
  rig_buffer_unref(src);
}

/* A blit whose range does not lie inside the buffer names the range and
 * the buffer's length. */
Test(messages, blit_names_its_range) {
  rig_buffer_t *b = buffer_of(memory_device(), 2048);
  char bytes[4096] = {0};
  cr_assert_eq(rig_buffer_blit_from_bytes(bytes, sizeof bytes, 0, b, 0, sizeof bytes), RIG_EINVAL);
  assert_says("4096 bytes from byte 0 of 2048");
  cr_assert_eq(rig_buffer_blit_to_bytes(b, 0, bytes, 100, 10, 200), RIG_EINVAL);
  assert_says("200 bytes from byte 10 of 100");
  rig_buffer_unref(b);
}

/* BUF-17 (memory counts in the device's budget): a create past the budget
 * answers RIG_ENOMEM whose message holds the bytes asked for, the budget
 * and the bytes the device holds. */
Test(messages, enomem_names_the_budget_and_what_is_held) {
  rig_device_t *d = memory_device();
  cr_assert_eq(rig_set_budget(d, 8192), RIG_OK);
  rig_buffer_t *held = buffer_of(d, 4096), *refused = NULL;
  cr_assert_eq(rig_buffer_create(d, 8192, RIG_MEMORY_DEVICE, &refused), RIG_ENOMEM);
  cr_assert_eq(rig_error_bytes(), 8192);
  assert_says("out of memory for 8192 bytes");
  assert_says("budget 8192 bytes");
  assert_says("4096 bytes held");
  rig_buffer_unref(held);
}
