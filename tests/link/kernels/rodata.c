/* Read-only data: a table of constants and a switch the compiler makes a
 * jump table of, in .rodata, whose entries are relocated against .text. */
typedef __INT64_TYPE__ int64_t;
struct rodata { const int64_t *in; int64_t *out; };
static const int64_t primes[16] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
static int64_t pick(int64_t x, int64_t y) {
  switch (x & 7) {
    case 0: return y * 3;
    case 1: return y + 7;
    case 2: return y ^ 5;
    case 3: return y - 11;
    case 4: return y * y;
    case 5: return 99;
    case 6: return y << 3;
    default: return -y;
  }
}
void rodata(const struct rodata *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) p->out[i] = pick(p->in[i], primes[p->in[i] & 15]);
}
