/* Defines sinf, which the process defines too: the object's own wins.
 * cosf it leaves to the process. */
typedef __INT64_TYPE__ int64_t;
float cosf(float);
__attribute__((noinline)) float sinf(float x) { return x + 1000.0f; }
struct own { const float *in; float *out; };
void own(const struct own *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) {
    p->out[2 * i] = sinf(p->in[i]);
    p->out[2 * i + 1] = cosf(p->in[i]);
  }
}
