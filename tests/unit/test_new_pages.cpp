/* Unit tests of lib/new_pages: a large write into memory new from the
 * system faults its pages in with one call first
 * (rig_internal/new_pages.hpp).  No spec rule: it is a hint that moves no
 * byte, so each test reads which pages are resident (mincore) after the
 * call alone, before anything writes them. */
#include "rig_internal/new_pages.hpp"

#include <criterion/criterion.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
constexpr int64_t kMiB = int64_t{1} << 20;

// Fresh anonymous pages, none resident; unmapped at the end of the test.
struct Fresh {
  explicit Fresh(size_t n) : bytes(n) {
    void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(p != MAP_FAILED, "mmap of %zu bytes failed", n);
    at = static_cast<char *>(p);
  }
  ~Fresh() { munmap(at, bytes); }
  // Which of its pages are resident, one entry per page.
  std::vector<bool> resident() const {
    std::vector<unsigned char> v(bytes / kPage);
    cr_assert(mincore(at, bytes, v.data()) == 0, "mincore failed");
    std::vector<bool> out(v.size());
    for (size_t i = 0; i < v.size(); i++) out[i] = (v[i] & 1) != 0;
    return out;
  }
  char *at;
  size_t bytes;
};

// Skips where the kernel has no MADV_POPULATE_WRITE (before Linux 5.14),
// where the call leaves every fault to the writes.
void require_populate() {
  Fresh probe(kPage);
  if (madvise(probe.at, kPage, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
    cr_skip_test("this kernel has no MADV_POPULATE_WRITE");
}

}  // namespace

Test(new_pages, a_large_range_of_new_pages_is_resident_after_the_call) {
  require_populate();
  Fresh f(size_t{4} * kMiB);
  for (bool r : f.resident()) cr_assert(!r, "a fresh page is resident before the call");
  rig::populate_new_pages(f.at, 4 * kMiB);
  const std::vector<bool> after = f.resident();
  for (size_t i = 0; i < after.size(); i++) cr_assert(after[i], "page %zu of 4 MiB is not resident", i);
}

Test(new_pages, only_the_whole_pages_inside_the_range_are_populated) {
  require_populate();
  Fresh f(size_t{4} * kMiB);
  // From byte 100 of the first page to 100 bytes before the last page's end.
  rig::populate_new_pages(f.at + 100, static_cast<int64_t>(f.bytes) - 200);
  const std::vector<bool> after = f.resident();
  cr_assert(!after.front(), "the partial first page was populated");
  cr_assert(!after.back(), "the partial last page was populated");
  for (size_t i = 1; i + 1 < after.size(); i++) cr_assert(after[i], "whole page %zu is not resident", i);
}

Test(new_pages, a_range_under_1_MiB_is_left_to_its_writes) {
  require_populate();
  Fresh f(size_t{1} * kMiB);
  rig::populate_new_pages(f.at, kMiB - 1);
  for (bool r : f.resident()) cr_assert(!r, "a range under 1 MiB was populated");
}

Test(new_pages, a_range_whose_first_page_is_resident_is_left_as_it_is) {
  // Memory a copy reuses: populating it again would cost the page walk.
  require_populate();
  Fresh f(size_t{2} * kMiB);
  f.at[0] = 1;
  rig::populate_new_pages(f.at, 2 * kMiB);
  const std::vector<bool> after = f.resident();
  cr_assert(after[0]);
  for (size_t i = 1; i < after.size(); i++) cr_assert(!after[i], "page %zu was populated", i);
}

Test(new_pages, read_only_pages_are_left_alone_without_a_fault) {
  // A hint: a mapping that takes no population answers nothing.
  require_populate();
  Fresh f(size_t{2} * kMiB);
  cr_assert(mprotect(f.at, f.bytes, PROT_READ) == 0);
  rig::populate_new_pages(f.at, 2 * kMiB);
  for (bool r : f.resident()) cr_assert(!r, "a read-only page was populated");
}
