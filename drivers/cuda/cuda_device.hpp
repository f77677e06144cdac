// A CUDA device (CUDA:n) opened through the Driver API.
//
// Work: each device has a compute stream ("COMPUTE:0": launches, words)
// and a copy-engine stream ("COPY:0": copies and fills), both of its
// context: the GPU's primary context, or one of rig's own that the devices
// opened under one name share (cuda_context.hpp).  submit() enqueues a value's work at once (commit_every
// is 1, and commit does nothing): the value's waits on other devices'
// words (cuStreamWaitValue64), its parts on their streams, the after lists
// across the two streams as events, and last the word's write
// (cuStreamWriteValue64 on the compute stream, once the copy stream's part
// of the value has joined it).  A value's work on either stream starts
// once every lower value's is done on both (device order).
//
// Timeline word: a page of host memory of the driver's own, registered
// with CUDA and written by the GPU, so signaled() is a read of memory.  It
// is not cuMemHostAlloc memory, which dies with its context: a context
// that a fault broke is released at the stop, while rig reads the word
// until it frees it.
//
// Submit allocates nothing: room() answers RIG_GROW where the events, the
// scratch of the after lists or the mapping of another device's word are
// missing, and grow() makes them.  The page of a word another device's
// queue waits on is registered with CUDA once, for the process.
//
// Faults: an error that breaks the context (a kernel's trap) is recorded,
// and every later sleep and submit raises it as a Fault with CUDA's
// message.  stop() then releases the broken context, so a later open of
// the device (or of its context's name) gets a new one; a sound primary
// context stays retained for the memory rig frees after the stop, and a
// sound context of rig's own is let go of once the device's work is done,
// destroyed with its memory when no other device holds it.
#pragma once

#include "cuda_api.h"
#include "cuda_context.hpp"
#include "rig_internal/driver.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rig::cuda {

// A region: memory the device's work addresses at address (one address
// space for the host and every GPU: unified addressing).
struct CudaRegion {
  enum Kind { Device, Pinned, HostPages, Peer, Word } kind;
  cu::DevicePtr address;
  void *host;  // Pinned, HostPages, Word: the host's address of the bytes
  size_t bytes;
};

// What a launch of one function needs: made once by entry().
struct CudaEntry {
  cu::Function function;
  int64_t max_threads;
  int64_t max_dynamic_shared;  // bytes a launch may ask
  int64_t param_bytes;         // -1 where the driver does not say
};

// A loaded module and the entries made of it.
struct CudaImage {
  cu::Module module;
  std::mutex mu;
  std::map<std::string, std::unique_ptr<CudaEntry>> entries;
};

// The device's limits, read at open.
struct CudaLimits {
  uint64_t grid[3], block[3];
  uint64_t threads;        // per block
  uint64_t shared_optin;   // bytes of shared memory a block may opt in to
  uint64_t pitch;          // of a 2D copy
  uint64_t param_bytes;    // of a launch's parameters
};

class CudaDevice final : public DriverDevice {
 public:
  // Opens the device of ordinal, one of count, its timeline starting after
  // start; hang_ms overrides the hang bound (0: none).  Throws
  // std::runtime_error with the reason.
  // context: the name of the context of rig's own it runs in, or empty
  // for the GPU's primary context.
  CudaDevice(const cu::Api &api, int ordinal, int count, uint64_t start, std::optional<int64_t> hang_ms,
             const std::string &context);
  ~CudaDevice() override;

  const Facts &facts() const override { return facts_; }
  int ordinal() const { return ordinal_; }

  // Memory (cuda_device.cpp).
  Region alloc(Memory m, int64_t n) override;
  void free(Region r) override;
  rig_edge_location_t locate(Region r) const override;
  bool peer(const DriverDevice &other) const override;
  Region map_peer(DriverDevice &other, Region r) override;
  Region map_host(void *p, int64_t n) override;
  std::variant<Dma, std::string> dma(Region r, const std::string &fn) override;

