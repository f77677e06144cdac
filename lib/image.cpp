// rig_image_*: loading code on a device through its driver, resolving
// functions into entries, and unloading once no reference and no work
// holds the image.
#include "image.hpp"

#include "allocation.hpp"
#include "registry.hpp"
#include "work.hpp"

#include <cstring>

using namespace rig;

namespace rig {

bool image_live(const rig_image_t *i, const rig_device_t *d) {
  return i->device == d && !d->closed.load(std::memory_order_acquire);
}

}  // namespace rig

namespace {

// The driver's unload of code.
void driver_unload(rig_device_t *d, DriverDevice::Image code) {
  try {
    driver_call(d, true, [&] { d->drv->unload(code); });
  } catch (const std::exception &) {
    // The call lost the device with its reason; the image is gone anyway.
  }
}

// Unloads the image once: the driver's unload, then the record.  Runs
// once no work runs it (a submission holds a reference until its work is
// done), and on a lost device only once it has stopped.
void unload(void *object) {
  auto *i = static_cast<rig_image_t *>(object);
  rig_device_t *d = i->device;
  driver_unload(d, i->code);
  uncharge_code(d, i->charged);
  d->holdings.fetch_sub(1);
  if (d->is_lost()) maybe_leave_slot(d);
  delete i;
}

// Asks the driver for f's entry, running the rounds of reclamation while
// it answers NoMemory.
DriverDevice::Entry make_entry(rig_image_t *i, const std::string &name, bool *absent) {
  rig_device_t *d = i->device;
  for (int round = 0;; round++) {
    DriverDevice::EntryAnswer answer = driver_call(d, true, [&]() -> DriverDevice::EntryAnswer {
      try {
        return d->drv->entry(i->code, name);
      } catch (const std::invalid_argument &e) {
        // A function the device cannot run: the device serves on (ERR-22).
        throw_invalid(d->name + " cannot run " + name + ": " + e.what());
      }
    });
    if (auto *e = std::get_if<DriverDevice::Entry>(&answer)) return *e;
    if (std::holds_alternative<DriverDevice::Absent>(answer)) {
      *absent = true;
      return {};
    }
    int64_t bytes = std::get<DriverDevice::NoMemory>(answer).bytes;
    if (round == kReclaimRounds) throw_no_memory(d, bytes);
    reclaim_round(d, round);
    require_live(d);
  }
}

}  // namespace

extern "C" {

rig_status_t rig_image_load(rig_device_t *d, const void *bytes, int64_t n, rig_image_t **out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require_device(d);
    require(out != nullptr, "out is NULL");
    require(n >= 0, "the image's byte count is negative");
    require(bytes != nullptr || n == 0, "bytes is NULL");
    *out = nullptr;
    require_live(d);
    if (d->is_io()) throw_image(d->name + " is an io device: it loads no code");
    auto answer = driver_call(d, true, [&] { return d->drv->image(bytes, static_cast<size_t>(n)); });
    if (auto *why = std::get_if<std::string>(&answer)) throw_image(d->name + " refused the image: " + *why);
    DriverDevice::Image code = std::get<DriverDevice::Image>(answer);
    // The code counts in the device's budget while it is loaded (RECL-26).
    int64_t charged = d->drv->image_bytes(code, static_cast<size_t>(n));
    try {
      charge_code(d, charged);
    } catch (...) {
      driver_unload(d, code);
      throw;
    }
    auto *i = new rig_image();
    i->device = d;
    i->code = code;
    i->charged = charged;
    d->holdings.fetch_add(1);
    // A load is work the device runs: it takes a value (TL-03).
    try {
      if (d->is_host)
        host_value();
      else
        submit_work(d, nullptr, 0, nullptr, 0, nullptr, 0);
    } catch (...) {
      unload(i);
      throw;
    }
    *out = i;
    return RIG_OK;
  });
}

rig_image_t *rig_image_ref(rig_image_t *i) {
  if (!live_handle(i)) return nullptr;
  i->refs.fetch_add(1, std::memory_order_relaxed);
  return i;
}

void rig_image_unref(rig_image_t *i) {
  if (!live_handle(i) || i->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Submissions hold their images until their work is done, so no work
  // runs i now; a lost device unloads only once it has stopped.
  retire(i->device, 0, unload, i);
}

rig_device_t *rig_image_device(const rig_image_t *i) { return live_handle(i) ? i->device : nullptr; }

rig_status_t rig_image_prepare(rig_image_t *i, const char *name) {
  RIG_API_CALL({
    require_handle(i, "the image");
    require(name != nullptr, "the name is NULL");
    rig_device_t *d = i->device;
    if (d->is_lost()) return RIG_OK;  // reports nothing: resolve answers
    {
      Guard g(i->mu);
      if (i->functions.count(name)) return RIG_OK;
    }
    try {
      driver_call(d, false, [&] { d->drv->prepare(i->code, name); });
    } catch (const Error &e) {
      if (e.status != RIG_ELOST) throw;
    } catch (const std::exception &) {
      // A prepare reports nothing; the next resolve makes the entry itself.
    }
    return RIG_OK;
  });
}

rig_status_t rig_image_resolve(rig_image_t *i, const char *name, rig_function_t **out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require_handle(i, "the image");
    require(name != nullptr, "the name is NULL");
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    rig_device_t *d = i->device;
    require_live(d);
    {
      Guard g(i->mu);
      auto it = i->functions.find(name);
      if (it != i->functions.end()) {
        *out = it->second.get();
        return RIG_OK;
      }
    }
    bool absent = false;
    DriverDevice::Entry entry = make_entry(i, name, &absent);
    if (absent) return RIG_OK;
    Guard g(i->mu);
    auto &slot = i->functions[name];
    if (!slot) slot.reset(new rig_function{{}, i, name, entry});
    *out = slot.get();
    return RIG_OK;
  });
}

const char *rig_function_name(const rig_function_t *f) { return live_handle(f) ? f->name.c_str() : nullptr; }
rig_image_t *rig_function_image(const rig_function_t *f) { return live_handle(f) ? f->image : nullptr; }
int64_t rig_function_max_threads(const rig_function_t *f) { return live_handle(f) ? f->entry.max_threads : 0; }

}  // extern "C"
