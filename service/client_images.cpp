// The images rigd holds for one client (client_images.hpp).
#include "client_images.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace rigd {

namespace {

std::mutex loaded_mu;
std::vector<LoadedCount> loaded_counts;  // by served device, under loaded_mu

void count_loaded(size_t served, int64_t images, int64_t bytes) {
  std::lock_guard g(loaded_mu);
  if (loaded_counts.size() <= served) loaded_counts.resize(served + 1);
  loaded_counts[served].images += images;
  loaded_counts[served].bytes += bytes;
}

// Why rigd loads no code of the served device, or empty where it does: a
// local client's proxy of the machine's host runs its host code in the
// client (rig's CPU), and a sim's code, or a remote client's on the
// machine's host, is the client's host code, which rigd runs only where
// its config allows it.
std::string refusal(const rig_proxy_device_record &record, bool host_code, bool remote) {
  if ((record.flags & RIG_PROXY_DEVICE_HOST) && !remote)
    return std::string(record.name) + "@rigd loads no code: a client runs host code itself, on its CPU";
  if ((record.flags & RIG_PROXY_DEVICE_HOST) && !host_code)
    return std::string("rigd runs no remote client's host code on ") + record.name +
           ": its config says host_code = deny";
  if (std::strcmp(record.arch, "sim") == 0 && !host_code)
    return std::string("rigd runs no client's host code (") + record.name +
           "'s images are the client's host code): its config says host_code = deny";
  return "";
}

// Whether an entry ref of f places an address: rig makes a launch with one
// only then (rig_submission_make).
bool places_address(rig_device_t *device, rig_function_t *f) {
  rig_ref_t ref{};
  ref.kind = RIG_REF_ENTRY;
  ref.entry = f;
  rig_part_t part{};
  part.kind = RIG_LAUNCH;
  part.u.launch.function = f;
  part.u.launch.refs = &ref;
  part.u.launch.ref_count = 1;
  part.u.launch.params = 8;
  rig_submission_t *s = nullptr;
  bool made = rig_submission_make(device, &part, 1, nullptr, &s) == RIG_OK;
  rig_submission_unref(s);
  return made;
}

}  // namespace

LoadedCount loaded(size_t served) {
  std::lock_guard g(loaded_mu);
  return served < loaded_counts.size() ? loaded_counts[served] : LoadedCount{};
}

ClientImages::~ClientImages() {
  for (auto &[key, launch] : launches_) rig_submission_unref(launch.submission);
  for (auto &[id, image] : images_) release(image);
}

void ClientImages::release(Image &image) noexcept {
  rig_image_unref(image.image);
  objects_.refund(image.bytes);
  objects_.refund(image.bytes, Held::image_bytes);  // Requests::load_image's
  count_loaded(image.served, -1, -image.bytes);
}

rig_status_t ClientImages::load(const std::shared_ptr<Instance> &instance, const rig_proxy_device_record &record,
                                std::span<const std::byte> bytes, uint64_t *id, std::string *why,
                                uint64_t *short_bytes) {
  *why = refusal(record, host_code_, remote_);
  if (!why->empty()) return RIG_EIMAGE;
  // The machine's host's work runs on a memory device (ServedDevices), its
  // code on rigd's host, whose launches reach that memory.
  rig_device_t *loads = record.flags & RIG_PROXY_DEVICE_HOST ? rig_host() : instance->device();
  auto n = static_cast<int64_t>(bytes.size());
  if (std::string refused = objects_.charge(n); !refused.empty()) {
    *short_bytes = bytes.size();
    *why = "an image of " + std::to_string(n) + " bytes: " + refused;
    return RIG_ENOMEM;
  }
  rig_image_t *image = nullptr;
  rig_status_t status = rig_image_load(loads, bytes.data(), n, &image);
  if (status != RIG_OK) {
    objects_.refund(n);
    *why = rig_last_error();
    return status;
  }
  *id = next_++;
  images_.emplace(*id, Image{image, n, instance->served(), instance, {}});
  count_loaded(instance->served(), 1, n);
  return RIG_OK;
}

