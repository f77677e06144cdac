// The C++ driver base: what a driver gives rig for each device it opens
// (the specification's Rig_edge.Driver), beside the C functions of
// include/rig/edge.h.  The core reaches drivers only through this file.
#pragma once

#include <rig/edge.h>
#include <rig/rig.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace rig {

// Thrown by a driver's counted call when the device faulted: rig loses the
// device with why as the reason.
struct Fault : std::runtime_error {
  explicit Fault(const std::string &why) : std::runtime_error(why) {}
};

enum class Memory { Device = 0, Pinned = 1, Mapped = 2 };

// A region of memory a driver made (alloc, map_peer, map_host): opaque to
// rig, which hands it back to the driver's free.
using Region = void *;

// What a device states when it opens; constant for its life.
struct Facts {
  std::string arch;                  // "sm_90", "memory", ...
  std::optional<std::string> bus;    // PCI bus address
  int64_t alignment = 64;            // power of two; every alloc starts on it
  std::optional<int64_t> cache_bytes;
  int64_t budget = INT64_MAX;        // bytes of memory that count in it
  // Devices that state one key here share a bound of their driver's on
  // their memory together, beyond each one's budget, such as the quota
  // that rigd sets on a client's proxies: a refused allocation's rounds of
  // reclamation free what is collected and cached on each of them, as for
  // one budget (RECL-36).  nullptr: the device shares no bound.
  const void *shared_bound = nullptr;
  // The most bytes of collected memory the device's cache keeps for reuse
  // (rig_cache_limit): past it, memory returns to the driver.
  int64_t cache_limit = INT64_MAX;
  std::optional<int64_t> hang_ms;    // where no kernel timeout bounds work
  std::optional<int> numa_node;      // the host NUMA node nearest the device
  bool maps_host = false;            // map_host maps host pages for the work
  // map_host maps rig's staging memory for copies, though the device does
  // not reach host memory at large (maps_host false): a proxy, whose
  // service maps the host blocks the process shares with it.
  bool maps_staging = false;
  bool host_addresses = false;       // the host addresses Device memory
  // The device's copies name this process's memory by its host address,
  // though its work reaches no host memory (maps_host false): a proxy of
  // another machine's, whose link carries the bytes (PROXY-35).
  bool copies_host_by_address = false;
  bool runs_on_host = false;         // work is this process's code
  bool may_block = false;            // room/submit/commit may block
  // room, submit, commit and sleep run only code of rig's, block on
  // nothing but what rig counts and take no lock but rig's counted ones
  // (rig_hold): no handler can run half way through a lock rig cannot
  // count, so rig masks no signal around them (ERR-06's exemption, as
  // ERR-07's reads of a word).  Off by default: a driver built outside the
  // tree, or one calling a vendor's library, keeps the mask.
  bool signal_safe = false;
  // The device patches a launch's refs itself: the core takes refs naming
  // handle-only memory, patches none, and gives each ref's location, byte
  // and access in rig_edge_launch_t.refs (a proxy of rigd's).
  bool launch_refs_by_location = false;
  bool queue_waits = false;          // queues wait on other devices' words
  std::vector<std::string> queues;   // "COMPUTE:0", "COPY:0"
  int copy_engine = -1;              // queue of copies and fills, -1 none
  uint64_t commit_every = 1;         // k: commits on its own every k values
  // The timeline starts after max(the slot's start, first_after): a knob
  // for tests that start a timeline near its last value.  The driver's
  // word reads that value at open.
  uint64_t first_after = 0;
  // The device's timeline word.  The driver raises it with release order.
  // own_word: rig reads it only through signaled() and frees it through
  // free(word_region) once the device has stopped.
  const std::atomic<uint64_t> *word = nullptr;
  bool own_word = false;
  Region word_region = nullptr;
  std::vector<std::pair<std::string, const void *>> capabilities;
};

// A host function's C type (HOST-07): a launch's entry on the host.
using HostFunction = void (*)(const void *params, int64_t first, int64_t end);

// One open device of a driver.  Every call but facts(), locate(), peer(),
// signaled() and stop() is counted: stop() never runs while one is in
// flight.  Counted calls may throw Fault; memory- and code-changing calls
// that throw anything else lose the device with the exception's text.
class DriverDevice {
 public:
  virtual ~DriverDevice() = default;

  virtual const Facts &facts() const = 0;

