/* The spec's add (tests/link/kernels/add.c) in an object past rigd's
 * payload arena (1 MiB): a table of 1.5 MiB rides along, so that the image
 * travels to rigd as a sealed memfd.  Types from the compiler's macros, as
 * a none-elf target has no C library headers. */
typedef __INT64_TYPE__ int64_t;
const char big_add_table[3 << 19] = {1};
struct add { const float *x, *y; float *z; int64_t n; };
void add(const struct add *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end && i < p->n; i++)
    p->z[i] = p->x[i] + p->y[i] + (float)(big_add_table[0] - 1);
}
