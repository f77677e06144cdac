// Byte blocks kept for reuse (net/spare_bytes.hpp): a block given back is
// the one a later take of a size it holds gets, at that size (zeros past
// its former one), the smallest that fits;
// blocks under kLeast, past the byte bound or past the count are not kept
// (the smallest spare goes first); a take under kLeast makes its own.
#include <criterion/criterion.h>

#include "spare_bytes.hpp"

using rig::net::SpareBytes;

namespace {

constexpr size_t kMiB = size_t{1} << 20;

std::vector<uint8_t> block_of(size_t bytes) {
  std::vector<uint8_t> block(bytes, 7);
  return block;
}

}  // namespace

Test(spare_bytes, a_block_given_back_is_taken_again_at_the_size_asked) {
  SpareBytes spares(2, 64 * kMiB);
  std::vector<uint8_t> block = block_of(4 * kMiB);
  const uint8_t *where = block.data();
  spares.give(std::move(block));
  cr_assert_eq(spares.blocks(), 1);
  std::vector<uint8_t> again = spares.take(3 * kMiB);
  cr_expect_eq(again.data(), where, "a new block, not the spare");
  cr_expect(again.size() == 3 * kMiB && again.capacity() >= 4 * kMiB);
  // Past its former size, zeros.
  spares.give(std::move(again));
  std::vector<uint8_t> grown = spares.take(4 * kMiB);
  cr_expect_eq(grown.data(), where);
  cr_expect(grown[3 * kMiB - 1] == 7 && grown[3 * kMiB] == 0 && grown.back() == 0);
  cr_expect_eq(spares.blocks(), 0);
}

Test(spare_bytes, take_gets_the_smallest_spare_that_fits) {
  SpareBytes spares(3, 64 * kMiB);
  std::vector<uint8_t> big = block_of(8 * kMiB), middle = block_of(4 * kMiB), small = block_of(2 * kMiB);
  const uint8_t *middle_at = middle.data();
  spares.give(std::move(big));
  spares.give(std::move(small));
  spares.give(std::move(middle));
  cr_expect_eq(spares.take(3 * kMiB).data(), middle_at);
  cr_expect_eq(spares.blocks(), 2);
  // None fits: a new block, the spares kept.
  std::vector<uint8_t> fresh = spares.take(9 * kMiB);
  cr_expect(fresh.capacity() >= 9 * kMiB);
  cr_expect_eq(spares.blocks(), 2);
}

Test(spare_bytes, small_blocks_and_small_takes_stay_off_the_spares) {
  SpareBytes spares(2, 64 * kMiB);
  spares.give(block_of(SpareBytes::kLeast - 1));
  cr_expect_eq(spares.blocks(), 0, "a block under kLeast was kept");
  std::vector<uint8_t> block = block_of(2 * kMiB);
  const uint8_t *where = block.data();
  spares.give(std::move(block));
  std::vector<uint8_t> small = spares.take(4096);
  cr_expect_neq(small.data(), where, "a take of 4096 bytes used the 2 MiB spare");
  cr_expect_eq(spares.blocks(), 1);
}

Test(spare_bytes, bounds_let_the_smallest_go_and_refuse_a_block_past_them) {
  SpareBytes spares(2, 16 * kMiB);
  spares.give(block_of(32 * kMiB));
  cr_expect_eq(spares.blocks(), 0, "a block past the byte bound was kept");
  std::vector<uint8_t> a = block_of(2 * kMiB), b = block_of(4 * kMiB), c = block_of(8 * kMiB);
  const uint8_t *b_at = b.data(), *c_at = c.data();
  spares.give(std::move(a));
  spares.give(std::move(b));
  spares.give(std::move(c));  // the count's bound: the 2 MiB spare goes
  cr_assert_eq(spares.blocks(), 2);
  cr_expect_eq(spares.take(3 * kMiB).data(), b_at);
  cr_expect_eq(spares.take(5 * kMiB).data(), c_at);
  // 8 and 6 MiB fit 16; 4 MiB, smaller than both, is not kept; 7 MiB
  // lets the 6 go (8 + 7 fit 16).
  spares.give(block_of(8 * kMiB));
  spares.give(block_of(6 * kMiB));
  cr_expect_eq(spares.blocks(), 2);
  spares.give(block_of(4 * kMiB));
  cr_expect_eq(spares.blocks(), 2);
  std::vector<uint8_t> seven = block_of(7 * kMiB);
  const uint8_t *seven_at = seven.data();
  spares.give(std::move(seven));
  cr_expect_eq(spares.blocks(), 2);
  cr_expect_eq(spares.take(6 * kMiB).data(), seven_at, "the 6 MiB spare stayed");
}