  // Code (cuda_code.cpp).
  std::variant<Image, std::string> image(const void *bytes, size_t n) override;
  EntryAnswer entry(Image image, const std::string &name) override;
  void unload(Image image) override;

  // Queues (cuda_queues.cpp).
  rig_edge_room_t room(const rig_edge_work_t &w) override;
  std::optional<int64_t> grow() override;
  void submit(const rig_edge_work_t &w) override;

  // Timeline and stop (cuda_device.cpp).
  void sleep(uint64_t seen, int64_t still_ms) override;
  void stop(const std::optional<std::string> &fault, uint64_t last) override;

 private:
  // Throws Fault with "what: CUDA's error", first recording it where the
  // error broke the context, so that every later sleep raises it too.
  [[noreturn]] void fail(const char *what, cu::Result r);
  void check(cu::Result r, const char *what) {
    if (r != cu::kSuccess) fail(what, r);
  }
  // Throws the recorded fault, if any.
  void raise_recorded_fault();
  // A CUDA error of the context's work, read without waiting: kSuccess or
  // kErrorNotReady while it is sound.
  cu::Result work_error();
  cu::CurrentContext current() const { return cu::CurrentContext(api_, context_->handle()); }
  cu::Stream stream_of(uint32_t queue) const { return queue == kCopyQueue ? copy_ : compute_; }

  // Submit's steps (cuda_queues.cpp).
  // True iff the launch is within the device's and its function's bounds.
  bool fits(const rig_edge_launch_t &l) const;
  void enqueue(const rig_edge_part_t &part, cu::Stream stream);
  void enqueue_words(const rig_edge_words_t &words, cu::Stream stream);
  cu::DevicePtr mapped_word(const volatile uint64_t *word) const;
  // Moves what grow() made into the queues (room's first step).
  void adopt_growth();
  // Destroys the streams and events, which CUDA keeps until their work is
  // done; and the word, once rig frees it.
  void release_queues();
  // Makes the word, reading start (the open's step).
  void make_word(uint64_t start);
  void release_word();

  static constexpr uint32_t kComputeQueue = 0, kCopyQueue = 1;

  const cu::Api &api_;
  const int ordinal_;
  cu::Device device_ = 0;
  std::unique_ptr<cu::ContextHold> context_;
  Facts facts_;
  CudaLimits limits_{};
  bool dma_buf_ = false;  // exports dma-bufs of its memory
  std::vector<char> can_access_peer_;  // by ordinal, learned at open
  std::mutex peers_mu_;
  std::vector<char> peer_enabled_;  // cuCtxEnablePeerAccess made, by ordinal

  // The timeline word (see the top of this file).
  std::atomic<uint64_t> *word_ = nullptr;
  CudaRegion *word_region_ = nullptr;

  // submit and stop, which may race at a close, take it.
  std::mutex queue_mu_;
  cu::Stream compute_ = nullptr, copy_ = nullptr;
  // The compute stream holds work (a launch, words, a wait) that the copy
  // stream has not been made to follow: a value with copies must first
  // join it.  Word writes alone are no work to follow.
  bool compute_ahead_ = false;

  // What submit uses, read and changed only by room and submit, which rig
  // calls one at a time per device.
  std::vector<cu::Event> events_;
  std::vector<int32_t> event_of_;  // per part of a submission: its event
  struct WordPage {
    uintptr_t page;
    cu::DevicePtr device;
  };
  std::vector<WordPage> word_pages_;

  // What grow() made, for a later room to adopt by a swap, which allocates
  // nothing: every event and word page made so far, and scratch.
  std::mutex grown_mu_;
  std::atomic<bool> grown_{false};
  std::vector<cu::Event> all_events_, grown_events_;
  std::vector<WordPage> all_pages_, grown_pages_;
  std::vector<int32_t> grown_scratch_;

  std::mutex fault_mu_;
  std::string fault_;  // the fault that broke the context, once seen
  std::atomic<bool> faulted_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace rig::cuda
