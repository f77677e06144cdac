// Sim devices (SIM:n): simulated asynchronous GPUs.  Their memory is host
// memory that rig treats as the device's own (the host does not address
// Device memory), their work runs after submit returns on two queues, a
// compute queue and a copy engine, each run by a worker thread,
// a commit releases it, and a timeline word of their own rises as values
// complete.  They load code as the host does (host_code.hpp) and run a
// launch on the compute worker alone, a few calls of whole groups in turn.
// Knobs come from RIG_SIM (the shared ones) and from rig_open's config
// (any); an unknown key or a bad value is refused naming it and its source:
//   count=N        devices that rig_probe lists (default 2)
//   latency_us=N   time each value's work takes at least (default 0)
//   copy_gbps=X    bandwidth of copies and fills (default unbounded)
//   budget=BYTES   the device's budget (default 1G)
//   commit_every=K the driver commits on its own every K values (default 8)
//   queue_waits=0  make submit wait for other devices on the host
//   hang_ms=N      the hang bound the device declares (default 5000)
//   first_after=N  the timeline starts after N at least (tests of its end)
//   numa_node=N    the host NUMA node the device states (default none)
//   handle_only=1  Device memory is handle-only: locate gives a handle and an
//                  offset, no address (the spec's Low level)
//   own_word=1     the timeline word is the driver's own (facts.own_word):
//                  rig reads it through signaled() and frees its region
//   max_words=N    the words one submission may place on the queues, as a
//                  driver whose queues cannot grow bounds them: a part, a
//                  word it writes and a wait count one each (default none)
//   fault_at=N     the device faults as it runs its value N, as a kernel that
//                  touches memory it may not would (default none): the
//                  knob of sim_inject.h's fault_at, for a process that
//                  cannot reach that capability, such as rigd's clients
//                  (N counts the values of rigd's instance, its zeroing
//                  of a client's new memory among them)
// Tests inject faults through the capability of sim_inject.h.
#include "sim_inject.h"

#include "../common/host_code.hpp"
#include "../common/host_memory.hpp"
#include "rig_internal/driver.hpp"
#include "rig_internal/host_facts.hpp"
#include "rig_internal/options.hpp"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <unordered_set>
#include <mutex>
#include <thread>