  // Memory.  n is positive and a multiple of 4.  nullptr: no memory of m.
  virtual Region alloc(Memory m, int64_t n) = 0;
  // Why this thread's last alloc answered nullptr, where the driver knows
  // more than that the device has no memory (a service's limit, with its
  // numbers); "" otherwise.  Not counted: must not block or fault.
  virtual std::string refusal() { return {}; }
  // Whether r, as alloc made it, reads zero: pages new from the system,
  // which no earlier use wrote.  False where the driver cannot say (an
  // allocator that hands back freed memory, a vendor's).  Not counted:
  // must not block or fault.
  virtual bool zeroed(Region) const { return false; }
  virtual void free(Region r) = 0;
  // Where r lies; must not block or fault.
  virtual rig_edge_location_t locate(Region r) const = 0;
  // True iff map_peer(other, ...) maps other's Device memory; answers from
  // what both devices learned at open, also once either is lost.
  virtual bool peer(const DriverDevice &) const { return false; }
  virtual Region map_peer(DriverDevice &, Region) {
    throw std::logic_error("map_peer of a driver that maps no peer");
  }
  // Maps for the device the n bytes of host memory at p (p on a page).
  // nullptr: the driver never maps that memory.
  virtual Region map_host(void *, int64_t) { return nullptr; }

  // For memory that other processes share (rigd's exports and imports): a
  // mark of the work they have handed over on r so far, nullopt where r is
  // shared with none; and whether the work up to a mark is done (or can
  // never be).  Reads of words, which rig makes with signals unmasked.
  virtual std::optional<uint64_t> others_mark(Region) { return std::nullopt; }
  virtual bool others_done(Region, uint64_t) { return true; }

  // Memory shared with other processes through a service (rig/service.h),
  // where exports() is true (a proxy of rigd's; not counted, must not
  // block): rig refuses rig_service_share and rig_service_import for any
  // other device.  export_bytes exports bytes [offset, offset + length) of
  // r, the device's own memory, as a token any client of the service
  // imports; nothing where the service refuses.  import_bytes answers the
  // memory token names, as a region of this device, and its length;
  // nothing where the service holds no such export.  export_fd answers a
  // new descriptor naming token, an export of this process's, or -1 where
  // the service refuses; token_of_fd the token the descriptor fd names, or
  // 0 where it names no export of this device's service.  refusal() says
  // why the service refused where it said why.
  virtual bool exports() const { return false; }
  virtual std::optional<uint64_t> export_bytes(Region, uint64_t, uint64_t) { refuse_export(); }
  virtual std::optional<std::pair<Region, int64_t>> import_bytes(uint64_t) { refuse_export(); }
  virtual int export_fd(uint64_t) { refuse_export(); }
  virtual uint64_t token_of_fd(int) { refuse_export(); }

  // How the PCI function at bus address fn reaches all of r (alloc made
  // it) by DMA, or the reason it cannot (naming fn where fn names no
  // function of the machine).
  struct Dma {
    rig_dma_kind_t kind;
    std::vector<rig_dma_range_t> ranges;  // RIG_DMA_BUS
    int fd = -1;                          // RIG_DMA_DMABUF
    int64_t offset = 0;
  };
  virtual std::variant<Dma, std::string> dma(Region, const std::string &) {
    return std::string("the driver describes no memory for DMA");
  }

  // Code (rig-edge-driver.txt, Code).  An image is the driver's loaded
  // code, opaque to rig.  image() takes a binary (an ELF object, a cubin,
  // ...) and answers the image or the reason the device refuses it.
  // entry() makes everything a launch of f needs, so that submit allocates
  // nothing to launch it; a second call for f makes nothing new.  It throws
  // std::invalid_argument for a function the device cannot run (which
  // loses nothing), and answers NoMemory, having made nothing, where the
  // device has no memory for the bytes f's launches need.  prepare() may
  // start what entry() makes without waiting and reports nothing.
  // unload() is called once per image, once no work runs it.
  using Image = void *;
  struct Entry {
    const void *handle = nullptr;  // rig_edge_launch_t.entry
    uint64_t address = 0;          // what an entry ref places in parameters; 0: none
    int64_t max_threads = INT64_MAX;  // threads a group may have at most
  };
  struct Absent {};
  struct NoMemory {
    int64_t bytes;
  };
  using EntryAnswer = std::variant<Entry, Absent, NoMemory>;
  virtual std::variant<Image, std::string> image(const void *, size_t) {
    return std::string("the device loads no code");
  }
  // The bytes of device memory image holds while loaded, which count in
  // the device's budget until its unload (RECL-26); binary_bytes is the
  // size of the binary image() took.  Must not block or fault.  By
  // default the binary's size: CUDA and ROCr report no size of a loaded
  // module (cuModuleGetLoadingMode is none), and a proxy's images count
  // in the budget of the service's device, which loads them.
  virtual int64_t image_bytes(Image, size_t binary_bytes) { return static_cast<int64_t>(binary_bytes); }
  virtual void prepare(Image, const std::string &) {}
  virtual EntryAnswer entry(Image, const std::string &) { return Absent{}; }
  virtual void unload(Image) {}

