/* Calls a function that no process defines. */
typedef __INT64_TYPE__ int64_t;
int64_t no_such_symbol_xyz(int64_t);
void undefined(int64_t *out, int64_t first, int64_t end) { out[0] = no_such_symbol_xyz(end - first); }
