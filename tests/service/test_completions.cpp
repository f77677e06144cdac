// The threads that raise a client's words (completions.hpp): a served
// device's thread is made when a proxy of it opens, and a system that has
// no thread to give leaves the completions as they were.
#include "client_counters.hpp"
#include "completions.hpp"
#include "served.hpp"

#include <criterion/criterion.h>

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstddef>
#include <system_error>
#include <vector>

namespace {

// A user no other process of the machine runs as, so that a bound on its
// threads (RLIMIT_NPROC) is this test's alone.
constexpr uid_t thread_bound_user = 61236;

}  // namespace

/* rigd(8), admission: where the system gives no thread, open_lane throws
 * and publishes no lane: the completions end without joining a thread
 * that never ran.  The test becomes a user whose one bounded thread it is
 * already; before, a lane was published before its thread started, and
 * the completions' end aborted the process (std::terminate) joining it. */
Test(completions, a_lane_that_gets_no_thread_is_not_kept) {
  if (getuid() != 0) cr_skip_test("bounding a user's threads needs another user: needs root");
  rigd::ServedDevices served({"MEM:0"});
  rigd::ClientCounters counters(1, getpid(), 0, "test", served.size());
  std::vector<std::byte> words(RIG_PROXY_WORD_BYTES * 4);
  uint32_t sleepers = 0;
  {
    rigd::Completions completions(words.data(), 4, &sleepers, served, counters, "test client");
    // The soft bound alone, which the test lifts again for what follows
    // (LeakSanitizer's look at the threads at exit makes one).
    rlimit was{};
    cr_assert(getrlimit(RLIMIT_NPROC, &was) == 0);
    rlimit one{1, was.rlim_max};
    cr_assert(setrlimit(RLIMIT_NPROC, &one) == 0 && setuid(thread_bound_user) == 0, "become a bounded user");
    // setuid made the process undumpable, which that look needs it not to be.
    prctl(PR_SET_DUMPABLE, 1);
    bool refused = false;
    try {
      completions.open_lane(0);
    } catch (const std::system_error &) {
      refused = true;
    }
    cr_assert(setrlimit(RLIMIT_NPROC, &was) == 0);
    cr_assert(refused, "no thread starts past the bound");
  }
  // Reached only where the completions' end did not abort.
}
