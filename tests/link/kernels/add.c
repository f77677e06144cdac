/* The spec's add example (rig.txt, Objects).  The spec writes
 * #include <stdint.h>; clang for a none-elf target reads the system's
 * hosted stdint.h, which needs the C library's headers of that target, so
 * the types come from the compiler's predefined macros instead. */
typedef __INT64_TYPE__ int64_t;
struct add { const float *x, *y; float *z; int64_t n; };
void add(const struct add *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end && i < p->n; i++)
    p->z[i] = p->x[i] + p->y[i];
}
