// The requests of a client's submission ring (requests.hpp).
#include "requests.hpp"

#include "handover.hpp"
#include "refusal_log.hpp"
#include "test_knobs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <system_error>

namespace rigd {

Requests::~Requests() {
  if (!creating_) return;
  creating_->abandon();
  objects_.refund_entry(creating_bytes_);
}

bool Requests::handle(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  answer = {};
  answer.tag = entry.tag;
  answer.status = RIG_EINVAL;
  bool flags_known = entry.flags == 0 || (entry.opcode == RIG_PROXY_OP_OPEN && entry.flags == RIG_PROXY_OPEN_WHY) ||
                     (entry.opcode == RIG_PROXY_OP_FILL && entry.flags <= UINT8_MAX);
  if (!flags_known || entry.reserved != 0) return true;
  bool on_proxy = entry.device < proxies_.size();
  switch (entry.opcode) {
    case RIG_PROXY_OP_NOP:
      answer.status = RIG_OK;
      answer.value = entry.args[0];
      break;
    case RIG_PROXY_OP_OPEN:
      answer.status = open(entry, answer);
      break;
    case RIG_PROXY_OP_ALLOC:
      if (on_proxy) answer.status = alloc(entry, answer);
      if (creating_) return false;
      break;
    case RIG_PROXY_OP_FREE:
      if (objects_.remove(entry.args[0])) answer.status = RIG_OK;
      break;
    case RIG_PROXY_OP_HANDOVER:
    case RIG_PROXY_OP_FILL:
      if (on_proxy) answer.status = hand_over(entry);
      return answer.status != RIG_OK;
    case RIG_PROXY_OP_MAP_PEER:
      if (on_proxy) answer.status = map_peer(entry, answer);
      break;
    case RIG_PROXY_OP_EXPORT:
      if (on_proxy) answer.status = export_bytes(entry, answer);
      break;
    case RIG_PROXY_OP_IMPORT:
      if (on_proxy) answer.status = import_bytes(entry, answer);
      break;
    case RIG_PROXY_OP_ALLOCATED:
      if (entry.device < served_.size()) answer.status = count(entry.device, entry.args[0], &answer.value);
      break;
    case RIG_PROXY_OP_IMAGE_LOAD:
    case RIG_PROXY_OP_IMAGE_PREPARE:
    case RIG_PROXY_OP_IMAGE_ENTRY:
      if (on_proxy) answer.status = image_request(entry, answer);
      break;
    case RIG_PROXY_OP_IMAGE_UNLOAD:
      if (images_.unload(entry.args[0])) answer.status = RIG_OK;
      break;
    case RIG_PROXY_OP_LOADED:
      if (entry.device < served_.size()) {
        LoadedCount held = loaded(entry.device);
        answer.status = RIG_OK;
        answer.value = static_cast<uint64_t>(held.images);
        answer.detail = static_cast<uint64_t>(held.bytes);
      }
      break;
    default:
      break;
  }
  return true;
}

namespace {

bool hands_over(const rig_proxy_entry &entry) noexcept {
  return entry.opcode == RIG_PROXY_OP_HANDOVER || entry.opcode == RIG_PROXY_OP_FILL;
}

}  // namespace

bool Requests::has_room(const rig_proxy_entry &entry) const noexcept {
  // Other entries, and hand-overs that name no proxy, which handle
  // refuses, run at once.
  if (!hands_over(entry) || entry.device >= proxies_.size()) return true;
  return completions_.has_room(proxies_[entry.device].device);
}

void Requests::await_room(const rig_proxy_entry &entry, std::chrono::milliseconds wait) {
  if (!has_room(entry)) completions_.await_room(proxies_[entry.device].device, wait);
}

void Requests::release_caches() const noexcept {
  for (size_t i = 0; i < current_.size(); ++i)
    if (current_[i]) {
      rig_free_cache(current_[i]->device());
      rig_free_cache(served_.device(i));
    }
}

rig_status_t Requests::count(size_t device, uint64_t what, uint64_t *value) const {
  const UserClients &everyone = objects_.account().everyone();
  if (what == RIG_PROXY_COUNT_ALLOCATED)
    *value = static_cast<uint64_t>(served_.allocated(device));
  else if (what == RIG_PROXY_COUNT_CLIENTS)
    *value = static_cast<uint64_t>(everyone.clients());
  else if (what >= RIG_PROXY_COUNT_DEVICE_BYTES && what <= RIG_PROXY_COUNT_PROXIES)
    *value = static_cast<uint64_t>(everyone.total(static_cast<Held>(what - RIG_PROXY_COUNT_DEVICE_BYTES)));
  else if (what == RIG_PROXY_COUNT_IMAGE_BYTES)
    *value = static_cast<uint64_t>(everyone.total(Held::image_bytes));
  else if (what == RIG_PROXY_COUNT_HANDLES)
    *value = static_cast<uint64_t>(everyone.total(Held::handles));
  else
    return RIG_EINVAL;
  return RIG_OK;
}

rig_status_t Requests::refuse(const rig_proxy_entry &entry, const std::string &why) {
  log_refusal("refused a request of client " + std::to_string(client_) + ": " + why);
  if (entry.payload_bytes >= sizeof(rig_proxy_code)) tell(entry, why);
  return RIG_ENOMEM;
}

void Requests::tell(const rig_proxy_entry &entry, const std::string &why) {
  rig_proxy_code reply{};
  std::snprintf(reply.why, sizeof reply.why, "%s", why.c_str());
  payload_.copy_in(entry.payload_offset, std::as_bytes(std::span(&reply, 1)));
}

rig_status_t Requests::open(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  if (entry.device >= served_.size()) return RIG_EINVAL;
  if (proxies_.size() == proxy_limit_)
    return refuse_open(entry, "the client has the " + std::to_string(proxy_limit_) +
                                  " proxies its completion segment has words for");
  // Values past 2^47 are beyond any timeline's (rig_point_t).
  if (entry.args[0] >= uint64_t{1} << 47) return RIG_EINVAL;
  uint64_t code = entry.flags & RIG_PROXY_OPEN_WHY ? sizeof(rig_proxy_code) : 0;
  if (entry.payload_bytes < code || entry.payload_bytes - code > max_config_bytes) return RIG_EINVAL;
  std::string config(entry.payload_bytes - code, '\0');
  if (!payload_.copy_out(entry.payload_offset + code, std::as_writable_bytes(std::span(config))) ||
      config.find('\0') != std::string::npos)
    return RIG_EINVAL;
  if (std::string knob = test_knob_in(config); !knob.empty() && !policy_.test_knobs)
    return refuse_open(entry, "rigd's policy refuses the test knob " + knob + " (test_knobs = allow admits it)");
  if (std::string refused = objects_.account().take(Held::proxies, 1); !refused.empty())
    return refuse_open(entry, refused);
  std::string why;
  std::shared_ptr<Instance> instance = instance_for(entry.device, config, &why);
  if (instance) {
    try {
      completions_.open_lane(entry.device);
    } catch (const std::system_error &e) {
      instance.reset();
      why = std::string("rigd could not start a thread for the device's values: ") + e.what();
    }
  }
  if (!instance) {
    objects_.account().give(Held::proxies, 1);
    return refuse_open(entry, why);
  }
  // A client's budget never passes its quota.
  if (int64_t quota = policy_.quota_bytes(); quota > 0 && rig_budget(instance->device()) > quota)
    rig_set_budget(instance->device(), quota);
  auto proxy = static_cast<uint32_t>(proxies_.size());
  answer.value = proxy;
  proxies_.push_back({entry.device, entry.args[0], false, std::move(instance)});
  completions_.start(proxy, entry.args[0]);
  return RIG_OK;
}

rig_status_t Requests::refuse_open(const rig_proxy_entry &entry, const std::string &why) {
  log_refusal("refused an open of client " + std::to_string(client_) + ": " + why);
  if ((entry.flags & RIG_PROXY_OPEN_WHY) && entry.payload_bytes >= sizeof(rig_proxy_code)) tell(entry, why);
  return RIG_EOPEN;
}

std::shared_ptr<Instance> Requests::instance_for(size_t device, const std::string &config, std::string *why) {
  const std::string &name = served_.records()[device].name;
  std::optional<InstanceConfig> opening =
      instance_config(name, config, policy_.cuda_contexts, trust_, client_, why);
  if (!opening) return nullptr;
  std::shared_ptr<Instance> &current = current_[device];
  // The client's proxies of a device share its instance while it lives;
  // one opened with other configuration would be another device.
  if (current && !rig_lost(current->device())) {
    if (opening->config == current->config()) return current;
    *why = "the client's instance of " + std::string(name) + " is open with the configuration \"" +
           current->config() + "\", not \"" + opening->config + "\"";
    return nullptr;
  }
  current = served_.open_instance(device, opening->config, opening->reusable);
  if (current)
    counters_.uses[device].instances.add(1);
  else
    *why = rig_last_error();
  return current;
}

rig_status_t Requests::alloc(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  uint64_t kind = entry.args[0], bytes = entry.args[1];
  if (kind > RIG_MEMORY_MAPPED || bytes == 0 || bytes > INT64_MAX) return RIG_EINVAL;
  auto n = static_cast<int64_t>(bytes);
  if (std::string refused = objects_.charge_entry(n); !refused.empty()) {
    answer.detail = bytes;
    return refuse(entry, refused);
  }
  const Proxy &p = proxies_[entry.device];
  auto memory = static_cast<rig_memory_t>(kind);
  if (!served_.has_room(*p.instance, n)) {
    try {
      creating_ = served_.create_waiting(p.instance, n, memory);
      creating_proxy_ = entry.device;
      creating_bytes_ = n;
      creating_tag_ = entry.tag;
      return RIG_OK;
    } catch (const std::system_error &) {
      // No waiter thread: the client's own poller waits instead.
    }
  }
  rig_buffer_t *b = nullptr;
  bool served_own = false;
  rig_status_t status = served_.create(*p.instance, n, memory, &b, &served_own);
  return allocated(status, b, served_own, n, entry.device, answer);
}

bool Requests::finish_waiting(std::chrono::milliseconds wait, rig_proxy_completion &answer) {
  rig_status_t status;
  rig_buffer_t *b;
  bool served_own;
  if (!creating_->answer(wait, &status, &b, &served_own)) return false;
  creating_ = nullptr;
  answer = {};
  answer.tag = creating_tag_;
  answer.status = allocated(status, b, served_own, creating_bytes_, creating_proxy_, answer);
  return true;
}

rig_status_t Requests::allocated(rig_status_t status, rig_buffer_t *b, bool served_own, int64_t n, uint32_t proxy,
                                 rig_proxy_completion &answer) {
  if (status == RIG_ENOMEM) answer.detail = static_cast<uint64_t>(n);
  // The driver's allocator and rig's cache hand back memory that other
  // clients' work wrote: a client's new memory is zeroed first, and b's
  // stamps order the fill before every use of it.  Memory fresh from the
  // system reads zero already, and a fill would only fault in its pages.
  rig_point_t zeroed;
  if (status == RIG_OK && !rig_buffer_fresh(b)) status = rig_buffer_submit_fill(b, 0, nullptr, 0, &zeroed);
  if (status != RIG_OK) {
    rig_buffer_unref(b);
    objects_.refund_entry(n);
    return status;
  }
  // Memory of the served device's own is a borrow on the instance.
  const Proxy &p = proxies_[proxy];
  std::shared_ptr<Instance> memory = served_own ? nullptr : p.instance, mapped_on = served_own ? p.instance : nullptr;
  answer.value = objects_.add(b, n, {memory, mapped_on, nullptr, p.device});
  return RIG_OK;
}

rig_status_t Requests::map_peer(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  ClientObjects::Holds holds;
  rig_buffer_t *memory = objects_.get(entry.args[0], &holds);
  if (!memory) return RIG_EINVAL;
  // A mapping costs no device memory, but an entry of rigd's table.
  if (std::string refused = objects_.charge_entry(0); !refused.empty()) {
    rig_buffer_unref(memory);
    return refuse(entry, refused);
  }
  const std::shared_ptr<Instance> &on = proxies_[entry.device].instance;
  rig_buffer_t *mapped = nullptr;
  rig_status_t status = rig_buffer_borrow(on->device(), memory, &mapped);
  rig_buffer_unref(memory);
  // A borrow that cannot map answers RIG_OK and no buffer: handle 0.
  // Work through the mapping counts in its allocation's row, once it has one.
  if (status == RIG_OK && mapped)
    answer.value = objects_.add(mapped, 0, {holds.memory, on, holds.rows});
  else
    objects_.refund_entry(0);
  return status;
}

rig_status_t Requests::hand_over(const rig_proxy_entry &entry) {
  uint32_t proxy = entry.device;
  Proxy &p = proxies_[proxy];
  if (p.failed) return RIG_EINVAL;
  rig_status_t status = run_hand_over(entry, proxy);
  held_.clear();
  // The client hears of a hand-over rigd cannot run through the proxy's
  // word (and the answer, which it reads later): it is lost.
  if (status != RIG_OK && !p.failed) {
    p.failed = true;
    completions_.fail(proxy, p.device, "rigd refused value " + std::to_string(entry.args[0]) + " of the proxy: " +
                                           (refused_.empty() ? std::string("its hand-over is malformed") : refused_));
  }
  return status;
}

namespace {

// Keeps of points the last of each device's: a device reaches its values in
// order, so that one says the others.  Without it each value would carry
// the points of every earlier value still running, and a proxy that hands
// over faster than its device completes would wait on ever more of them.
void keep_last_of_each_device(std::vector<rig_point_t> &points) {
  size_t kept = 0;
  for (const rig_point_t &p : points) {
    auto same = std::find_if(points.begin(), points.begin() + static_cast<ptrdiff_t>(kept), [&](const rig_point_t &q) {
      return rig_point_device(q) == rig_point_device(p);
    });
    if (same == points.begin() + static_cast<ptrdiff_t>(kept))
      points[kept++] = p;
    else if (rig_point_value(p) > rig_point_value(*same))
      *same = p;
  }
  points.resize(kept);
}

}  // namespace

rig_status_t Requests::run_hand_over(const rig_proxy_entry &entry, uint32_t proxy) {
  Proxy &p = proxies_[proxy];
  refused_.clear();
  if (entry.args[0] != p.handed + 1) {
    refused_ = "it is out of order: the proxy's next value is " + std::to_string(p.handed + 1);
    return RIG_EINVAL;
  }
  bool read = entry.opcode == RIG_PROXY_OP_FILL
                  ? read_entry_fill(entry, work_)
                  : read_handover(payload_, entry.payload_offset, entry.payload_bytes, work_);
  if (!read) return RIG_EINVAL;
  // The value follows the proxy's earlier values and the values it waits for.
  waits_.clear();
  completions_.pending(proxy, p.handed, waits_);
  for (const rig_proxy_wait &w : work_.waits) {
    if (w.reserved != 0 || w.proxy >= proxies_.size() || w.value > proxies_[w.proxy].handed) {
      refused_ = "it waits for value " + std::to_string(w.value) + " of proxy " + std::to_string(w.proxy) +
                 ", which was not handed over";
      return RIG_EINVAL;
    }
    completions_.pending(w.proxy, w.value, waits_);
  }
  keep_last_of_each_device(waits_);
  bool words = served_.records()[p.device].flags & RIG_PROXY_DEVICE_HOST;
  LaunchContext launches{images_, p.instance.get()};
  if (!hold_parts(objects_, work_.parts, words, &launches, held_, &refused_)) return RIG_EINVAL;
  // From here the value is the proxy's: work that fails to start fails it.
  p.handed = entry.args[0];
  count_hand_over();
  // Taken: other clients' waits on the shared memory it names wait for it.
  touched_.clear();
  for (const std::shared_ptr<SharedRow> &row : held_.rows()) touched_.push_back({row, row->take()});
  points_.clear();
  rig_status_t status = submit_parts(held_, p.instance->device(), waits_, points_);
  // A value that failed to start marks the word lost first, so that its
  // started parts, once done, do not raise it.
  if (status != RIG_OK) {
    p.failed = true;
    completions_.fail(proxy, p.device, std::string("value ") + std::to_string(p.handed) + " did not start: " + rig_last_error());
  }
  // A value is done once what it waits for is too: a value of no parts, or
  // whose parts rig ran at once, waits on other devices all the same.
  points_.insert(points_.end(), waits_.begin(), waits_.end());
  completions_.expect(proxy, p.device, p.handed, points_, work_.waits, touched_);
  return status;
}

void Requests::count_hand_over() noexcept {
  counters_.submissions.add(1);
  counters_.waits.add(work_.waits.size());
  uint64_t copies = 0, copied = 0, fills = 0, launches = 0;
  for (const rig_proxy_part &part : work_.parts) {
    if (part.kind == RIG_PROXY_PART_COPY) {
      copies++;
      copied += part.width * part.rows;
    }
    fills += part.kind == RIG_PROXY_PART_FILL;
    launches += part.kind == RIG_PROXY_PART_LAUNCH;
  }
  if (copies) {
    counters_.copies.add(copies);
    counters_.copied_bytes.add(copied);
  }
  if (fills) counters_.fills.add(fills);
  if (launches) counters_.launches.add(launches);
}

namespace {

// The most bytes of a function's name.
constexpr uint32_t max_name_bytes = 4096;

}  // namespace

rig_status_t Requests::image_request(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  constexpr uint64_t code = sizeof(rig_proxy_code);
  if (entry.payload_bytes < code || !payload_.holds(entry.payload_offset, entry.payload_bytes)) return RIG_EINVAL;
  std::string why;
  rig_status_t status = RIG_EINVAL;
  if (entry.opcode == RIG_PROXY_OP_IMAGE_LOAD) {
    status = load_image(entry, answer, &why);
  } else {
    std::string name(entry.payload_bytes - code, '\0');
    if (name.size() > max_name_bytes) return RIG_EINVAL;
    payload_.copy_out(entry.payload_offset + code, std::as_writable_bytes(std::span(name)));
    if (name.find('\0') != std::string::npos) return RIG_EINVAL;
    if (entry.opcode == RIG_PROXY_OP_IMAGE_PREPARE) {
      status = images_.prepare(entry.args[0], name) ? RIG_OK : RIG_EINVAL;
    } else {
      ClientImages::Resolved f;
      status = images_.resolve(entry.args[0], name, &f, &why);
      if (status == RIG_OK) {
        answer.value = f.function;
        answer.detail = static_cast<uint64_t>(f.max_threads);
        answer.flags = f.places_address ? RIG_PROXY_ENTRY_ADDRESS : 0;
      }
    }
  }
  if (status != RIG_OK) tell(entry, why);
  return status;
}

bool Requests::image_source(const rig_proxy_entry &entry, uint64_t *n, rig_buffer_t **memory) {
  constexpr uint64_t code = sizeof(rig_proxy_code);
  *memory = nullptr;
  if (entry.args[0] == 0) {
    *n = entry.payload_bytes - code;
    return entry.args[1] == 0;
  }
  // An image past the payload arena: in memory of the client's, such as a
  // host arena (a sealed memfd), copied out before rig reads it.
  *n = entry.args[1];
  rig_buffer_t *held = objects_.get(entry.args[0]);
  if (!held) return false;
  if (entry.payload_bytes != code || *n > static_cast<uint64_t>(rig_buffer_bytes(held))) {
    rig_buffer_unref(held);
    return false;
  }
  *memory = held;
  return true;
}

rig_status_t Requests::load_image(const rig_proxy_entry &entry, rig_proxy_completion &answer, std::string *why) {
  uint64_t n = 0;
  rig_buffer_t *memory = nullptr;
  if (!image_source(entry, &n, &memory)) {
    *why = "the image's bytes are not where the request says";
    return RIG_EINVAL;
  }
  // Counted before rigd copies a byte of it into its own memory, and while
  // the image stays loaded (ClientImages gives it back).
  const auto count = static_cast<int64_t>(n);  // at most a buffer's bytes
  if (std::string refused = objects_.charge(count, Held::image_bytes); !refused.empty()) {
    rig_buffer_unref(memory);
    answer.detail = n;
    *why = "an image of " + std::to_string(n) + " bytes: " + refused;
    return RIG_ENOMEM;
  }
  std::vector<std::byte> bytes(n);
  bool copied = memory ? rig_buffer_blit_to_bytes(memory, 0, bytes.data(), count, 0, count) == RIG_OK
                       : payload_.copy_out(entry.payload_offset + sizeof(rig_proxy_code), bytes);
  rig_buffer_unref(memory);
  rig_status_t status = RIG_EINVAL;
  if (!copied) {
    *why = "the image's bytes are not where the request says";
  } else {
    const Proxy &p = proxies_[entry.device];
    status = images_.load(p.instance, served_.records()[p.device], bytes, &answer.value, why, &answer.detail);
  }
  if (status == RIG_OK)
    counters_.images.add(1);
  else
    objects_.refund(count, Held::image_bytes);
  return status;
}

}  // namespace rigd

