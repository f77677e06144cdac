/* rig_buffer_fresh: whether an allocation took memory new from its driver
 * that reads zero, which rigd then leaves unfilled, or memory from rig's
 * cache (RECL-07: create reuses cached memory), which holds what its
 * earlier users wrote and rigd zeroes.  On a memory device of this file's
 * own (MEM:30) and on the host. */
#include <criterion/criterion.h>
#include <rig/rig.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

#define MIB ((int64_t)1 << 20)

static rig_buffer_t *create(rig_device_t *d, int64_t n) {
  rig_buffer_t *b = NULL;
  CHECK_OK(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &b), "%lld bytes on %s", (long long)n, rig_device_name(d));
  return b;
}

static rig_device_t *memory_device(void) {
  rig_device_t *d = NULL;
  CHECK_OK(rig_memory_device("MEM:30", &d));
  CHECK_OK(rig_free_cache(d));
  return d;
}

/* Memory new from the system reads zero, and its views and borrows say so
 * too; the bytes are zero, as the answer promises. */
Test(fresh, new_pages_from_the_system_are_fresh_and_read_zero) {
  rig_device_t *mem = memory_device();
  rig_buffer_t *b = create(mem, 8 * MIB);
  cr_assert(rig_buffer_fresh(b), "8 MiB new on MEM:30 came from the system");
  const uint8_t *bytes = rig_buffer_host(b);
  for (int64_t i = 0; i < 8 * MIB; i += 4096) cr_assert(bytes[i] == 0, "byte %lld of fresh memory is %u", (long long)i, bytes[i]);
  rig_buffer_t *view = NULL, *borrow = NULL;
  CHECK_OK(rig_buffer_view(b, 4096, 4096, &view));
  CHECK_OK(rig_buffer_borrow(rig_host(), b, &borrow));
  cr_expect(rig_buffer_fresh(view) && borrow && rig_buffer_fresh(borrow), "a view and a borrow answer as the allocation");
  rig_buffer_unref(view);
  rig_buffer_unref(borrow);
  rig_buffer_unref(b);
  rig_buffer_t *host = create(rig_host(), 8 * MIB);
  cr_expect(rig_buffer_fresh(host), "8 MiB new on the host came from the system");
  rig_buffer_unref(host);
}

/* RECL-07: memory an earlier buffer wrote and released comes back from the
 * cache, not fresh; once free_cache returned it to the driver (RECL-09),
 * the next allocation is fresh again. */
Test(fresh, memory_from_the_cache_is_not_fresh) {
  rig_device_t *mem = memory_device();
  rig_buffer_t *b = create(mem, 8 * MIB);
  CHECK_OK(rig_buffer_fill(b, 0xAB));
  rig_buffer_unref(b);
  int64_t held = rig_allocated(mem);
  rig_buffer_t *again = create(mem, 8 * MIB);
  cr_assert(rig_allocated(mem) == held, "the second 8 MiB reused the cached allocation (%lld bytes held, then %lld)",
            (long long)held, (long long)rig_allocated(mem));
  cr_expect(!rig_buffer_fresh(again), "memory from the cache is not fresh");
  cr_expect(((const uint8_t *)rig_buffer_host(again))[0] == 0xAB, "the cached memory holds what its first user wrote");
  rig_buffer_unref(again);
  CHECK_OK(rig_free_cache(mem));
  rig_buffer_t *fresh = create(mem, 8 * MIB);
  cr_expect(rig_buffer_fresh(fresh), "after free_cache the memory comes from the system again");
  rig_buffer_unref(fresh);
}

/* Memory the driver cannot vouch for: small blocks of the C library, which
 * reuses what was freed; the caller's bytes; NULL. */
Test(fresh, memory_no_driver_vouches_for_is_not_fresh) {
  rig_device_t *mem = memory_device();
  rig_buffer_t *small = create(mem, 1024);
  cr_expect(!rig_buffer_fresh(small), "1 KiB of the C library's memory is not fresh");
  rig_buffer_unref(small);
  static const char text[] = "the caller's bytes";
  rig_buffer_t *copied = NULL;
  CHECK_OK(rig_buffer_of_bytes(text, sizeof text, &copied));
  cr_expect(!rig_buffer_fresh(copied), "a copy of the caller's bytes is not fresh memory");
  rig_buffer_unref(copied);
  cr_expect(!rig_buffer_fresh(NULL), "NULL is no fresh memory");
}
