/* A function of another image, which a launch calls through the address
 * an entry ref places in its parameters (LINK-37). */
typedef __INT64_TYPE__ int64_t;
int64_t triple_plus_one(int64_t x) { return 3 * x + 1; }
