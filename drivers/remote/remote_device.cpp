// A proxy of another machine's device (remote_device.hpp): its facts,
// memory, code and timeline; its work is remote_work.cpp's.
#include "remote_device.hpp"

#include "remote_objects.hpp"

#include <sys/mman.h>

#include <algorithm>

namespace rig::remote {

namespace wire = net::wire;

namespace {

// The facts table of rig-remote-proxy.txt (PROXY-18..31); the word is the
// proxy's timeline's, once enrolled.
Facts facts_of(const net::MachineAccount &a) {
  Facts f;
  f.arch = a.arch;
  f.budget = static_cast<int64_t>(std::min<uint64_t>(a.budget, INT64_MAX));
  if (a.cache_bytes > 0) f.cache_bytes = static_cast<int64_t>(std::min<uint64_t>(a.cache_bytes, INT64_MAX));
  f.queues = {"COMPUTE:0", "COPY:0"};
  f.copy_engine = 1;
  f.may_block = true;
  f.copies_host_by_address = true;
  // The agent places the addresses of a launch's memory, which is its.
  f.launch_refs_by_location = true;
  // The link's receiving side raises the word, which rig reads through
  // signaled(); other proxies of the link wait on it in their hand-overs.
  f.own_word = true;
  return f;
}

// Why the agent refused this thread's last alloc: refusal()'s answer.
thread_local std::string refused_here;

}  // namespace

RemoteDevice::RemoteDevice(std::shared_ptr<RemoteLink> link, const net::MachineAccount &account, uint64_t start)
    : link_(std::move(link)),
      account_(account.id),
      facts_(facts_of(account)),
      name_(account.name),
      arch_(account.arch),
      timeline_(link_->enroll(account.id, start)) {
  facts_.word = &timeline_->word;
  record_.size = sizeof record_;
  record_.id = account.id;
  record_.name = name_.c_str();
  record_.arch = arch_.c_str();
  record_.budget = facts_.budget;
  record_.cache_bytes = facts_.cache_bytes.value_or(0);
  record_.address = link_->address().c_str();
  facts_.capabilities = {{RIG_MACHINE_DEVICE, &record_}};
}

RemoteDevice::~RemoteDevice() { link_->retire(timeline_); }

Region RemoteDevice::alloc(Memory m, int64_t n) {
  // The host addresses no memory of another machine: Mapped falls back to
  // Pinned, pages of this process's whose bytes copies carry.
  if (m == Memory::Mapped) return nullptr;
  if (m == Memory::Pinned) {
    auto bytes = static_cast<size_t>(n);
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    return new RemoteRegion{0, p, bytes};
  }
  uint64_t id = link_->fresh();
  Reply r = link_->request(account_, id, wire::Alloc{static_cast<uint32_t>(m), static_cast<uint64_t>(n)});
  refused_here = r.status == RIG_OK ? std::string() : link_->address() + ": " + r.why;
  if (r.status != RIG_OK) return nullptr;
  return new RemoteRegion{id};
}

std::string RemoteDevice::refusal() { return refused_here; }

void RemoteDevice::free(Region r) {
  std::unique_ptr<RemoteRegion> region(region_of(r));
  if (region->host) {
    munmap(region->host, region->host_bytes);
    return;
  }
  // The agent releases the object once the work handed over before no
  // longer needs it (PROXY-61).
  link_->release(wire::Released::Object, region->id);
}

rig_edge_location_t RemoteDevice::locate(Region r) const {
  return rig_edge_location_t{region_of(r)->host, region_of(r)->id, 0};
}

bool RemoteDevice::peer(const DriverDevice &other) const {
  auto *proxy = dynamic_cast<const RemoteDevice *>(&other);
  if (!proxy || proxy->link_ != link_) return false;
  // The account of d lists the ids whose own memory its work reaches
  // (wire::Account, PROXY-65).
  const net::MachineAccount *mine = link_->account(account_);
  return mine && std::find(mine->reach.begin(), mine->reach.end(), proxy->account_) != mine->reach.end();
}

bool RemoteDevice::queue_waits_on(const DriverDevice &other) const {
  auto *proxy = dynamic_cast<const RemoteDevice *>(&other);
  return proxy && proxy->link_ == link_;
}

Region RemoteDevice::map_peer(DriverDevice &owner, Region r) {
  auto *proxy = dynamic_cast<RemoteDevice *>(&owner);
  if (!proxy || proxy->link_ != link_ || region_of(r)->host) return nullptr;
  uint64_t id = link_->fresh();
  Reply a = link_->request(account_, id, wire::MapPeer{region_of(r)->id});
  if (a.status != RIG_OK) return nullptr;
  return new RemoteRegion{id};
}

std::variant<DriverDevice::Dma, std::string> RemoteDevice::dma(Region, const std::string &) {
  return "the memory is another machine's (" + link_->address() + "), which its agent describes there";
}

std::variant<DriverDevice::Image, std::string> RemoteDevice::image(const void *bytes, size_t n) {
  uint64_t id = link_->fresh();
  Reply a = link_->request(account_, id, wire::Image{{{static_cast<const uint8_t *>(bytes), n}}});
  if (a.status != RIG_OK) return link_->address() + ": " + a.why;
  return static_cast<Image>(new RemoteImage{id, {}, {}});
}

void RemoteDevice::prepare(Image image, const std::string &name) {
  RemoteImage *i = image_of(image);
  {
    Guard g(i->mu);
    if (i->functions.count(name)) return;
  }
  link_->request_unanswered(account_, link_->fresh(), wire::Prepare{{i->id, name}});
}

DriverDevice::EntryAnswer RemoteDevice::entry(Image image, const std::string &name) {
  RemoteImage *i = image_of(image);
  {
    Guard g(i->mu);
    auto it = i->functions.find(name);
    if (it != i->functions.end()) return Entry{it->second.get(), 0, it->second->max_threads};
  }
  uint64_t id = link_->fresh();
  Reply a = link_->request(account_, id, wire::Entry{{i->id, name}});
  if (a.status == RIG_ENOMEM) return NoMemory{static_cast<int64_t>(std::min<uint64_t>(a.detail, INT64_MAX))};
  if (a.status != RIG_OK) return Absent{};
  // ENTRY's answer, as a local client's: detail the most threads of a
  // group (0: no bound).
  int64_t max_threads = a.detail ? static_cast<int64_t>(std::min<uint64_t>(a.detail, INT64_MAX)) : INT64_MAX;
  Guard g(i->mu);
  std::unique_ptr<RemoteFunction> &f = i->functions[name];
  if (!f) f = std::make_unique<RemoteFunction>(RemoteFunction{i->id, id, max_threads});
  return Entry{f.get(), 0, f->max_threads};
}

void RemoteDevice::unload(Image image) {
  std::unique_ptr<RemoteImage> i(image_of(image));
  link_->release(wire::Released::Image, i->id);
}

void RemoteDevice::sleep(uint64_t seen, int64_t still_ms) { link_->sleep(*timeline_, seen, still_ms); }

void RemoteDevice::stop(const std::optional<std::string> &, uint64_t last) { link_->stop(*timeline_, last); }

}  // namespace rig::remote
