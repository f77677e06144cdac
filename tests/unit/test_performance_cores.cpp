/* Unit tests of drivers/host/performance_cores: the count of the host's
 * performance cores, over synthetic machines and this one.
 *
 * Asserts: HOST-16 (the count is limited to the cores the process may
 * occupy: CPUs outside the mask never count), HOST-17 (the count stays the
 * same after the affinity mask changes: sched_setaffinity in the test's
 * process), HOST-18 (CPUs whose capacity is more than half the largest),
 * HOST-19 (every CPU of the mask where none reports a capacity), HOST-20
 * (at most what the cgroup v2 quotas allow, the smallest of the group and
 * its parents).
 */
#include "performance_cores.hpp"

#include <criterion/criterion.h>

#include <sched.h>

#include <map>

using rig::cgroup_cpu_limit;
using rig::count_performance_cores;

namespace {

// A capacity lookup over a table: CPUs not in it report none.
std::function<std::optional<int64_t>(int)> capacities(std::map<int, int64_t> table) {
  return [table](int cpu) -> std::optional<int64_t> {
    auto it = table.find(cpu);
    return it == table.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
}

const auto no_capacity = capacities({});

}  // namespace

Test(performance_cores, HOST_18_cpus_above_half_the_largest_capacity) {
  // Two big cores, a little core at exactly half (not more than half), one
  // just above half and one well below.
  auto hybrid = capacities({{0, 1024}, {1, 1024}, {2, 512}, {3, 513}, {4, 300}});
  cr_assert_eq(count_performance_cores({0, 1, 2, 3, 4}, hybrid, {}), 3);
  // Equal capacities are all performance cores.
  cr_assert_eq(count_performance_cores({0, 1, 2}, capacities({{0, 800}, {1, 800}, {2, 800}}), {}), 3);
}

Test(performance_cores, HOST_19_every_cpu_of_the_mask_where_none_reports_a_capacity) {
  cr_assert_eq(count_performance_cores({0, 1, 2, 3, 4, 5}, no_capacity, {}), 6);
  cr_assert_eq(count_performance_cores({3, 7}, no_capacity, {}), 2);
}

Test(performance_cores, HOST_16_only_cpus_the_process_may_occupy_count) {
  // CPUs 0..3 are fast, but the mask holds 2 and 3 alone.
  auto table = capacities({{0, 1024}, {1, 1024}, {2, 1024}, {3, 1024}});
  cr_assert_eq(count_performance_cores({2, 3}, table, {}), 2);
  // A mask of the slow cores alone: the largest is taken over the mask, so
  // every one of them counts (none is slower than half of another there).
  auto hybrid = capacities({{0, 1024}, {1, 1024}, {2, 400}, {3, 400}});
  cr_assert_eq(count_performance_cores({2, 3}, hybrid, {}), 2);
}

Test(performance_cores, HOST_20_cgroup_quota_texts) {
  cr_assert_eq(cgroup_cpu_limit("max 100000\n"), std::nullopt, "max allows any number");
  cr_assert_eq(cgroup_cpu_limit("200000 100000\n"), std::optional<int64_t>(2));
  cr_assert_eq(cgroup_cpu_limit("150000 100000\n"), std::optional<int64_t>(2), "ceil(1.5) CPUs");
  cr_assert_eq(cgroup_cpu_limit("50000 100000"), std::optional<int64_t>(1));
  cr_assert_eq(cgroup_cpu_limit(""), std::nullopt);
  cr_assert_eq(cgroup_cpu_limit("fast 100000"), std::nullopt);
  cr_assert_eq(cgroup_cpu_limit("-5 100000"), std::nullopt);
}

Test(performance_cores, HOST_20_at_most_the_smallest_quota_of_the_group_and_its_parents) {
  std::vector<int> eight{0, 1, 2, 3, 4, 5, 6, 7};
  cr_assert_eq(count_performance_cores(eight, no_capacity, {"max 100000\n"}), 8);
  cr_assert_eq(count_performance_cores(eight, no_capacity, {"300000 100000\n"}), 3);
  // The group allows 6, a parent 2 and the grandparent any number.
  cr_assert_eq(count_performance_cores(eight, no_capacity, {"600000 100000\n", "200000 100000\n", "max 100000\n"}), 2);
  // A quota above the cores found limits nothing.
  cr_assert_eq(count_performance_cores({0, 1}, no_capacity, {"1600000 100000\n"}), 2);
  // A fraction of one CPU still leaves one core, as does an empty mask.
  cr_assert_eq(count_performance_cores(eight, no_capacity, {"20000 100000\n"}), 1);
  cr_assert_eq(count_performance_cores({}, no_capacity, {}), 1);
  // The quota applies after the capacity rule.
  auto hybrid = capacities({{0, 1024}, {1, 1024}, {2, 1024}, {3, 100}});
  cr_assert_eq(count_performance_cores({0, 1, 2, 3}, hybrid, {"200000 100000"}), 2);
}

// This machine: between one and the CPUs of the mask.
Test(performance_cores, HOST_16_this_host_counts_within_its_affinity_mask) {
  cpu_set_t mask;
  cr_assert_eq(sched_getaffinity(0, sizeof mask, &mask), 0);
  int cores = rig::performance_cores();
  cr_assert_geq(cores, 1);
  cr_assert_leq(cores, CPU_COUNT(&mask));
}

// Criterion runs each test in a process of its own, so this one asks first.
Test(performance_cores, HOST_17_the_count_is_taken_once_and_kept_after_the_mask_changes) {
  cpu_set_t wide;
  cr_assert_eq(sched_getaffinity(0, sizeof wide, &wide), 0);
  if (CPU_COUNT(&wide) < 2) cr_skip_test("one CPU in the mask: a narrower mask cannot show a change");
  int first_cpu = 0;
  while (!CPU_ISSET(first_cpu, &wide)) first_cpu++;
  cpu_set_t narrow;
  CPU_ZERO(&narrow);
  CPU_SET(first_cpu, &narrow);
  cr_assert_eq(sched_setaffinity(0, sizeof narrow, &narrow), 0);
  cr_assert_eq(rig::performance_cores(), 1, "taken with a mask of one CPU");
  cr_assert_eq(sched_setaffinity(0, sizeof wide, &wide), 0);
  cr_assert_eq(rig::performance_cores(), 1, "the wider mask changes nothing");
}