bool ClientImages::prepare(uint64_t image, const std::string &name) {
  auto it = images_.find(image);
  if (it == images_.end()) return false;
  rig_image_prepare(it->second.image, name.c_str());
  return true;
}

rig_status_t ClientImages::resolve(uint64_t image, const std::string &name, Resolved *out, std::string *why) {
  auto it = images_.find(image);
  if (it == images_.end()) {
    *why = "the client has no image " + std::to_string(image);
    return RIG_EINVAL;
  }
  Image &i = it->second;
  if (auto known = i.functions.find(name); known != i.functions.end()) {
    const Function &f = functions_.at(known->second);
    *out = {known->second, f.max_threads, f.places_address};
    return RIG_OK;
  }
  rig_function_t *f = nullptr;
  rig_status_t status = rig_image_resolve(i.image, name.c_str(), &f);
  if (status != RIG_OK) {
    *why = rig_last_error();
    return status;
  }
  *out = {};
  if (!f) return RIG_OK;
  uint64_t id = next_++;
  i.functions.emplace(name, id);
  Function made{f, i.instance.get(), image, rig_function_max_threads(f), places_address(rig_image_device(i.image), f)};
  functions_.emplace(id, made);
  *out = {id, made.max_threads, made.places_address};
  return RIG_OK;
}

void ClientImages::drop_launches(uint64_t image) noexcept {
  std::erase_if(launches_, [&](auto &entry) {
    const std::vector<uint64_t> &uses = entry.second.images;
    if (std::find(uses.begin(), uses.end(), image) == uses.end()) return false;
    rig_submission_unref(entry.second.submission);
    return true;
  });
}

bool ClientImages::unload(uint64_t image) {
  auto it = images_.find(image);
  if (it == images_.end()) return false;
  drop_launches(image);
  for (auto &[name, id] : it->second.functions) functions_.erase(id);
  release(it->second);
  images_.erase(it);
  return true;
}

const ClientImages::Function *ClientImages::function(uint64_t id) const {
  auto it = functions_.find(id);
  return it == functions_.end() ? nullptr : &it->second;
}

rig_submission_t *ClientImages::launch(uint64_t function, std::span<const RefLayout> refs, uint32_t param_bytes) {
  const Function *f = this->function(function);
  if (!f) return nullptr;
  key_.assign({function, param_bytes});
  for (const RefLayout &r : refs) key_.insert(key_.end(), {uint64_t{r.kind} << 32 | r.access, r.at, r.function});
  if (auto it = launches_.find(key_); it != launches_.end()) return rig_submission_ref(it->second.submission);
  std::vector<rig_ref_t> made(refs.size());
  std::vector<uint64_t> images{f->image};
  uint32_t slots = 0;
  for (size_t j = 0; j < refs.size(); j++) {
    rig_ref_t &r = made[j];
    r.kind = static_cast<rig_ref_kind_t>(refs[j].kind);
    r.at = static_cast<int64_t>(refs[j].at);
    if (r.kind == RIG_REF_ENTRY) {
      const Function *entry = this->function(refs[j].function);
      if (!entry || entry->instance != f->instance) return nullptr;
      r.entry = entry->function;
      images.push_back(entry->image);
    } else {
      r.memory = {slots++, nullptr};
      r.access = static_cast<rig_access_t>(refs[j].access);
    }
  }
  rig_part_t part{};
  part.kind = RIG_LAUNCH;
  part.u.launch.function = f->function;
  part.u.launch.refs = made.data();
  part.u.launch.ref_count = made.size();
  part.u.launch.params = param_bytes;
  rig_submission_t *s = nullptr;
  if (rig_submission_make(rig_image_device(rig_function_image(f->function)), &part, 1, nullptr, &s) != RIG_OK)
    return nullptr;
  if (launches_.size() >= most_launches) {
    for (auto &[key, launch] : launches_) rig_submission_unref(launch.submission);
    launches_.clear();
  }
  launches_.emplace(key_, Launch{s, std::move(images)});
  return rig_submission_ref(s);
}

}  // namespace rigd