namespace rig {
namespace {

struct Knobs {
  int64_t count, latency_us, budget, commit_every, hang_ms, first_after, numa_node, max_words, fault_at;
  double copy_gbps;
  bool queue_waits, own_word, handle_only;
  explicit Knobs(const std::string &config) {
    // RIG_SIM sets the knobs every sim shares; the configuration any knob
    // of its device.
    Options base = Options::of_environment(
        "RIG_SIM", {"count", "latency_us", "copy_gbps", "budget", "commit_every", "queue_waits", "hang_ms"});
    Options over(config, {"count", "latency_us", "copy_gbps", "budget", "commit_every", "queue_waits", "hang_ms",
                  "first_after", "numa_node", "handle_only", "own_word", "max_words", "fault_at"});
    // The options a knob comes from: the configuration's where it sets the
    // knob, else RIG_SIM's where shared.
    auto from = [&](const char *k, bool shared) -> const Options & { return shared && !over.has(k) ? base : over; };
    // An integer knob of at least least.
    auto pick = [&](const char *k, int64_t fallback, int64_t least, bool shared) {
      const Options &o = from(k, shared);
      int64_t v = o.integer(k, fallback);
      if (v < least) o.refuse(k, "below " + std::to_string(least));
      return v;
    };
    count = pick("count", 2, 0, true);
    latency_us = pick("latency_us", 0, 0, true);
    commit_every = pick("commit_every", 8, 1, true);
    hang_ms = pick("hang_ms", 5000, 1, true);
    first_after = pick("first_after", 0, 0, false);
    numa_node = pick("numa_node", -1, -1, false);
    max_words = pick("max_words", 0, 0, false);
    fault_at = pick("fault_at", 0, 0, false);
    own_word = pick("own_word", 0, INT64_MIN, false) != 0;
    handle_only = pick("handle_only", 0, INT64_MIN, false) != 0;
    queue_waits = pick("queue_waits", 1, INT64_MIN, true) != 0;
    budget = from("budget", true).bytes("budget", int64_t{1} << 30);
    const Options &gbps = from("copy_gbps", true);
    copy_gbps = gbps.real("copy_gbps", 0);
    if (copy_gbps < 0) gbps.refuse("copy_gbps", "negative");
  }
};

// A region: a block of host memory, or a mapping of one (which frees
// nothing of the memory it maps).
struct SimRegion {
  HostBlock *block;               // nullptr for a mapping
  void *address;
  SimRegion *maps = nullptr;      // for map_peer: the other device's region
  std::atomic<int> peer_maps{0};  // live map_peer regions over this one
  bool word = false;              // the region of the device's own word
  bool handle_only = false;       // located by handle (the region) and offset
};

// Where loc lies in this process: the address of a handle-only location.
void resolve(rig_edge_location_t &loc) {
  if (!loc.address && loc.handle)
    loc.address = static_cast<char *>(reinterpret_cast<SimRegion *>(loc.handle)->address) + loc.offset;
}

// One value's work, copied out of rig's structures at submit.
struct Work {
  uint64_t value;
  std::vector<rig_edge_part_t> parts;
  std::vector<std::vector<rig_edge_word_write_t>> words;  // storage of words parts
  std::vector<std::vector<uint32_t>> afters;              // storage of after lists
  std::vector<std::vector<std::max_align_t>> params;      // storage of launches' parameters
  std::vector<rig_edge_wait_t> waits;
  uint64_t bytes = 0;
};

// What the worker thread shares with the device; it outlives a stop.
struct Engine {
  std::mutex mu;
  std::condition_variable cv;    // work to run, or a stop
  std::condition_variable moved; // the word moved
  std::deque<Work> held;         // submitted, not committed
  std::deque<Work> ready;        // committed
  std::atomic<uint64_t> word{0};
  bool stopping = false;
  uint64_t last = 0;  // the value a stop writes once no work runs
  bool running = false;       // the worker runs a value's parts
  bool last_written = false;  // the word holds last, for good (DRV-97)
  Knobs knobs;
  std::atomic<int64_t> latency_us;
  // Injected faults (sim_inject.h).
  uint64_t fault_value = UINT64_MAX;
  uint64_t hang_value = UINT64_MAX;
  std::string fault_why;
  bool faulted = false;
  int fail_submits = 0, fail_commits = 0, sleeps_raise = 0, allocs_fail = 0, entries_refuse = 0;
  // The queues' growth (grow_every): room answers RIG_GROW every nth submit
  // until grow is called.
  int grow_every = 0, rooms = 0;
  int64_t grow_short = 0;
  bool must_grow = false, grown = false;
  std::atomic<int64_t> grows{0};
  std::atomic<int64_t> calls_inside_lock{0}, calls_unmasked{0};
  // What rig guarantees its drivers (rig-edge-driver.txt), checked as rig
  // calls: each breach counts, the first one's text kept.
  std::mutex contract_mu;
  std::unordered_set<SimRegion *> regions;  // the device's live regions
  std::unordered_set<void *> images;        // its loaded images
  bool stop_called = false;
  int in_flight = 0;  // counted calls under way
  std::atomic<int64_t> breaches{0};
  std::string first_breach;
  void breach(const std::string &why) {
    std::lock_guard<std::mutex> g(contract_mu);
    if (breaches++ == 0) first_breach = why;
  }
  // A counted call starts: rig makes none after the stop (DRV-05), nor
  // runs the stop while one is under way (DRV-01).
  void enter(const char *what) {
    check_no_lock();
    std::lock_guard<std::mutex> g(contract_mu);
    if (stop_called && breaches++ == 0) first_breach = std::string(what) + " after the stop";
    in_flight++;
  }
  void leave() {
    std::lock_guard<std::mutex> g(contract_mu);
    in_flight--;
  }
  // Counts a driver call that rig made holding a lock (DRV-09), or with
  // signals not blocked (DRV-22).
  void check_no_lock() {
    if (rig_holds() > 0) calls_inside_lock++;
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, nullptr, &now);
    if (!sigismember(&now, SIGINT) || !sigismember(&now, SIGTERM)) calls_unmasked++;
  }
  bool allocs_raise = false;
  std::atomic<int64_t> stops{0}, frees{0}, maps{0}, unmaps{0};
  std::atomic<bool> word_freed{false};  // own_word: rig freed the word's region
  // The copy engine's worker takes the copy queue's parts of the value the
  // compute queue's worker runs (Dispatch).
  struct Dispatch *copy_job = nullptr;
  std::condition_variable copy_cv;
  explicit Engine(const Knobs &k) : knobs(k), latency_us(k.latency_us) {
    if (k.fault_at > 0) {
      fault_value = static_cast<uint64_t>(k.fault_at);
      fault_why = "value " + std::to_string(k.fault_at) + " faulted (the fault_at knob)";
    }
  }
};

// Writes the value the worker's work reached, and then runs none.
void raise_word(Engine &e, uint64_t v) {
  {
    std::lock_guard<std::mutex> g(e.mu);
    e.word.store(v, std::memory_order_release);
    e.running = false;
  }
  e.moved.notify_all();
}

// With the engine's lock held: writes the stop's last value, once.
void write_last(Engine &e) {
  if (e.last_written) return;
  e.word.store(e.last, std::memory_order_release);
  e.last_written = true;
}

// Returns false if a stop came while the queue waited.
bool wait_words(Engine &e, const Work &w) {
  for (const rig_edge_wait_t &wait : w.waits) {
    int spins = 0;
    while (reinterpret_cast<const std::atomic<uint64_t> *>(const_cast<const uint64_t *>(wait.word))
               ->load(std::memory_order_acquire) < wait.value) {
      {
        std::lock_guard<std::mutex> g(e.mu);
        if (e.stopping) return false;
      }
      if (++spins < 64)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  return true;
}

constexpr uint64_t kMaxLaunchThreads = uint64_t{1} << 62;

// A launch's groups and threads per group, or nullopt where an axis is 0
// or it has more than 2^62 threads: then it never runs.
std::optional<std::pair<uint64_t, uint64_t>> launch_grid(const rig_edge_launch_t &l) {
  uint64_t groups = 1, threads = 1;
  for (int axis = 0; axis < 3; axis++) {
    if (l.groups[axis] == 0 || l.threads[axis] == 0) return std::nullopt;
    if (l.groups[axis] > kMaxLaunchThreads / groups) return std::nullopt;
    groups *= l.groups[axis];
    if (l.threads[axis] > kMaxLaunchThreads / threads) return std::nullopt;
    threads *= l.threads[axis];
  }
  if (groups > kMaxLaunchThreads / threads) return std::nullopt;
  return std::make_pair(groups, threads);
}

// Calls at most this many times per launch, so that a grid of many small
// groups costs few calls.
constexpr uint64_t kCallsPerLaunch = 16;

// Runs a launch in calls of whole groups, in order.  room() refuses one
// that has no grid; it then runs nothing.
void run_launch(const rig_edge_launch_t &l) {
  auto grid = launch_grid(l);
  if (!grid) return;
  auto [groups, threads] = *grid;
  auto f = reinterpret_cast<HostFunction>(const_cast<void *>(l.entry));
  uint64_t step = (groups + kCallsPerLaunch - 1) / kCallsPerLaunch;
  for (uint64_t first = 0; first < groups; first += step)
    f(l.params, static_cast<int64_t>(first * threads), static_cast<int64_t>(std::min(first + step, groups) * threads));
}

// One value's parts on the device's two queues.  Each queue runs its parts
// in order, each part once the parts its after list names are done; parts
// of the two queues that need no order run at once.
struct Dispatch {
  const Work *work;
  std::vector<char> done;  // per part
  std::mutex mu;
  std::condition_variable cv;
};

void run_queue(Dispatch &d, uint32_t queue) {
  const Work &w = *d.work;
  for (size_t i = 0; i < w.parts.size(); i++) {
    const rig_edge_part_t &p = w.parts[i];
    if (p.queue != queue) continue;
    {
      std::unique_lock<std::mutex> g(d.mu);
      d.cv.wait(g, [&] {
        for (uint32_t k = 0; k < p.after_count; k++)
          if (p.after[k] < d.done.size() && !d.done[p.after[k]]) return false;
        return true;
      });
    }
    if (p.kind == RIG_PART_LAUNCH)
      run_launch(p.u.launch);
    else
      run_part_on_host(p);
    {
      std::lock_guard<std::mutex> g(d.mu);
      d.done[i] = 1;
    }
    d.cv.notify_all();
  }
}

constexpr uint32_t kComputeQueue = 0, kCopyQueue = 1;

void block_signals() {
  // A thread rig starts blocks every signal for its life.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

// The copy engine's worker.
void run_copies(std::shared_ptr<Engine> engine) {
  block_signals();
  Engine &e = *engine;
  for (;;) {
    Dispatch *job;
    {
      std::unique_lock<std::mutex> g(e.mu);
      e.copy_cv.wait(g, [&] { return e.stopping || e.copy_job; });
      if (!e.copy_job) return;  // stopped, with no work in hand
      job = e.copy_job;
    }
    run_queue(*job, kCopyQueue);
    {
      std::lock_guard<std::mutex> g(e.mu);
      e.copy_job = nullptr;
    }
    e.copy_cv.notify_all();
  }
}

// Runs one value's parts on both queues; returns once both are done.
void run_parts(Engine &e, const Work &w) {
  bool copies = false;
  for (const rig_edge_part_t &p : w.parts) copies = copies || p.queue == kCopyQueue;
  Dispatch d{&w, std::vector<char>(w.parts.size(), 0), {}, {}};
  if (copies) {
    {
      std::lock_guard<std::mutex> g(e.mu);
      e.copy_job = &d;
    }
    e.copy_cv.notify_all();
  }
  run_queue(d, kComputeQueue);
  if (copies) {
    std::unique_lock<std::mutex> g(e.mu);
    e.copy_cv.wait(g, [&] { return e.copy_job != &d; });
  }
}

// The compute queue's worker, which also takes each value in turn: value v
// runs once every lower value is done, on both queues (device order).
void run(std::shared_ptr<Engine> engine) {
  block_signals();
  Engine &e = *engine;
  for (;;) {
    Work w;
    {
      std::unique_lock<std::mutex> g(e.mu);
      e.cv.wait(g, [&] { return e.stopping || !e.ready.empty(); });
      if (e.stopping) break;
      w = std::move(e.ready.front());
      e.ready.pop_front();
    }
    if (!wait_words(e, w)) break;
    {
      std::unique_lock<std::mutex> g(e.mu);
      if (e.stopping) break;  // the stop came first, and dropped the work
      // An injected fault or hang: the work never completes, and the
      // queues run nothing more until the stop.
      if (w.value >= e.fault_value || w.value >= e.hang_value) {
        if (w.value >= e.fault_value) e.faulted = true;
        e.moved.notify_all();
        e.cv.wait(g, [&] { return e.stopping; });
        break;
      }
      e.running = true;
    }
    auto start = std::chrono::steady_clock::now();
    run_parts(e, w);
    auto took = std::chrono::microseconds(e.latency_us.load());
    if (e.knobs.copy_gbps > 0) took += std::chrono::microseconds(static_cast<int64_t>(w.bytes / (e.knobs.copy_gbps * 1e3)));
    std::this_thread::sleep_until(start + took);
    raise_word(e, w.value);
  }
  e.copy_cv.notify_all();
  // Stopped: no work of the device runs any more.
  {
    std::lock_guard<std::mutex> g(e.mu);
    write_last(e);
  }
  e.moved.notify_all();
}

// Ends a counted call of the contract's bookkeeping.
struct Leave {
  Engine &e;
  ~Leave() { e.leave(); }
};

class SimDevice final : public DriverDevice {
 public:
  SimDevice(const Knobs &knobs, uint64_t start) : engine_(std::make_shared<Engine>(knobs)) {
    engine_->word.store(std::max<uint64_t>(start, static_cast<uint64_t>(knobs.first_after)));
    facts_.first_after = static_cast<uint64_t>(knobs.first_after);
    if (knobs.numa_node >= 0) facts_.numa_node = static_cast<int>(knobs.numa_node);
    facts_.arch = "sim";
    facts_.alignment = 256;
    facts_.cache_bytes = int64_t{4} << 20;
    facts_.budget = knobs.budget;
    facts_.hang_ms = knobs.hang_ms;
    facts_.maps_host = true;
    facts_.queue_waits = knobs.queue_waits;
    facts_.queues = {"COMPUTE:0", "COPY:0"};
    facts_.copy_engine = 1;
    facts_.commit_every = static_cast<uint64_t>(knobs.commit_every);
    if (knobs.own_word) {
      facts_.own_word = true;
      auto *word = new SimRegion{nullptr, &engine_->word};
      word->word = true;
      facts_.word_region = track(word);
    } else {
      facts_.word = &engine_->word;
    }
    inject_ = {sizeof inject_, this,   fault_at, hang_at, fail_submits, fail_commits, sleeps_raise, allocs_fail,
               set_latency_us, stops,  frees,    maps,    grow_every,   grows,       calls_inside_lock,
               calls_unmasked, breaches, entries_refuse, unmaps};
    facts_.capabilities = {{RIG_SIM_INJECT_KEY, &inject_}};
    std::thread(run, engine_).detach();
    std::thread(run_copies, engine_).detach();
  }

  const Facts &facts() const override { return facts_; }

  Region alloc(Memory m, int64_t n) override {
    Engine &e = *engine_;
    e.enter("alloc");
    Leave leave{e};
    if (n <= 0 || n % 4 != 0) e.breach("alloc of " + std::to_string(n) + " bytes, not a positive multiple of 4");
    {
      std::lock_guard<std::mutex> g(e.mu);
      if (e.allocs_fail > 0) {
        e.allocs_fail--;
        if (e.allocs_raise) throw std::runtime_error("injected: alloc raised");
        return nullptr;
      }
    }
    HostBlock *b = host_block_alloc(n, 256);
    if (!b) return nullptr;
    auto *region = new SimRegion{b, b->address};
    region->handle_only = e.knobs.handle_only && m == Memory::Device;
    return track(region);
  }
  void free(Region r) override {
    auto *region = static_cast<SimRegion *>(r);
    Engine &e = *engine_;
    e.check_no_lock();
    e.frees++;
    {
      std::lock_guard<std::mutex> g(e.contract_mu);
      // Each region once, on its device (DRV-30, DRV-42); after a stop only
      // once the word reads the last value (DRV-98).
      if (!e.regions.erase(region)) {
        if (e.breaches++ == 0) e.first_breach = "free of a region not the device's, or freed before";
        return;
      }
      if (e.stop_called && e.word.load() < e.last && e.breaches++ == 0)
        e.first_breach = "free after the stop before the word read the last value";
    }
    if (region->word) {
      e.word_freed = true;
      delete region;
      return;
    }
    if (!region->block) e.unmaps++;
    // Every map_peer region over a region goes before it (DRV-32).
    if (region->peer_maps.load() > 0) e.breach("free of a region that a peer still maps");
    if (region->maps) region->maps->peer_maps--;
    host_block_free(region->block);
    delete region;
  }
  rig_edge_location_t locate(Region r) const override {
    auto *region = static_cast<SimRegion *>(r);
    if (region->handle_only) return rig_edge_location_t{nullptr, reinterpret_cast<uint64_t>(region), 0};
    return rig_edge_location_t{region->address, 0, 0};
  }
  bool peer(const DriverDevice &other) const override { return dynamic_cast<const SimDevice *>(&other) != nullptr; }
  Region map_peer(DriverDevice &other, Region r) override {
    Engine &e = *engine_;
    e.enter("map_peer");
    Leave leave{e};
    if (&other == this) e.breach("map_peer of the device itself");  // DRV-33
    e.maps++;
    auto *theirs = static_cast<SimRegion *>(r);
    theirs->peer_maps++;
    return track(new SimRegion{nullptr, theirs->address, theirs});
  }
  Region map_host(void *p, int64_t n) override {
    Engine &e = *engine_;
    e.enter("map_host");
    Leave leave{e};
    // p starts a page and n is positive (DRV-47).
    if (reinterpret_cast<uintptr_t>(p) % 4096 != 0 || n <= 0) e.breach("map_host off a page or of no bytes");
    e.maps++;
    return track(new SimRegion{nullptr, p});
  }

  std::variant<Image, std::string> image(const void *bytes, size_t n) override {
    Engine &e = *engine_;
    e.enter("image");
    Leave leave{e};
    auto answer = link_host_image(bytes, n);
    if (auto *image = std::get_if<Image>(&answer)) {
      std::lock_guard<std::mutex> g(e.contract_mu);
      e.images.insert(*image);
    }
    return answer;
  }
  // The sim links on the host: its code holds the pages it mapped.
  int64_t image_bytes(Image image, size_t) override { return host_image_bytes(image); }
  void prepare(Image image, const std::string &) override {
    Engine &e = *engine_;
    e.enter("prepare");
    Leave leave{e};
    check_loaded(image, "prepare");
  }
  EntryAnswer entry(Image image, const std::string &name) override {
    Engine &e = *engine_;
    e.enter("entry");
    Leave leave{e};
    check_loaded(image, "entry");
    {
      std::lock_guard<std::mutex> g(e.mu);
      if (e.entries_refuse > 0) {
        e.entries_refuse--;
        throw std::invalid_argument("injected: " + name + " needs more than the sim offers");
      }
    }
    return host_image_entry(image, name);
  }
  void unload(Image image) override {
    Engine &e = *engine_;
    e.check_no_lock();
    {
      // Each image once (DRV-36); after a stop only once the word reads
      // the last value (DRV-98).
      std::lock_guard<std::mutex> g(e.contract_mu);
      if (!e.images.erase(image)) {
        if (e.breaches++ == 0) e.first_breach = "unload of an image not the device's, or unloaded before";
        return;
      }
      if (e.stop_called && e.word.load() < e.last && e.breaches++ == 0)
        e.first_breach = "unload after the stop before the word read the last value";
    }
    unload_host_image(image);
  }

  rig_edge_room_t room(const rig_edge_work_t &w) override {
    // A launch with shared memory, a zero axis or more than 2^62 threads
    // runs on no sim.
    uint64_t words = w.wait_count;
    for (uint32_t i = 0; i < w.part_count; i++) {
      const rig_edge_part_t &p = w.parts[i];
      if (p.kind == RIG_PART_LAUNCH && (p.u.launch.shared_bytes > 0 || !launch_grid(p.u.launch))) return RIG_NEVER;
      words += 1 + (p.kind == RIG_PART_WORDS ? p.u.words.count : 0);
    }
    Engine &e = *engine_;
    if (e.knobs.max_words > 0 && words > static_cast<uint64_t>(e.knobs.max_words)) return RIG_NEVER;
    std::lock_guard<std::mutex> g(e.mu);
    // The room asked again after a growth is that submission's: it fits.
    if (e.grown) {
      e.grown = false;
      return RIG_ROOM;
    }
    if (e.grow_every > 0 && !e.must_grow && ++e.rooms % e.grow_every == 0) e.must_grow = true;
    return e.must_grow ? RIG_GROW : RIG_ROOM;
  }

  std::optional<int64_t> grow() override {
    Engine &e = *engine_;
    e.enter("grow");
    Leave leave{e};
    std::lock_guard<std::mutex> g(e.mu);
    e.grows++;
    if (e.grow_short > 0) return e.grow_short;
    e.must_grow = false;
    e.grown = true;
    return std::nullopt;
  }

  void submit(const rig_edge_work_t &w) override {
    Work work;
    work.value = w.value;
    work.parts.assign(w.parts, w.parts + w.part_count);
    work.waits.assign(w.waits, w.waits + w.wait_count);
    work.words.reserve(work.parts.size());
    work.afters.reserve(work.parts.size());
    work.params.reserve(work.parts.size());
    for (rig_edge_part_t &p : work.parts) {
      work.afters.emplace_back(p.after, p.after + p.after_count);
      p.after = work.afters.back().data();
      if (p.kind == RIG_PART_WORDS) {
        work.words.emplace_back(p.u.words.writes, p.u.words.writes + p.u.words.count);
        for (rig_edge_word_write_t &write : work.words.back()) resolve(write.dst);
        p.u.words.writes = work.words.back().data();
      }
      if (p.kind == RIG_PART_COPY) {
        resolve(p.u.copy.src);
        resolve(p.u.copy.dst);
      }
      if (p.kind == RIG_PART_FILL) resolve(p.u.fill.dst);
      if (p.kind == RIG_PART_LAUNCH) {
        // The parameters live until submit returns; the launch runs later.
        size_t bytes = static_cast<size_t>(p.u.launch.param_bytes);
        work.params.emplace_back((bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
        if (bytes) std::memcpy(work.params.back().data(), p.u.launch.params, bytes);
        p.u.launch.params = work.params.back().data();
      }
      if (p.kind == RIG_PART_COPY) work.bytes += p.u.copy.width * p.u.copy.rows;
      if (p.kind == RIG_PART_FILL) work.bytes += p.u.fill.bytes;
    }
    Engine &e = *engine_;
    std::lock_guard<std::mutex> g(e.mu);
    if (e.faulted) throw Fault(e.fault_why);
    if (e.fail_submits > 0) {
      e.fail_submits--;
      throw Fault("injected: submit failed");
    }
    e.held.push_back(std::move(work));
    if (e.held.size() >= static_cast<size_t>(e.knobs.commit_every)) release_held();
  }

  void commit(uint64_t value) override {
    Engine &e = *engine_;
    std::lock_guard<std::mutex> g(e.mu);
    if (e.fail_commits > 0) {
      e.fail_commits--;
      throw Fault("injected: commit failed");
    }
    if (!e.held.empty() && e.held.front().value <= value) release_held();
  }

  // Read by rig only for a word of the driver's own, and never once rig
  // has freed it (DRV-77).
  uint64_t signaled() override {
    Engine &e = *engine_;
    if (e.word_freed.load()) e.breach("signaled after rig freed the word");
    return e.word.load(std::memory_order_acquire);
  }
  void sleep(uint64_t seen, int64_t still_ms) override {
    Engine &e = *engine_;
    e.enter("sleep");
    Leave leave{e};
    std::unique_lock<std::mutex> g(e.mu);
    if (e.sleeps_raise > 0) {
      e.sleeps_raise--;
      throw std::runtime_error("injected: sleep raised");
    }
    rig_unblock();
    e.moved.wait_for(g, std::chrono::milliseconds(still_ms),
                     [&] { return e.faulted || e.word.load(std::memory_order_acquire) != seen; });
    rig_block();
    if (e.faulted) throw Fault(e.fault_why);
  }

  void stop(const std::optional<std::string> &, uint64_t last) override {
    Engine &e = *engine_;
    e.check_no_lock();
    e.stops++;
    {
      // Once, with no counted call under way (DRV-01, DRV-88).
      std::lock_guard<std::mutex> g(e.contract_mu);
      if ((e.stop_called || e.in_flight > 0) && e.breaches++ == 0)
        e.first_breach = e.stop_called ? "a second stop" : "a stop while a counted call ran";
      e.stop_called = true;
    }
    {
      std::lock_guard<std::mutex> g(e.mu);
      e.held.clear();  // uncommitted work never runs
      e.ready.clear();
      e.last = last;
      e.stopping = true;
      // With no work running the word shows last as the stop returns
      // (DRV-92); otherwise the worker writes it once its work has ended.
      if (!e.running) write_last(e);
    }
    e.moved.notify_all();
    e.cv.notify_all();
    e.copy_cv.notify_all();
  }

 private:
  // With the engine's lock held: every held value becomes ready.
  void release_held() {
    Engine &e = *engine_;
    for (Work &w : e.held) e.ready.push_back(std::move(w));
    e.held.clear();
    e.cv.notify_all();
  }

  // prepare and entry come only for a loaded image (DRV-37).
  void check_loaded(Image image, const char *call) {
    std::lock_guard<std::mutex> g(engine_->contract_mu);
    if (!engine_->images.count(image) && engine_->breaches++ == 0)
      engine_->first_breach = std::string(call) + " of an image not loaded on the device";
  }

  SimRegion *track(SimRegion *r) {
    std::lock_guard<std::mutex> g(engine_->contract_mu);
    engine_->regions.insert(r);
    return r;
  }

  // The injection capability's functions.
  static Engine &engine(void *device) { return *static_cast<SimDevice *>(device)->engine_; }
  template <class F>
  static void locked(void *device, F f) {
    Engine &e = engine(device);
    {
      std::lock_guard<std::mutex> g(e.mu);
      f(e);
    }
    e.cv.notify_all();
    e.moved.notify_all();
  }
  static void fault_at(void *d, uint64_t v, const char *why) {
    locked(d, [&](Engine &e) {
      e.fault_value = v;
      e.fault_why = why ? why : "injected fault";
      if (e.word.load() >= v) e.faulted = true;
    });
  }
  static void hang_at(void *d, uint64_t v) { locked(d, [&](Engine &e) { e.hang_value = v; }); }
  static void fail_submits(void *d, int n) { locked(d, [&](Engine &e) { e.fail_submits = n; }); }
  static void fail_commits(void *d, int n) { locked(d, [&](Engine &e) { e.fail_commits = n; }); }
  static void sleeps_raise(void *d, int n) { locked(d, [&](Engine &e) { e.sleeps_raise = n; }); }
  static void entries_refuse(void *d, int n) { locked(d, [&](Engine &e) { e.entries_refuse = n; }); }
  static void allocs_fail(void *d, int n, int raise) {
    locked(d, [&](Engine &e) {
      e.allocs_fail = n;
      e.allocs_raise = raise != 0;
    });
  }
  static void set_latency_us(void *d, int64_t us) { engine(d).latency_us.store(us); }
  static int64_t stops(void *d) { return engine(d).stops.load(); }
  static int64_t frees(void *d) { return engine(d).frees.load(); }
  static int64_t maps(void *d) { return engine(d).maps.load(); }
  static int64_t unmaps(void *d) { return engine(d).unmaps.load(); }
  static void grow_every(void *d, int n, int64_t short_bytes) {
    locked(d, [&](Engine &e) {
      e.grow_every = n;
      e.grow_short = short_bytes;
      e.rooms = 0;
      e.must_grow = e.grown = false;
    });
  }
  static int64_t grows(void *d) { return engine(d).grows.load(); }
  static int64_t calls_inside_lock(void *d) { return engine(d).calls_inside_lock.load(); }
  static int64_t calls_unmasked(void *d) { return engine(d).calls_unmasked.load(); }
  static const char *breaches(void *d, int64_t *count) {
    Engine &e = engine(d);
    std::lock_guard<std::mutex> g(e.contract_mu);
    *count = e.breaches.load();
    return e.breaches.load() ? e.first_breach.c_str() : nullptr;
  }

  std::shared_ptr<Engine> engine_;
  Facts facts_;
  rig_sim_inject_t inject_;
};

class SimDriver final : public Driver {
 public:
  const char *prefix() const override { return "SIM"; }
  std::unique_ptr<DriverDevice> open(const std::string &, const std::string &config, uint64_t start) override {
    return std::make_unique<SimDevice>(Knobs(config), start);
  }
  void probe(const std::function<void(const std::string &, const std::string &)> &f) override {
    int64_t count = 2;
    try {
      count = Knobs("").count;
    } catch (const std::exception &e) {
      f("SIM:0", e.what());
      return;
    }
    for (int64_t i = 0; i < count; i++) f("SIM:" + std::to_string(i), "");
  }
};

}  // namespace

RIG_REGISTER_DRIVER(SimDriver)

}  // namespace rig
