/* Reads a constant the object does not define.  Hidden visibility makes
 * clang address it directly (R_X86_64_PC32, or ADRP and LDR on arm64),
 * so the process's definition must lie within the field's reach. */
typedef __INT64_TYPE__ int64_t;
extern const int64_t outside_constant __attribute__((visibility("hidden")));
void hidden_data(int64_t *out, int64_t first, int64_t end) { out[0] = outside_constant + (end - first); }
