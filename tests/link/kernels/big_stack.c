/* A stack frame of 1 MiB, which code for no system touches without
 * probing it a page at a time. */
typedef __INT64_TYPE__ int64_t;
struct big_stack { int64_t *out; int64_t seed; };
void big_stack(const struct big_stack *p, int64_t first, int64_t end) {
  volatile unsigned char frame[1 << 20];
  for (int64_t i = 0; i < (int64_t)sizeof frame; i += 4096) frame[i] = (unsigned char)(p->seed + i / 4096);
  int64_t sum = 0;
  for (int64_t i = 0; i < (int64_t)sizeof frame; i += 4096) sum += frame[i];
  p->out[0] = sum + (end - first);
}
