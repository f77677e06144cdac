// A proxy: a device of this process that stands for a device rigd serves
// (rig-remote-proxy.txt, with rigd as the agent and the rings for its
// link).  rigd runs its work; the proxy's timeline word is a word of the
// client's completion segment, which rigd raises as values are done.
#pragma once

#include "../common/flight_log.hpp"
#include "rig_internal/driver.hpp"
#include "rig_internal/locks.hpp"
#include "rigd_link.hpp"

#include <atomic>
#include <optional>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rig::proxy {

// What the regions over one allocation of rigd's share (the region it was
// allocated or imported as, and its mappings): its row of rigd's
// shared-buffer table once exported or as an import, where other
// processes' work on it counts, and the handles of those regions, whose
// hand-overs then return once rigd has taken them.
struct RegionShare {
  std::atomic<int64_t> row{-1};
  Mutex mu;
  std::vector<uint64_t> handles;  // under mu; row is set under mu too
};

// A region of a proxy: memory rigd holds by handle (an alloc's, a peer
// mapping's or an import's), or a host arena rigd maps by handle, the
// region starting offset bytes into it.  Pinned memory is a shared host
// block of the proxy's own (host), which rigd maps as an arena.
struct ProxyRegion {
  uint64_t handle;
  uint64_t offset;
  void *host = nullptr;
  std::shared_ptr<RegionShare> share = std::make_shared<RegionShare>();
};

class ProxyDevice : public DriverDevice {
 public:
  // The proxy of served device `served` on link, opened by rigd as proxy
  // `index`, its values starting after start.
  ProxyDevice(std::shared_ptr<RigdLink> link, uint32_t served, uint32_t index, uint64_t start);

  const Facts &facts() const override { return facts_; }
  Region alloc(Memory m, int64_t n) override;
  void free(Region r) override;
  rig_edge_location_t locate(Region r) const override;
  bool peer(const DriverDevice &other) const override;
  Region map_peer(DriverDevice &owner, Region r) override;
  Region map_host(void *p, int64_t n) override;
  bool queue_waits_on(const DriverDevice &other) const override;
  // Code: rigd loads the image on the client's instance of the served
  // device, and answers each function's entry (protocol.h's image
  // requests); a launch's refs go to rigd, which patches them
  // (facts().launch_refs_by_location).
  std::variant<Image, std::string> image(const void *bytes, size_t n) override;
  void prepare(Image image, const std::string &name) override;
  EntryAnswer entry(Image image, const std::string &name) override;
  void unload(Image image) override;
  rig_edge_room_t room(const rig_edge_work_t &w) override;
  void submit(const rig_edge_work_t &w) override;
  uint64_t signaled() override;
  void sleep(uint64_t seen, int64_t still_ms) override;
  void stop(const std::optional<std::string> &fault, uint64_t last) override;
  // The link's reason once it is lost: every proxy of the link is lost
  // with it (PROXY-07), used since or not.
  std::optional<std::string> lost_outside_calls() override;
  std::optional<uint64_t> others_mark(Region r) override;
  bool others_done(Region r, uint64_t mark) override;

  // Why rigd refused this thread's last alloc, export, import or export
  // descriptor where it said why (a limit of rigd's, rigd(8)); "" else.
  std::string refusal() override;

  // Exports and imports through rigd (DriverDevice::exports).  Each throws
  // Fault once the link is lost.  Once r is exported, a hand-over naming r
  // returns once rigd has taken it, so that another process's later submit
  // follows it (rig/service.h).
  bool exports() const override { return true; }
  std::optional<uint64_t> export_bytes(Region r, uint64_t offset, uint64_t length) override;
  std::optional<std::pair<Region, int64_t>> import_bytes(uint64_t token) override;
  int export_fd(uint64_t token) override;
  uint64_t token_of_fd(int fd) override;

  const RigdLink &link() const noexcept { return *link_; }

 private:
  // rigd's answer to a request on this proxy; throws Fault with the link's
  // reason once it is lost.
  rig_proxy_completion ask(uint16_t opcode, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0);
  // Why rigd failed the proxy's work, as the word's why says.
  std::string failure();
  // rigd's answer to the image request opcode of image id, its payload a
  // rig_proxy_code then tail; why gets what rigd wrote in the code where it
  // refuses.  Throws as ask.
  rig_proxy_completion ask_code(uint16_t opcode, uint64_t id, std::span<const std::byte> tail, std::string *why,
                                uint64_t a1 = 0);
  // rigd's answer to e on this proxy, its payload a rig_proxy_code then
  // tail; *text gets what rigd wrote in the code where it refuses.
  rig_proxy_completion ask_with_code(rig_proxy_entry e, std::span<const std::byte> tail, std::string *text);
  // ask's answer, with a rig_proxy_code for rigd's reason of a refusal,
  // which refusal() then answers.
  rig_proxy_completion ask_refusable(uint16_t opcode, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0);
  // Builds w's hand-over payload (protocol.h's rig_proxy_handover) in
  // payload_ and answers it; *moved gets the bytes its parts move,
  // *any_shared whether a part names memory other processes share.
  std::span<const std::byte> put_handover(const rig_edge_work_t &w, uint64_t *moved, bool *any_shared);
  // Writes the launch's slots at at (protocol.h) and answers their end;
  // *shared is set where a ref names memory other processes share.
  std::byte *put_launch(const rig_edge_launch_t &l, std::byte *at, bool *shared);
  // The handle of a sealed memfd of rigd's holding the n bytes, for an image
  // past the payload arena; 0 where rigd refuses it.
  uint64_t image_arena(const void *bytes, size_t n);
  Region alloc_pinned(int64_t n);
  uint64_t word_value() const noexcept;
  bool word_failed() const noexcept;
  // Whether the served device is the machine's host, whose proxies also
  // run words parts.
  bool is_host() const noexcept;

  std::shared_ptr<RigdLink> link_;
  uint32_t served_;
  uint32_t index_;
  const rig_proxy_word *word_;
  Facts facts_;
  std::vector<std::byte> payload_;  // submit's hand-over, built in place
  // room's and submit's alone, which rig calls for one device one at a
  // time, under its submit lock: they take no lock of their own.
  FlightLog in_flight_;
  std::atomic<uint64_t> accepted_;  // the last value handed over
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> last_{0};  // stop's last value
};

}  // namespace rig::proxy
