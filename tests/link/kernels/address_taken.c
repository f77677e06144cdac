/* Takes the address of a function of the process: clang -fPIC reads it
 * from the GOT (R_X86_64_REX_GOTPCRELX, R_AARCH64_ADR_GOT_PAGE), which the
 * spec's relocations do not include. */
typedef __INT64_TYPE__ int64_t;
float sinf(float);
void address_taken(float (**out)(float), int64_t first, int64_t end) { (void)first; (void)end; out[0] = sinf; }
