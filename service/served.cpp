// The devices rigd serves (served.hpp).
#include "served.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace rigd {

namespace {

// The device that runs the work of the machine's host's proxies (CPU):
// rig's host runs only launches (HOST-04), and a memory device runs copies,
// fills and words on this host, before its submit returns.
constexpr const char *host_work_device = "MEM:host";

// The idle instances a served device keeps for later clients.  Beyond them
// an instance is closed: more than this many clients of one device left at
// once, and an idle instance still holds what its driver made to run work
// (queues, a timeline word).
constexpr size_t max_idle_instances = 64;

// Devices that stand for GPUs in tests, or are rigd's own host: served
// only when named.
bool served_by_default(const std::string &name) {
  for (const char *prefix : {"CPU", "MEM:", "SIM:"})
    if (name.rfind(prefix, 0) == 0) return false;
  return true;
}

std::vector<std::string> default_names() {
  std::vector<std::string> names;
  rig_probe(
      [](const char *name, const char *why, void *context) {
        if (!why && served_by_default(name)) static_cast<std::vector<std::string> *>(context)->push_back(name);
      },
      &names);
  return names;
}

void copy_text(char (&out)[RIG_PROXY_NAME_BYTES], const char *text) {
  std::strncpy(out, text ? text : "", sizeof out - 1);
  out[sizeof out - 1] = '\0';
}

// Word i follows the header's line, a line each (protocol.h).
uint64_t *word_at(const Segment &segment, size_t i) {
  return reinterpret_cast<uint64_t *>(segment.base() + (i + 1) * RIG_PROXY_CACHE_LINE);
}

}  // namespace

ServedDevices::ServedDevices(const std::vector<std::string> &names, int64_t cache_limit, uint32_t shared_rows)
    : cache_limit_(cache_limit), shared_rows_(shared_rows) {
  bool named = !names.empty();
  std::vector<std::string> opening = named ? names : default_names();
  for (const auto &name : opening) {
    if (name == "CPU") continue;  // served below, as every machine has a host
    rig_device_t *d = nullptr;
    if (rig_open(name.c_str(), nullptr, &d) == RIG_OK) {
      devices_.emplace_back(d);
    } else if (named) {
      throw std::runtime_error("cannot open " + name + ": " + rig_last_error());
    }
  }
  if (devices_.empty() && !named) {
    for (const char *name : {"MEM:0", "MEM:1"}) {
      rig_device_t *d = nullptr;
      if (rig_open(name, nullptr, &d) == RIG_OK) devices_.emplace_back(d);
    }
  }
  rig_device_t *host = nullptr;
  if (rig_open(host_work_device, nullptr, &host) != RIG_OK)
    throw std::runtime_error(std::string("cannot open the host's work device: ") + rig_last_error());
  devices_.emplace_back(host);
  for (const auto &owned : devices_) {
    rig_device_t *d = owned.get();
    bool is_host = d == host;
    rig_proxy_device_record r{};
    copy_text(r.name, is_host ? "CPU" : rig_device_name(d));
    copy_text(r.arch, rig_device_arch(is_host ? rig_host() : d));
    r.budget = rig_budget(is_host ? rig_host() : d);
    r.cache_bytes = rig_device_cache_bytes(d);
    r.alignment = rig_device_alignment(d);
    r.flags = is_host ? RIG_PROXY_DEVICE_HOST : 0;
    r.cache_limit = cache_limit;
    records_.push_back(r);
    rig_set_cache_limit(d, cache_limit);
  }
  for (size_t i = 0; i < devices_.size(); ++i)
    for (size_t j = 0; j < devices_.size() && j < 64; ++j)
      if (rig_reaches(devices_[i].get(), devices_[j].get())) records_[i].reaches |= uint64_t{1} << j;
  uint64_t bytes = RIG_PROXY_CACHE_LINE * (1 + devices_.size() + shared_rows_);
  segment_ = std::make_unique<Segment>("rigd-devices", bytes, ClientAccess::read_only);
  rig_proxy_device_segment header{};
  header.segment = {RIG_PROXY_MAGIC_DEVICES, RIG_PROXY_VERSION, bytes};
  header.device_count = static_cast<uint32_t>(devices_.size());
  header.row_count = shared_rows_;
  header.words_offset = RIG_PROXY_CACHE_LINE;
  header.rows_offset = RIG_PROXY_CACHE_LINE * (1 + devices_.size());
  std::memcpy(segment_->base(), &header, sizeof header);
  instances_.resize(devices_.size());
  idle_.resize(devices_.size());
  opened_.resize(devices_.size());
}

