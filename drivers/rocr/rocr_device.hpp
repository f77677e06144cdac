// AMD GPUs through ROCr (HSA): the devices AMD:n, n the GPU agent's place
// in hsa_iterate_agents order.  The choices the HSA interface leaves open:
//
// Timeline.  The word is an HSA interrupt signal of the device's own
// (facts: own_word), which holds kTop - word: the last packet of each
// value is a barrier-AND packet whose completion decrements the signal by
// one, so the word rises by one as each value completes, in order, since
// that packet has the barrier bit and waits for every earlier packet.
// signaled() loads the signal with acquire order; sleep() waits on it.
//
// Queues.  COMPUTE:0 is one AQL queue: kernel dispatch packets, each with
// the barrier bit, so launches run in the order of the parts.  COPY:0, the
// copy engine, is hsa_amd_memory_async_copy, whose commands run on the
// GPU's DMA engines (or ROCr's blit kernels) ordered only by the signals
// each waits for.  Every command of the copy engine waits for the one
// before it, so both engines are chains, and a part follows another
// through one signal: a barrier-AND packet before a launch waits for the
// last copy command it must follow; a copy command waits for the last
// dispatch it must follow.  A value's copy commands wait for a barrier
// packet at the value's head (its gate), which completes once every
// earlier value's work has, and the value's last packet waits for its
// last copy command: device order.
//
// Fills and words use no kernel.  A fill copies a 256-byte pattern of the
// byte from host memory into the first bytes, then doubles what it wrote
// by copies of the destination into itself: 1 + log2(n / 256) commands.
// A words part writes each word by an 8-byte copy from host memory that
// holds its value.  hsa_amd_memory_fill is not used: it blocks the host
// until done and orders after nothing.
//
// Launches.  A dispatch's kernel arguments are the launch's parameters,
// then zeros up to the kernel's kernarg segment size: arguments the
// compiler adds (code object v5's hidden ones, which HIP's blockDim reads)
// read as zero, so kernels for rig take what they need as parameters.
//
// Copy agents.  ROCr picks a copy's engine from the agents of its two
// sides; the device keeps which of its regions are host memory (Pinned,
// locked or allowed host pages, its own rings) and names the CPU agent for
// those and its GPU for the rest (its memory, a peer's), so that its GPU
// always copies.
//
// Waits.  queue_waits is false: rig waits on the host for other devices'
// points.  A queue wait (rig_edge_wait_t) names another device's raw
// 64-bit word in memory, which no AQL packet or DMA command waits on (they
// wait on signals), so the host waits.
//
// Bounds (room).  A submission takes AQL packets, signals and host memory
// for kernel arguments and words' values from rings made at open, which
// its value gives back once the word passes it: room answers RIG_LATER
// while they are short and RIG_NEVER for work larger than the rings, or
// than kMaxCopyCommands commands of the copy engine.  submit allocates
// nothing but where a submission is larger than every earlier one.
//
// Stop.  The queue is destroyed, which ends its packets; the gates and
// dispatch signals that copy commands wait for are set to zero, so that
// no command waits for good, and once the copy engine has finished the
// commands it holds, which may still read or write memory, the word is
// set to the last value: at once where none is outstanding, else by a
// thread of the driver.
//
// Faults.  A queue error (ROCr's callback of the queue) and a memory
// fault of the GPU (ROCr's system event handler) are kept as the device's
// fault, which sleep and submit raise; the fault also wakes a sleep.  A
// memory fault of a GPU no open device watches keeps ROCr's default: it
// is reported and the process aborts.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "hsa_runtime.hpp"
#include "rig_internal/driver.hpp"
#include "rings.hpp"

namespace rig::rocr {

// The value the timeline signal holds for a word of 0: far above every
// value of a timeline (2^47), so the signal stays positive.
constexpr int64_t kTop = int64_t{1} << 62;
// The most commands of the copy engine one value places.
constexpr uint64_t kMaxCopyCommands = 4096;
// Bytes of each byte value's pattern, which a fill copies first.
constexpr uint64_t kPatternBytes = 256;

// What a launch of a kernel needs (entry); kept by its image.
struct Kernel {
  uint64_t object = 0;
  uint32_t kernarg_bytes = 0, kernarg_align = 16, group_bytes = 0, private_bytes = 0;
};

// The memory a region is, so that free undoes what made it.
enum class RegionKind {
  Device,     // coarse-grained pool memory of the GPU
  Pinned,     // fine-grained host pool memory, the GPU allowed
  HostLock,   // host pages locked for the GPU (map_host)
  HostGrant,  // another HSA allocation of host memory the GPU was allowed
  PeerMap,    // another GPU's Device memory the GPU was allowed (map_peer)
  Word,       // the timeline: the engine itself
};

struct RocrRegion {
  RegionKind kind;
  void *address;  // where the GPU's work addresses it
  void *host;     // the host address locked (HostLock)
  uint64_t bytes;
};

// Which addresses are host memory, for the agents of a copy command.
class AddressBook {
 public:
  void add(const void *start, uint64_t bytes, bool host);
  void remove(const void *start);
  // True iff address lies in host memory the book holds.  GPU memory, the
  // device's or a peer's, and addresses it does not hold are false: the
  // device's own GPU copies them.
  bool is_host(const void *address) const;

