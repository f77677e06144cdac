/* Unit tests of drivers/host/host_pool: the host's launches on the calling
 * thread and the pool's workers, linked without the core.
 *
 * Asserts: HOST-05 (a launch runs on its caller and on the workers),
 * HOST-06 (every call has returned, its writes visible, when host_launch
 * returns), HOST-10 (each call runs whole groups), HOST-11 (the calls
 * partition the launch's threads), HOST-12 (never more threads at once than
 * performance cores), and the pool's own promises: a launch of one group
 * is one call on the caller, launches inside a kernel and from several
 * threads at once complete, workers block signals, and the child of a
 * fork launches on workers of its own.
 */
#include "host_pool.hpp"

#include <criterion/criterion.h>

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Call {
  int64_t first, end;
  std::thread::id thread;
};

// What a launch's calls saw.
struct Record {
  std::mutex mu;
  std::vector<Call> calls;
  std::atomic<int> active{0}, most_active{0};
};

void record(const void *params, int64_t first, int64_t end) {
  auto *r = static_cast<Record *>(const_cast<void *>(params));
  std::lock_guard<std::mutex> g(r->mu);
  r->calls.push_back({first, end, std::this_thread::get_id()});
}

// Why calls did not run whole groups of t threads (HOST-10) and together
// each of the groups * t threads once (HOST-11); empty if they did.
std::string partition_error(std::vector<Call> calls, uint64_t groups, uint64_t t) {
  std::sort(calls.begin(), calls.end(), [](const Call &a, const Call &b) { return a.first < b.first; });
  int64_t next = 0, group = static_cast<int64_t>(t);
  for (const Call &c : calls) {
    if (c.first != next) return "a call starts at " + std::to_string(c.first) + " where " + std::to_string(next) + " was due";
    if (c.end <= c.first) return "a call of no threads at " + std::to_string(c.first);
    if (c.first % group || c.end % group)
      return "the call [" + std::to_string(c.first) + ", " + std::to_string(c.end) + ") is not of whole groups";
    next = c.end;
  }
  if (next != static_cast<int64_t>(groups * t)) return "the calls end at " + std::to_string(next);
  return "";
}

void assert_partition(const std::vector<Call> &calls, uint64_t groups, uint64_t t) {
  std::string why = partition_error(calls, groups, t);
  cr_assert(why.empty(), "%llu groups of %llu threads: %s", (unsigned long long)groups, (unsigned long long)t,
            why.c_str());
}

}  // namespace

Test(host_pool, HOST_05_a_launch_of_one_group_is_one_call_on_the_caller) {
  Record r;
  rig::host_launch(record, &r, 1, 5);
  cr_assert_eq(r.calls.size(), 1u);
  cr_assert_eq(r.calls[0].first, 0);
  cr_assert_eq(r.calls[0].end, 5);
  cr_assert(r.calls[0].thread == std::this_thread::get_id());
}

Test(host_pool, HOST_10_HOST_11_calls_of_whole_groups_partition_the_threads) {
  for (uint64_t groups : {1, 2, 3, 7, 64, 1000, 4097})
    for (uint64_t t : {1, 3, 64}) {
      Record r;
      rig::host_launch(record, &r, groups, t);
      assert_partition(r.calls, groups, t);
    }
}

// Each call writes its threads' slots: all are written once host_launch
// returns (HOST-06), each by exactly one call (HOST-11).
void count_threads(const void *params, int64_t first, int64_t end) {
  auto *counts = static_cast<int *>(const_cast<void *>(params));
  for (int64_t i = first; i < end; i++) counts[i]++;
}

Test(host_pool, HOST_06_HOST_11_every_thread_ran_once_when_the_launch_returns) {
  std::vector<int> counts(100 * 7, 0);
  rig::host_launch(count_threads, counts.data(), 100, 7);
  for (size_t i = 0; i < counts.size(); i++) cr_assert_eq(counts[i], 1, "thread %zu ran %d times", i, counts[i]);
}

