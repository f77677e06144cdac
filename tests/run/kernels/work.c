/* The run suite's kernels: host functions
 * void f(const void *params, int64_t first, int64_t end) that run threads
 * first to end - 1.  The types come from the compiler's predefined macros,
 * as a none-elf target has no C library headers (tests/link/kernels/add.c). */
typedef __INT64_TYPE__ int64_t;

/* Writes value into out[i] for each thread i.  Params: out (write) at 0,
 * value at 8; 16 bytes. */
struct set {
  int64_t *out;
  int64_t value;
};
void set(const struct set *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) p->out[i] = p->value;
}

/* Copies in[i] into out[i] for each thread i.  Params: in (read) at 0, out
 * (write) at 8; 16 bytes. */
struct copy {
  const int64_t *in;
  int64_t *out;
};
void copy(const struct copy *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) p->out[i] = p->in[i];
}

/* Writes the addresses its refs hold: out[0] out's own, out[1] a's and
 * out[2] b's.  Run as one thread.  Params: out (write) at 0, a at 8, b at
 * 16; 24 bytes. */
struct addresses {
  int64_t *out;
  const void *a, *b;
};
void addresses(const struct addresses *p, int64_t first, int64_t end) {
  (void)first, (void)end;
  p->out[0] = (int64_t)p->out;
  p->out[1] = (int64_t)p->a;
  p->out[2] = (int64_t)p->b;
}

/* Records each call: calls[k] holds its first, its end and an address on
 * the stack of the thread that ran it, k counted by *count.  Writes
 * threads[i] = i for each thread i it runs.  running[0] counts the calls
 * under way and running[1] the most under way at once.  Params: count at
 * 0, calls at 8, threads at 16, running at 24 (all read-write); 32
 * bytes. */
struct call {
  int64_t first, end, stack;
};
struct ranges {
  int64_t *count;
  struct call *calls;
  int64_t *threads;
  int64_t *running;
};
void ranges(const struct ranges *p, int64_t first, int64_t end) {
  volatile int64_t on_stack = 0;
  int64_t now = __atomic_add_fetch(&p->running[0], 1, __ATOMIC_SEQ_CST);
  int64_t most = __atomic_load_n(&p->running[1], __ATOMIC_SEQ_CST);
  while (now > most &&
         !__atomic_compare_exchange_n(&p->running[1], &most, now, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  int64_t k = __atomic_fetch_add(p->count, 1, __ATOMIC_SEQ_CST);
  p->calls[k].first = first;
  p->calls[k].end = end;
  p->calls[k].stack = (int64_t)&on_stack;
  for (int64_t i = first; i < end; i++) p->threads[i] = i;
  __atomic_sub_fetch(&p->running[0], 1, __ATOMIC_SEQ_CST);
}
