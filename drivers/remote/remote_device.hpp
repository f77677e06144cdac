// A proxy of a device another machine's agent serves
// (rig-remote-proxy.txt): each call a message on the machine's link
// (remote_link.hpp), the agent running the work and the link raising the
// proxy's timeline word as the agent reports.
#pragma once

#include "../common/flight_log.hpp"
#include "remote_link.hpp"
#include "rig_internal/driver.hpp"

#include <rig/service.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace rig::remote {

class RemoteDevice : public DriverDevice {
 public:
  // The proxy on link of the agent's device account, its values starting
  // after start; throws std::invalid_argument as RemoteLink::enroll.
  RemoteDevice(std::shared_ptr<RemoteLink> link, const net::MachineAccount &account, uint64_t start);
  ~RemoteDevice() override;

  const Facts &facts() const override { return facts_; }
  Region alloc(Memory m, int64_t n) override;
  std::string refusal() override;
  void free(Region r) override;
  rig_edge_location_t locate(Region r) const override;
  bool peer(const DriverDevice &other) const override;
  Region map_peer(DriverDevice &owner, Region r) override;
  std::variant<Dma, std::string> dma(Region, const std::string &) override;
  std::variant<Image, std::string> image(const void *bytes, size_t n) override;
  void prepare(Image image, const std::string &name) override;
  EntryAnswer entry(Image image, const std::string &name) override;
  void unload(Image image) override;
  rig_edge_room_t room(const rig_edge_work_t &w) override;
  void submit(const rig_edge_work_t &w) override;
  bool queue_waits_on(const DriverDevice &other) const override;
  uint64_t signaled() override { return timeline_->word.load(std::memory_order_acquire); }
  void sleep(uint64_t seen, int64_t still_ms) override;
  std::optional<std::string> lost_outside_calls() override { return link_->failure(); }
  void stop(const std::optional<std::string> &fault, uint64_t last) override;

 private:
  // The machine's host, whose proxies also run words parts.
  bool is_host() const noexcept { return account_ == 0; }

  std::shared_ptr<RemoteLink> link_;
  uint32_t account_;
  // Before timeline_, so that enrolling is the make's last step that may
  // throw: a make that fails leaves no proxy registered (PROXY-16).
  Facts facts_;
  // The capability record (RIG_MACHINE_DEVICE) and the texts it names.
  std::string name_, arch_;
  rig_machine_device_t record_{};
  std::shared_ptr<Timeline> timeline_;
  // room's and submit's alone, which rig calls for one device one at a
  // time: the values in flight and the last with a copy into this
  // process's memory (PROXY-49).
  FlightLog in_flight_;
  uint64_t last_get_ = 0;
};

}  // namespace rig::remote
