// A device whose memory is host memory this process addresses and whose
// work runs before submit returns: the host and memory devices.  Their
// facts differ, and the host loads code (host_driver.cpp) where a memory
// device loads none.
#pragma once

#include "host_memory.hpp"
#include "rig_internal/driver.hpp"

namespace rig {

class HostAddressedDevice : public DriverDevice {
 public:
  // facts.word is set here; alignment is the small blocks' alignment.
  HostAddressedDevice(Facts facts, uint64_t start) : facts_(std::move(facts)), word_(start) { facts_.word = &word_; }
  const Facts &facts() const override { return facts_; }
  // The host addresses all of it: there is no Pinned memory, and Mapped
  // falls back to Device.
  Region alloc(Memory m, int64_t n) override {
    return m == Memory::Device ? host_block_alloc(n, static_cast<size_t>(facts_.alignment)) : nullptr;
  }
  // Mapped blocks are pages new from the system; the C library's reuse
  // what was freed.
  bool zeroed(Region r) const override { return static_cast<const HostBlock *>(r)->mapped; }
  void free(Region r) override { host_block_free(static_cast<HostBlock *>(r)); }
  rig_edge_location_t locate(Region r) const override { return host_block_location(static_cast<HostBlock *>(r)); }
  void submit(const rig_edge_work_t &w) override {
    for (uint32_t i = 0; i < w.part_count; i++) run_part_on_host(w.parts[i]);
    word_.store(w.value, std::memory_order_release);
  }
  void sleep(uint64_t, int64_t) override {}
  // Its work ran before each submit returned: none runs now.
  void stop(const std::optional<std::string> &, uint64_t last) override {
    word_.store(last, std::memory_order_release);
  }

 private:
  Facts facts_;
  std::atomic<uint64_t> word_;
};

}  // namespace rig
