/* For arm64: loads of each size from .rodata at addresses the linker
 * writes (ADRP with LDST8..LDST128, ADRP with ADD), a call (CALL26) and a
 * tail call (JUMP26) to functions of the process. */
typedef __INT64_TYPE__ int64_t;
typedef float v4 __attribute__((vector_size(16)));
static const volatile unsigned char b8 = 0x5a;
static const volatile unsigned short h16 = 0x1234;
static const volatile unsigned int w32 = 0xdeadbeefu;
static const volatile unsigned long long d64 = 0x0123456789abcdefull;
static const volatile v4 q128 = {1.0f, 2.0f, 3.0f, 4.0f};
static const float table[64] = {1.5f, 2.5f, 3.5f};
float far_function(float);
float tail_function(float);
struct loads { unsigned long long *out; float *f; v4 *v; int64_t i; };
void loads(const struct loads *p, int64_t first, int64_t end) {
  (void)first; (void)end;
  p->out[0] = b8;
  p->out[1] = h16;
  p->out[2] = w32;
  p->out[3] = d64;
  *p->v = q128;
  p->f[0] = table[p->i & 63];
  p->f[1] = far_function(p->f[2]);
}
float tail(float x) { return tail_function(x * 2.0f); }
