/* Copy bandwidth through rig beside memcpy, in the same run:
 *   copy_h2m  rig_buffer_copy from a host buffer into a MEM:0 buffer;
 *   copy_m2m  rig_buffer_copy from a MEM:0 buffer into a MEM:1 buffer;
 *   memcpy    between two plain malloc'd, pre-faulted buffers.
 * For each size it prints `copy_h2m SIZE: V GB/s` (likewise copy_m2m and
 * memcpy) and `ratio copy_h2m SIZE: X`, X the rig bandwidth over memcpy's.
 * Sizes run from 4K to 256M, or to 1G with `--max 1G`. */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <string.h>

/* Measurements of each figure per size; the best one counts. */
#define ROUNDS 5

struct rig_copy {
  rig_buffer_t *src;
  rig_buffer_t *dst;
};

static void run_rig_copy(void *context, long reps) {
  struct rig_copy *c = context;
  for (long i = 0; i < reps; i++) BENCH_CHECK(rig_buffer_copy(c->src, c->dst));
}

struct plain_copy {
  const unsigned char *src;
  unsigned char *dst;
  size_t n;
};

static void run_memcpy(void *context, long reps) {
  struct plain_copy *c = context;
  for (long i = 0; i < reps; i++) {
    memcpy(c->dst, c->src, c->n);
    /* The compiler may not drop a copy nobody reads. */
    __asm__ volatile("" : : "r"(c->dst) : "memory");
  }
}

/* "4K", "256M", "1G". */
static const char *size_label(int64_t n, char *out, size_t out_size) {
  const char *units = "KMG";
  int unit = -1;
  while (unit < 2 && n >= 1024 && n % 1024 == 0) {
    n /= 1024;
    unit++;
  }
  if (unit < 0)
    snprintf(out, out_size, "%lld", (long long)n);
  else
    snprintf(out, out_size, "%lld%c", (long long)n, units[unit]);
  return out;
}


static rig_device_t *open_device(const char *name) {
  rig_device_t *d = NULL;
  BENCH_CHECK(rig_open(name, NULL, &d));
  return d;
}

static rig_buffer_t *create(rig_device_t *d, int64_t n) {
  rig_buffer_t *b = NULL;
  BENCH_CHECK(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &b));
  return b;
}

static void *malloc_touched(size_t n, int byte) {
  void *p = malloc(n);
  if (!p) bench_fail("malloc failed");
  memset(p, byte, n); /* pre-fault */
  return p;
}

/* Checks through a host read that b holds the n bytes at expected, so a
 * copy that moved nothing cannot pass for a fast one. */
struct expectation {
  const void *bytes;
  int64_t n;
};

static int compare_bytes(void *bytes, int64_t n, void *context) {
  const struct expectation *e = context;
  return n != e->n || memcmp(bytes, e->bytes, (size_t)n) != 0;
}

static void check_holds(rig_buffer_t *b, const void *expected, int64_t n, const char *what) {
  struct expectation e = {expected, n};
  rig_status_t s = rig_buffer_read(b, 1, compare_bytes, &e);
  if (s == RIG_ECALLBACK) {
    fprintf(stderr, "%s: the destination does not hold the source's bytes\n", what);
    exit(1);
  }
  BENCH_CHECK(s);
}

static double gbps(int64_t n, double ns) { return (double)n / ns; }

static void bench_size(rig_device_t *mem0, rig_device_t *mem1, int64_t n) {
  char label[32];
  size_label(n, label, sizeof label);

  /* The host buffer's bytes are the reference every copy must carry. */
  unsigned char *pattern = malloc_touched((size_t)n, 0);
  for (int64_t i = 0; i < n; i++) pattern[i] = (unsigned char)(i * 7 + 3);
  unsigned char *plain_dst = malloc_touched((size_t)n, 1);

  rig_buffer_t *host = create(rig_host(), n);
  rig_buffer_t *on_mem0 = create(mem0, n);
  rig_buffer_t *on_mem1 = create(mem1, n);
  BENCH_CHECK(rig_buffer_blit_from_bytes(pattern, n, 0, host, 0, n));
  BENCH_CHECK(rig_buffer_fill(on_mem0, 0)); /* pre-fault the destinations */
  BENCH_CHECK(rig_buffer_fill(on_mem1, 0));

  struct plain_copy plain = {pattern, plain_dst, (size_t)n};
  struct rig_copy h2m = {host, on_mem0};
  struct rig_copy m2m = {on_mem0, on_mem1};
  bench_timer baseline = bench_timer_make(run_memcpy, &plain);
  bench_timer t_h2m = bench_timer_make(run_rig_copy, &h2m);
  bench_timer t_m2m = bench_timer_make(run_rig_copy, &m2m);
  /* Interleaved, so a drift of the shared machine hits all three alike. */
  for (int r = 0; r < ROUNDS; r++) {
    bench_round(&baseline);
    bench_round(&t_h2m);
    bench_round(&t_m2m);
  }
  check_holds(on_mem0, pattern, n, "copy_h2m");
  check_holds(on_mem1, pattern, n, "copy_m2m");

  double base = gbps(n, baseline.best_ns);
  double h2m_bw = gbps(n, t_h2m.best_ns);
  double m2m_bw = gbps(n, t_m2m.best_ns);
  printf("memcpy %s: %.2f GB/s\n", label, base);
  printf("copy_h2m %s: %.2f GB/s\n", label, h2m_bw);
  printf("copy_m2m %s: %.2f GB/s\n", label, m2m_bw);
  printf("ratio copy_h2m %s: %.3f\n", label, h2m_bw / base);
  printf("ratio copy_m2m %s: %.3f\n", label, m2m_bw / base);
  fflush(stdout);

  rig_buffer_unref(host);
  rig_buffer_unref(on_mem0);
  rig_buffer_unref(on_mem1);
  /* Give the memory back before the next, larger size. */
  BENCH_CHECK(rig_free_cache(mem0));
  BENCH_CHECK(rig_free_cache(mem1));
  BENCH_CHECK(rig_free_cache(rig_host()));
  free(pattern);
  free(plain_dst);
}

int main(int argc, char **argv) {
  int64_t max = (int64_t)256 << 20;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--max") == 0 && i + 1 < argc) {
      max = bench_parse_size(argv[++i]);
      if (max < 0 || max > ((int64_t)1 << 30)) {
        fprintf(stderr, "--max takes a size up to 1G, such as 64M or 1G\n");
        return 2;
      }
    } else {
      fprintf(stderr, "usage: %s [--max SIZE]   (SIZE up to 1G; default 256M)\n", argv[0]);
      return 2;
    }
  }

  rig_device_t *mem0 = open_device("MEM:0");
  rig_device_t *mem1 = open_device("MEM:1");
  /* 4 KiB to 1 GiB by factors of 4. */
  for (int64_t n = 4096; n <= max; n *= 4) bench_size(mem0, mem1, n);
  return 0;
}
