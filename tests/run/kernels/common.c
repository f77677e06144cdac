/* A common symbol: compiled with -fcommon, tally is SHN_COMMON, defined
 * outside the image, which the linker refuses (LINK-15).  Hidden
 * visibility makes clang address it directly (R_X86_64_PC32, or ADRP on
 * arm64) rather than through the GOT, so the common symbol is the only
 * reason to refuse the object. */
typedef __INT64_TYPE__ int64_t;
__attribute__((visibility("hidden"))) int64_t tally;
void common(int64_t *out, int64_t first, int64_t end) {
  (void)first, (void)end;
  out[0] = tally;
}