ServedDevices::~ServedDevices() {
  waiters_.finish_by(std::chrono::steady_clock::time_point::max());
  releases_.finish_all();
  for (const auto &idle : idle_)
    for (const Idle &i : idle) rig_close(i.device);
}

rig_proxy_shared_row *ServedDevices::shared_row(uint32_t r) const noexcept {
  return reinterpret_cast<rig_proxy_shared_row *>(segment_->base() +
                                                  RIG_PROXY_CACHE_LINE * (1 + devices_.size() + r));
}

void ServedDevices::free_caches() const noexcept {
  for (const auto &d : devices_) rig_free_cache(d.get());
}

Instance::Instance(rig_device_t *device, size_t served, std::string config, bool reusable,
                   const ServedDevices &owner) noexcept
    : release_{device, served, std::move(config), reusable, rig_submitted(device)}, owner_(owner) {}

Instance::~Instance() { owner_.releases_.add(std::move(release_)); }

std::shared_ptr<Instance> ServedDevices::open_instance(size_t i, const std::string &config, bool reusable) const {
  rig_device_t *d = nullptr;
  std::string name;
  {
    std::lock_guard g(instances_mu_);
    auto &idle = idle_[i];
    auto it = std::find_if(idle.begin(), idle.end(), [&](const Idle &x) { return x.config == config; });
    if (it != idle.end()) {
      d = it->device;
      idle.erase(it);
    } else {
      // Appended piece by piece: a chain of + trips a false -Wrestrict of GCC 12.
      name = rig_device_name(devices_[i].get());
      name += '~';
      name += std::to_string(++opened_[i]);
    }
  }
  if (!d) {
    rig_open_options_t options{sizeof options, config.c_str()};
    if (rig_open(name.c_str(), &options, &d) != RIG_OK) return nullptr;
    rig_set_cache_limit(d, cache_limit_);
  }
  auto instance = std::make_shared<Instance>(d, i, config, reusable, *this);
  std::lock_guard g(instances_mu_);
  std::erase_if(instances_[i], [](const std::weak_ptr<Instance> &w) { return w.expired(); });
  instances_[i].push_back(instance);
  return instance;
}

void ServedDevices::take_back(Release &r) const noexcept {
  // The last client's work done, its memory goes back to the driver, so
  // that the next client finds the instance as a new one, holding nothing.
  rig_device_t *d = r.device;
  uint64_t last = rig_submitted(d);
  bool clean = last == r.taken_at || rig_point_wait(rig_point_make(d, last)) == RIG_OK;
  clean = clean && rig_free_cache(d) == RIG_OK && !rig_lost(d);
  // The client's memory on the served device itself, released as the
  // client went, waited for this instance's work: it returns now.
  rig_free_cache(devices_[r.served].get());
  {
    std::lock_guard g(instances_mu_);
    if (clean && r.reusable && idle_[r.served].size() < max_idle_instances) {
      idle_[r.served].push_back({d, std::move(r.config)});
      return;
    }
  }
  rig_close(d);
}

std::vector<std::string> ServedDevices::busy() const {
  std::vector<std::string> names = releases_.waiting();
  // Named outside the lock: the last hold of an instance takes it back.
  std::vector<std::shared_ptr<Instance>> live;
  {
    std::lock_guard g(instances_mu_);
    for (const auto &of_device : instances_)
      for (const std::weak_ptr<Instance> &w : of_device)
        if (auto instance = w.lock()) live.push_back(std::move(instance));
  }
  for (const auto &instance : live) names.push_back(rig_device_name(instance->device()));
  return names;
}