// Calls that overlap: each stays a while, so that the pool's threads are
// all inside calls at once.
void crowd(const void *params, int64_t first, int64_t end) {
  auto *r = static_cast<Record *>(const_cast<void *>(params));
  int now = ++r->active;
  for (int most = r->most_active.load(); now > most && !r->most_active.compare_exchange_weak(most, now);) {
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  --r->active;
  record(params, first, end);
}

Test(host_pool, HOST_12_never_more_threads_at_once_than_performance_cores) {
  Record r;
  rig::host_launch(crowd, &r, 256, 1);
  assert_partition(r.calls, 256, 1);
  std::set<std::thread::id> threads;
  for (const Call &c : r.calls) threads.insert(c.thread);
  cr_assert_leq(r.most_active.load(), rig::performance_cores());
  cr_assert_leq(static_cast<int>(threads.size()), rig::performance_cores());
}

// The caller's calls wait until another thread runs a call, for at most
// 10 s in all: with more than one performance core the workers take part,
// and a launch no worker joins ends, its calls all on the caller.
struct Meeting {
  Record record;
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> other_came{false};
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
};

void meet(const void *params, int64_t first, int64_t end) {
  auto *m = static_cast<Meeting *>(const_cast<void *>(params));
  if (std::this_thread::get_id() != m->caller) {
    m->other_came = true;
  } else {
    while (!m->other_came && Clock::now() < m->deadline) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  record(&m->record, first, end);
}

bool ran_on(const Meeting &m, bool caller) {
  for (const Call &c : m.record.calls)
    if ((c.thread == m.caller) == caller) return true;
  return false;
}

Test(host_pool, HOST_05_a_launch_runs_on_its_caller_and_the_workers) {
  if (rig::performance_cores() < 2) cr_skip_test("one performance core: no worker takes part");
  Meeting m;
  rig::host_launch(meet, &m, 64, 2);
  assert_partition(m.record.calls, 64, 2);
  cr_assert(ran_on(m, true), "no call ran on the calling thread");
  cr_assert(ran_on(m, false), "no call ran on a worker");
}

// A kernel that launches: each call runs an inner launch and counts the
// inner threads that did not run exactly once (asserted on the test's
// thread: Criterion's asserts belong there).
std::atomic<int> inner_launches{0}, inner_wrong{0};

void launch_inside(const void *, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) {
    std::vector<int> counts(33 * 3, 0);
    rig::host_launch(count_threads, counts.data(), 33, 3);
    for (int c : counts) inner_wrong += c != 1;
    inner_launches++;
  }
}

Test(host_pool, a_launch_inside_a_kernel_completes, .timeout = 60) {
  rig::host_launch(launch_inside, nullptr, 40, 1);
  cr_assert_eq(inner_launches.load(), 40);
  cr_assert_eq(inner_wrong.load(), 0);
}

Test(host_pool, launches_from_several_threads_at_once_complete, .timeout = 60) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&] {
      for (int i = 0; i < 100; i++) {
        std::vector<int> counts(50 * 4, 0);
        rig::host_launch(count_threads, counts.data(), 50, 4);
        for (int c : counts) wrong += c != 1;
      }
    });
  for (auto &t : threads) t.join();
  cr_assert_eq(wrong.load(), 0);
}

// Where each call ran with SIGINT and SIGTERM blocked.
struct Masks {
  Record record;
  std::mutex mu;
  std::vector<std::pair<std::thread::id, bool>> blocked;
};

void note_mask(const void *params, int64_t first, int64_t end) {
  auto *m = static_cast<Masks *>(const_cast<void *>(params));
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, nullptr, &now);
  {
    std::lock_guard<std::mutex> g(m->mu);
    m->blocked.emplace_back(std::this_thread::get_id(), sigismember(&now, SIGINT) && sigismember(&now, SIGTERM) &&
                                                            !sigismember(&now, SIGSEGV));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  record(&m->record, first, end);
}

Test(host_pool, workers_block_signals_and_the_caller_keeps_its_mask) {
  sigset_t before, after;
  pthread_sigmask(SIG_BLOCK, nullptr, &before);
  cr_assert_not(sigismember(&before, SIGINT), "the test starts with SIGINT unblocked");
  Masks m;
  rig::host_launch(note_mask, &m, 64, 1);
  pthread_sigmask(SIG_BLOCK, nullptr, &after);
  cr_assert_not(sigismember(&after, SIGINT), "the launch changed its caller's mask");
  for (const auto &[thread, blocked] : m.blocked) {
    if (thread == std::this_thread::get_id())
      cr_assert_not(blocked, "the caller's calls run with its own mask");
    else
      cr_assert(blocked, "a worker runs with signals unblocked");
  }
}

// Each thread of process pid, with its state and what it waits in, as
// /proc tells them: what a launch that never finished was doing.
std::string threads_of(pid_t pid) {
  std::string all;
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR *dir = opendir(tasks.c_str());
  if (!dir) return "no /proc entry";
  while (dirent *e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream stat(tasks + "/" + e->d_name + "/stat"), wchan(tasks + "/" + e->d_name + "/wchan");
    std::string line, waits;
    std::getline(stat, line);
    std::getline(wchan, waits);
    size_t close = line.rfind(')');
    all += std::string(all.empty() ? "" : "; ") + "thread " + e->d_name + " state " +
           (close + 2 < line.size() ? line.substr(close + 2, 1) : "?") + " in " + (waits.empty() ? "-" : waits);
  }
  closedir(dir);
  return all;
}

// The children of forks, made while another thread of the parent launches
// (so its pool's lock and jobs are in use), each run a launch of their
// own: they must not wait for the parent's workers, and get workers of
// their own.
Test(host_pool, the_child_of_a_fork_launches_on_workers_of_its_own, .timeout = 120) {
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    std::vector<int> counts(64, 0);
    while (!stop) rig::host_launch(count_threads, counts.data(), 64, 1);
  });
  bool workers = rig::performance_cores() > 1;
  for (int child_index = 0; child_index < 5; child_index++) {
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
      Meeting m;
      rig::host_launch(meet, &m, 64, 2);
      _exit(!partition_error(m.record.calls, 64, 2).empty() ? 1 : workers && !ran_on(m, false) ? 2 : 0);
    }
    int status = 0;
    auto deadline = Clock::now() + std::chrono::seconds(30);
    pid_t done = 0;
    while ((done = waitpid(child, &status, WNOHANG)) == 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::string hung;
    if (done == 0) {
      hung = threads_of(child);
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
    }
    cr_assert_neq(done, 0, "child %d's launch never finished (%s)", child_index, hung.c_str());
    cr_assert(WIFEXITED(status), "a child died");
    cr_assert_neq(WEXITSTATUS(status), 1, "a child's launch ran threads wrongly");
    cr_assert_neq(WEXITSTATUS(status), 2, "a child's launch ran on no worker");
  }
  stop = true;
  busy.join();
}
