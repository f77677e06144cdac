/* Calls into the process: sinf and memcpy by name, memcpy again for a
 * struct copy the source does not name as a call, and a tail call. */
typedef __INT64_TYPE__ int64_t;
typedef __SIZE_TYPE__ size_t;
void *memcpy(void *, const void *, size_t);
float sinf(float);
float cosf(float);
struct block { char bytes[256]; };
struct calls {
  const float *in; float *out;
  char *dst; const char *src; int64_t copy_bytes;
  struct block *block_dst; const struct block *block_src;
};
static const float scale[8] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f};
void calls(const struct calls *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) p->out[i] = sinf(p->in[i]) * scale[i & 7];
  memcpy(p->dst, p->src, (size_t)p->copy_bytes);
  *p->block_dst = *p->block_src;
}
float tail_cos(float x) { return cosf(x * 0.5f); }