rig_status_t ServedDevices::create(const Instance &instance, int64_t n, rig_memory_t kind, rig_buffer_t **out,
                                   bool *served_own) const {
  rig_device_t *served = devices_[instance.served()].get(), *on = instance.device();
  *out = nullptr;
  *served_own = false;
  if (rig_reaches(on, served)) {
    rig_buffer_t *own = nullptr;
    rig_status_t status = rig_buffer_create(served, n, kind, &own);
    if (status != RIG_OK) return status;
    status = rig_buffer_borrow(on, own, out);
    rig_buffer_unref(own);
    *served_own = *out != nullptr;
    // A borrow that cannot map (RIG_OK, no buffer) falls back to the
    // instance's memory.
    if (status != RIG_OK || *out) return status;
  }
  return rig_buffer_create(on, n, kind, out);
}

bool ServedDevices::has_room(const Instance &instance, int64_t n) const noexcept {
  rig_device_t *served = devices_[instance.served()].get();
  // The instance's own memory: its reclamation waits for its client's work
  // alone.
  if (!rig_reaches(instance.device(), served)) return true;
  // By the device's alignment, as rig charges whole words.
  int64_t alignment = std::max<int64_t>(rig_device_alignment(served), 1);
  int64_t charged = n + (alignment - n % alignment) % alignment;
  int64_t budget = rig_budget(served);
  return charged >= n && charged <= budget && rig_allocated(served) <= budget - charged;
}

bool ServedDevices::Creating::answer(std::chrono::milliseconds wait, rig_status_t *status, rig_buffer_t **out,
                                     bool *served_own) {
  std::unique_lock g(mu_);
  if (!done_.wait_for(g, wait, [&] { return finished_; })) return false;
  *status = status_;
  *out = std::exchange(buffer_, nullptr);
  *served_own = served_own_;
  return true;
}

void ServedDevices::Creating::abandon() noexcept {
  rig_buffer_t *made;
  {
    std::lock_guard g(mu_);
    abandoned_ = true;
    made = std::exchange(buffer_, nullptr);
  }
  rig_buffer_unref(made);
}

bool ServedDevices::Creating::finish(rig_status_t status, rig_buffer_t *b, bool served_own) noexcept {
  {
    std::lock_guard g(mu_);
    if (!abandoned_) {
      status_ = status;
      buffer_ = b;
      served_own_ = served_own;
      finished_ = true;
      done_.notify_all();
      return true;
    }
  }
  rig_buffer_unref(b);
  return false;
}

std::shared_ptr<ServedDevices::Creating> ServedDevices::create_waiting(std::shared_ptr<Instance> instance, int64_t n,
                                                                       rig_memory_t kind) const {
  auto creating = std::make_shared<Creating>();
  waiters_.run([this, creating, instance = std::move(instance), n, kind]() mutable {
    rig_buffer_t *b = nullptr;
    bool served_own = false;
    rig_status_t status = create(*instance, n, kind, &b, &served_own);
    // Memory made for a client gone returns to the drivers, as its session's
    // end returns what it held (Session::run).
    if (!creating->finish(status, b, served_own)) free_caches();
    // The instance goes back (releases_) from here, before the thread ends.
    instance.reset();
  });
  return creating;
}

int64_t ServedDevices::allocated(size_t i) const {
  // Held outside the lock: the last hold of an instance takes it back,
  // which takes the lock.
  std::vector<std::shared_ptr<Instance>> live;
  {
    std::lock_guard g(instances_mu_);
    for (const std::weak_ptr<Instance> &w : instances_[i])
      if (auto instance = w.lock()) live.push_back(std::move(instance));
  }
  int64_t bytes = rig_allocated(devices_[i].get());
  for (const auto &instance : live) bytes += rig_allocated(instance->device());
  std::lock_guard g(instances_mu_);
  for (const Idle &idle : idle_[i]) bytes += rig_allocated(idle.device);
  return bytes;
}

size_t ServedDevices::instances(size_t i) const {
  std::lock_guard g(instances_mu_);
  size_t n = idle_[i].size();
  for (const std::weak_ptr<Instance> &w : instances_[i]) n += !w.expired();
  return n;
}

void ServedDevices::publish_progress(size_t i) const noexcept {
  std::atomic_ref<uint64_t>(*word_at(*segment_, i)).fetch_add(1, std::memory_order_release);
}

}  // namespace rigd