  // Queues: the C functions of edge.h.
  virtual rig_edge_room_t room(const rig_edge_work_t &) { return RIG_ROOM; }
  // Makes what the queues need for the work whose room last answered
  // RIG_GROW on this thread: nullopt once grown, else the bytes it had no
  // memory for.
  virtual std::optional<int64_t> grow() { return std::nullopt; }
  // Takes the work of w.value; throws Fault when it fails to take it.
  virtual void submit(const rig_edge_work_t &w) = 0;
  // The host's launches, which never reach submit: runs f over the threads
  // [0, groups * group_threads) in calls of whole groups and returns once
  // every call has returned.  rig calls it, uncounted (the host is never
  // lost), for each launch of a submission to the host.
  virtual void launch_now(HostFunction, const void *, uint64_t, uint64_t) {
    throw std::logic_error("launch_now of a device whose launches reach submit");
  }
  // Releases to the device the work held up to value.
  virtual void commit(uint64_t) {}

  // True iff the device's queues wait themselves on the words of other, a
  // device of the same driver whose word is its driver's own (own_word):
  // the waits submit gets then name other's facts.word.  A proxy waits so
  // on the proxies of its own connection to rigd.
  virtual bool queue_waits_on(const DriverDevice &) const { return false; }

  // Timeline: the word's value, acquire order (own_word drivers).
  virtual uint64_t signaled() { return facts().word->load(std::memory_order_acquire); }
  // Blocks until the word differs from seen, at most still_ms; may return
  // early.  Throws Fault once the device has faulted.
  virtual void sleep(uint64_t seen, int64_t still_ms) = 0;

  // Why the device is lost, where its driver learned it outside any call
  // (a proxy whose link failed: PROXY-07), else nullopt.  Called outside
  // rig's locks, from any thread; must not block.
  virtual std::optional<std::string> lost_outside_calls() { return std::nullopt; }

  // Stops the lost device without waiting for its work: drops uncommitted
  // work, releases the queues, and writes last into the word once no work
  // runs.  fault is set where rig lost the device for a fault or a hang.
  virtual void stop(const std::optional<std::string> &fault, uint64_t last) = 0;

 private:
  [[noreturn]] static void refuse_export() { throw std::logic_error("an export of a device that exports nothing"); }
};

// A driver: opens devices by name.  Registered once per process.
class Driver {
 public:
  virtual ~Driver() = default;
  // The part of device names before ':' ("MEM", "SIM", "CUDA"), or for a
  // device of another machine its "@MACHINE".
  virtual const char *prefix() const = 0;
  // Whether it opens the devices of names with this prefix: its own, or
  // for a driver of machines each machine's.
  virtual bool opens_prefix(const std::string &p) const { return p == prefix(); }
  // The key map_peer is asked under: devices of one key map each other.
  virtual const char *key() const { return prefix(); }
  // Opens the device name, or throws std::runtime_error with the reason
  // (RIG_EOPEN).  config is the caller's option string, or empty.
  // start is the value the device's timeline starts after: the driver's
  // word must read it at open.
  virtual std::unique_ptr<DriverDevice> open(const std::string &name,
                                             const std::string &config,
                                             uint64_t start) = 0;
  // Reports each device name it knows: why empty where it can be opened.
  virtual void probe(const std::function<void(const std::string &name,
                                              const std::string &why)> &) {}
};

// Registers a driver for the life of the process; drivers call it from a
// static initialiser (RIG_REGISTER_DRIVER).
void register_driver(Driver *d);

// The host's driver (CPU), defined by drivers/host: the core opens the
// host itself, in slot 0 before any other device, rather than finding its
// driver among the registered ones.
Driver *host_driver();

#define RIG_REGISTER_DRIVER(Type)                          \
  namespace {                                              \
  struct Type##_registration {                             \
    Type##_registration() { ::rig::register_driver(new Type()); } \
  } Type##_registration_instance;                          \
  }

}  // namespace rig
