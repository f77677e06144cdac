// The host's pool (rig.txt, Launches): performance_cores() - 1 persistent
// workers, started at the first launch that splits, which sleep on a
// condition variable while no launch needs them.
//
// A launch that splits publishes a Job, on its caller's stack, in the
// pool's list of jobs with chunks left; the caller and the workers that
// join take chunks of whole groups from the job's atomic counter until none
// is left.  The caller then takes the job out of the list and waits, under
// the pool's lock, until no worker is inside it: only then may the job's
// memory go.  Each launch is run by its caller and at most the pool's
// workers, so by at most performance_cores() threads (HOST-12).  A worker
// joins a job only between chunks, so a launch made inside a kernel (on a
// worker or on a caller) runs on its own thread and whichever workers are
// idle, and never waits for a thread that waits for it.
#include "host_pool.hpp"

#include <rig/edge.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

namespace rig {
namespace {

// Chunks per thread that may run a launch: enough that threads which start
// late or run slower still share the work evenly.
constexpr uint64_t kChunksPerCore = 4;

struct Job {
  HostFunction f;
  const void *params;
  uint64_t group_threads;
  uint64_t groups;
  uint64_t chunk_groups;  // groups of every chunk but perhaps the last
  uint64_t chunks;
  std::atomic<uint64_t> next_chunk{0};
  int inside = 0;      // workers running its chunks (the pool's lock)
  Job *next = nullptr;  // in the pool's list (the pool's lock)
};

// Calls f over chunk c's groups (HOST-10): chunks of whole groups in turn
// partition the launch's threads (HOST-11).
void run_chunk(const Job &j, uint64_t c) {
  uint64_t first = c * j.chunk_groups, end = std::min(first + j.chunk_groups, j.groups);
  j.f(j.params, static_cast<int64_t>(first * j.group_threads), static_cast<int64_t>(end * j.group_threads));
}

// Runs chunks of j until none is left.
void run_chunks(Job &j) {
  for (uint64_t c; (c = j.next_chunk.fetch_add(1, std::memory_order_relaxed)) < j.chunks;) run_chunk(j, c);
}

bool exhausted(const Job &j) { return j.next_chunk.load(std::memory_order_relaxed) >= j.chunks; }

// The pool holds no memory of its own (its jobs lie on their callers'
// stacks), so the child of a fork rebuilds it in place over its parent's
// state without leaking (reset_in_child).
struct Pool {
  std::mutex mu;
  std::condition_variable work;  // a job joined the list
  std::condition_variable left;  // a worker left a job
  Job *jobs = nullptr;           // jobs that may have chunks left
  int workers = 0;               // started
  bool started = false;

  void remove(Job *j) {
    for (Job **p = &jobs; *p; p = &(*p)->next)
      if (*p == j) {
        *p = j->next;
        return;
      }
  }

  // The first job with chunks left, dropping exhausted ones on the way.
  Job *job_with_chunks() {
    while (jobs && exhausted(*jobs)) jobs = jobs->next;
    return jobs;
  }

  void serve() {
    std::unique_lock<std::mutex> g(mu);
    for (;;) {
      work.wait(g, [&] { return job_with_chunks() != nullptr; });
      Job *j = jobs;
      j->inside++;
      g.unlock();
      run_chunks(*j);
      g.lock();
      if (--j->inside == 0) left.notify_all();
    }
  }

  // Starts the workers once (with the pool's lock held); a worker the
  // system refuses is one fewer: the callers run the chunks.
  void start_workers() {
    if (started) return;
    started = true;
    // A worker blocks signals for its life, so that handlers run on the
    // application's threads: it starts with the mask its creator holds.
    sigset_t old;
    rig_mask(&old);
    for (int i = 1; i < performance_cores(); i++) {
      try {
        std::thread([this] { serve(); }).detach();
        workers++;
      } catch (const std::system_error &) {
        break;
      }
    }
    rig_unmask(&old);
  }
};

std::atomic<Pool *> pool_instance{nullptr};

// The child of a fork has none of its parent's workers, nor the launches
// that ran on them: it starts with a new pool, in place, whatever state
// the lock and the jobs were in, and starts workers of its own.
void reset_in_child() {
  if (Pool *p = pool_instance.load(std::memory_order_relaxed)) new (p) Pool();
}

// Registered as librig loads, not as the pool is made: glibc runs in a
// child only the handlers registered before its fork began, so a pool
// made while another thread forked could reach the child, its lock held
// by the thread that made it, with no reset.
[[maybe_unused]] const int reset_registered = pthread_atfork(nullptr, nullptr, reset_in_child);

// Made at the first launch that splits, without a function-local static:
// a fork while another thread makes it must not leave the child waiting
// on a guard that thread holds.  Of two threads that race, one's pool is
// kept.
Pool &pool() {
  if (Pool *p = pool_instance.load(std::memory_order_acquire)) return *p;
  auto *made = new Pool();
  Pool *none = nullptr;
  if (!pool_instance.compare_exchange_strong(none, made, std::memory_order_acq_rel)) {
    delete made;
    return *none;
  }
  return *made;
}

}  // namespace

void host_launch(HostFunction f, const void *params, uint64_t groups, uint64_t group_threads) {
  uint64_t cores = static_cast<uint64_t>(performance_cores());
  // Nothing to share: one call on this thread, with no wake-up.
  if (groups == 1 || cores == 1) {
    f(params, 0, static_cast<int64_t>(groups * group_threads));
    return;
  }
  uint64_t chunk_groups = (groups + cores * kChunksPerCore - 1) / (cores * kChunksPerCore);
  Job job{f, params, group_threads, groups, chunk_groups, (groups + chunk_groups - 1) / chunk_groups};
  // The caller keeps the first chunk, so each launch runs on its caller
  // (HOST-05) however fast the workers wake.
  job.next_chunk.store(1, std::memory_order_relaxed);
  Pool &p = pool();
  int wake;
  {
    std::lock_guard<std::mutex> g(p.mu);
    p.start_workers();
    job.next = p.jobs;
    p.jobs = &job;
    wake = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(p.workers), job.chunks - 1));
  }
  for (int i = 0; i < wake; i++) p.work.notify_one();
  run_chunk(job, 0);
  run_chunks(job);
  std::unique_lock<std::mutex> g(p.mu);
  p.remove(&job);
  // The workers' writes are visible once each has left under the lock
  // (HOST-06).
  p.left.wait(g, [&] { return job.inside == 0; });
}

}  // namespace rig
