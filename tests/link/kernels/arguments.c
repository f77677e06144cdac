/* Records what the host passes (params, first, end), and calls a function
 * of another image through the address the parameters hold. */
typedef __INT64_TYPE__ int64_t;
struct arguments { int64_t *seen; int64_t (*other)(int64_t); int64_t x; };
void arguments(const struct arguments *p, int64_t first, int64_t end) {
  p->seen[0] = (int64_t)p;
  p->seen[1] = first;
  p->seen[2] = end;
  p->seen[3] = p->other(p->x);
}