namespace rigd {

rig_status_t Requests::export_bytes(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  size_t device = proxies_[entry.device].device;
  ClientObjects::Holds holds;
  rig_buffer_t *whole = objects_.get(entry.args[0], &holds);
  if (!whole) return RIG_EINVAL;
  uint64_t offset = entry.args[1], length = entry.args[2], size = static_cast<uint64_t>(rig_buffer_bytes(whole));
  rig_buffer_t *view = nullptr;
  // Only the client's own memory of the proxy's served device, as
  // allocated (or imported where the instance did not map it), not a host
  // arena, which is the client's, nor a mapping on another instance.
  bool exportable = holds.exports == device;
  if (exportable && offset <= size && length <= size - offset)
    rig_buffer_view(whole, static_cast<int64_t>(offset), static_cast<int64_t>(length), &view);
  rig_buffer_unref(whole);
  if (!view) return RIG_EINVAL;
  // The export's view lies on the memory's own device, not on the client's
  // instance through a borrow, which the instance's loss would end.
  rig_buffer_t *own = nullptr;
  rig_status_t status = rig_buffer_borrow(holds.memory ? holds.memory->device() : served_.device(device), view, &own);
  rig_buffer_unref(view);
  if (status != RIG_OK) return status;
  view = own;
  // The limit first: a refused export takes no row of the shared table,
  // which would stay the allocation's while it lives.
  if (std::string refused = objects_.account().take(Held::exports, 1); !refused.empty()) {
    rig_buffer_unref(view);
    return refuse(entry, refused);
  }
  // Work on the exported handle, and on imports of it, counts in its row.
  std::shared_ptr<SharedRow> row = objects_.row_of(entry.args[0], [&] { return exports_.new_row(); });
  if (!row) {
    objects_.account().give(Held::exports, 1);
    rig_buffer_unref(view);
    return refuse(entry, "rigd's shared-buffer table is full: its " + std::to_string(served_.shared_rows()) +
                             " rows (shared_rows) are held by exported allocations");
  }
  answer.value = exports_.add(client_, device, view, {holds.memory, std::move(row)});
  return RIG_OK;
}

rig_status_t Requests::import_bytes(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  const Proxy &p = proxies_[entry.device];
  Exports::Shared shared;
  rig_buffer_t *view = exports_.get(entry.args[0], p.device, &shared, user_, client_);
  if (!view) return RIG_EINVAL;
  int64_t bytes = rig_buffer_bytes(view);
  // The importer's quota counts what it imports, as the exporter's does:
  // imports of short-lived exporters' memory outlive them.
  if (std::string refused = objects_.charge_entry(bytes); !refused.empty()) {
    rig_buffer_unref(view);
    answer.detail = static_cast<uint64_t>(bytes);
    return refuse(entry, refused);
  }
  answer.detail = static_cast<uint64_t>(bytes);
  // The importer's work on the bytes runs on its own instance where that
  // maps them, so that a fault in it loses no other client's instance.
  rig_buffer_t *mapped = nullptr;
  if (rig_buffer_borrow(p.instance->device(), view, &mapped) == RIG_OK && mapped) {
    rig_buffer_unref(view);
    answer.value = objects_.add(mapped, bytes,
                                {std::move(shared.memory), p.instance, std::make_shared<RowSlot>(shared.row),
                                 ClientObjects::no_export});
  } else {
    answer.value =
        objects_.add(view, bytes, {std::move(shared.memory), nullptr, std::make_shared<RowSlot>(shared.row), p.device});
  }
  return RIG_OK;
}

}  // namespace rigd