 private:
  mutable std::mutex mu_;
  std::map<uintptr_t, std::pair<uintptr_t, bool>> ranges_;  // start: end, host
};

// Who decrements a signal of the ring: an AQL packet (a gate or a
// dispatch) or commands of the copy engine.  A stop releases the first
// kind and waits for the second.
enum class SignalRole : uint8_t { Gate, Copy };

// A command of the copy engine, recorded while a value's AQL packets are
// written and issued once they are published, so that the engine never
// holds a command that waits for a packet not yet in the queue.
struct CopyCommand {
  void *dst;
  const void *src;
  uint64_t bytes;
  hsa_signal_t deps[2];
  uint32_t dep_count;
  hsa_signal_t done;
};

// A value submitted and not yet passed by the word: what it gives back.
struct InFlight {
  uint64_t value, signal_end, host_end;
};

// A completed-work frontier: the last signal of each engine that must be
// done (-1: none), as absolute positions in the signal ring.
struct Frontier {
  int64_t aql = -1, copies = -1;
};

// What the device shares with ROCr's callbacks and with a stop's waiter.
struct Engine final : FaultSink {
  // The device's queue, signals and host memory, its word reading start.
  Engine(const HsaRuntime &runtime, const GpuAgent &gpu, const AddressBook &book, uint64_t start);
  ~Engine() override;
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  void report(const std::string &why) override;  // FaultSink: keeps the first
  const std::string *fault() const { return fault_.load(std::memory_order_acquire); }
  uint64_t word() const;

  const HsaRuntime &rt;
  const HsaApi &api;
  const GpuAgent gpu;
  uint32_t max_group_threads = 1024;
  hsa_queue_t *queue = nullptr;
  hsa_signal_t timeline{}, wake{};
  std::vector<hsa_signal_t> signals;
  std::vector<SignalRole> roles;
  SlotRing signal_ring{4096};
  ByteRing host_ring{uint64_t{1} << 20};
  char *host_memory = nullptr;  // the host ring's bytes, then the patterns (kernarg pool)
  uint8_t *patterns = nullptr;  // 256 patterns of kPatternBytes
  uint64_t host_bytes = 0;
  std::vector<InFlight> in_flight;
  SlotRing flight_ring{4096};
  const AddressBook *book = nullptr;  // the device's

  // Serialises room, submit and stop, which rig may run on two threads.
  std::mutex mu;
  bool stopped = false;
  // Reused by room and submit, so that they allocate only past the
  // largest submission so far.
  std::vector<Frontier> frontiers;
  std::vector<CopyCommand> commands;

 private:
  void build(uint64_t start);
  void release();
  std::atomic<const std::string *> fault_{nullptr};
};

// The work of one value: room's check and submit's encoding (rocr_work.cpp).
rig_edge_room_t room_for(Engine &e, const rig_edge_work_t &w);
void submit_to(Engine &e, const rig_edge_work_t &w);
// Gives back what values up to the word took; with e.mu held.
void retire(Engine &e);

class RocrDevice final : public DriverDevice {
 public:
  RocrDevice(const HsaRuntime &runtime, size_t index, const std::string &config, uint64_t start);

  const Facts &facts() const override { return facts_; }

  Region alloc(Memory m, int64_t n) override;
  void free(Region r) override;
  rig_edge_location_t locate(Region r) const override;
  bool peer(const DriverDevice &other) const override;
  Region map_peer(DriverDevice &other, Region r) override;
  Region map_host(void *p, int64_t n) override;

  std::variant<Image, std::string> image(const void *bytes, size_t n) override;
  EntryAnswer entry(Image image, const std::string &name) override;
  void unload(Image image) override;

  rig_edge_room_t room(const rig_edge_work_t &w) override { return room_for(*engine_, w); }
  void submit(const rig_edge_work_t &w) override { submit_to(*engine_, w); }
  uint64_t signaled() override { return engine_->word(); }
  void sleep(uint64_t seen, int64_t still_ms) override;
  void stop(const std::optional<std::string> &fault, uint64_t last) override;

 private:
  const HsaRuntime &rt_;
  std::shared_ptr<Engine> engine_;
  AddressBook book_;
  uint64_t agent_ = 0;           // the GPU agent's handle
  std::vector<uint64_t> peers_;  // handles of the GPU agents whose Device memory it may map
  int64_t max_threads_ = 1024;
  RocrRegion word_region_{RegionKind::Word, nullptr, nullptr, 0};
  Facts facts_;
};

}  // namespace rig::rocr
