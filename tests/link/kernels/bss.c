/* A zero-initialised variable in .bss, which the linker refuses. */
typedef __INT64_TYPE__ int64_t;
static int64_t counter;
void bss(int64_t *out, int64_t first, int64_t end) { counter += end - first; out[0] = counter; }
