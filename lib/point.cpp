// Points: a slot and a value, packed in 63 bits.
#include "probes.hpp"
#include "registry.hpp"
#include "rig_internal/errors.hpp"

using namespace rig;

namespace {

uint16_t slot_of(rig_point_t p) { return static_cast<uint16_t>(p.bits >> kValueBits); }
uint64_t value_of(rig_point_t p) { return p.bits & kValueMax; }

// The device whose value the point holds.  A value past the device's
// submitted one was never given: nothing will ever reach it.
rig_device_t *resolve(rig_point_t p) {
  uint64_t retired_last = kValueMax;
  rig_device_t *d = device_of_value(slot_of(p), value_of(p), &retired_last);
  if (!d && value_of(p) > retired_last)
    throw_invalid("the point's value was never submitted on slot " + std::to_string(slot_of(p)));
  if (!d) return nullptr;
  if (value_of(p) > d->submitted.load(std::memory_order_acquire))
    throw_invalid("the point's value was never submitted on " + d->name);
  return d;
}

// rig_point_wait, *waited the device it waited on (NULL for none).
rig_status_t wait_on(rig_point_t p, rig_device_t **waited) {
  RIG_API_CALL({
    refuse_inside_lock();
    if (rig_device_t *d = resolve(p)) {
      *waited = d;
      RIG_PROBE(wait_begin, d->name.c_str(), value_of(p));
      d->wait(value_of(p));
    }
    return RIG_OK;
  });
}

}  // namespace

extern "C" {

rig_point_t rig_point_make(const rig_device_t *d, uint64_t value) {
  rig_point_t p{0};
  if (!device_answers(d) || value > kValueMax) return p;
  p.bits = (static_cast<uint64_t>(d->slot) << kValueBits) | value;
  return p;
}

uint64_t rig_point_value(rig_point_t p) { return value_of(p); }

rig_device_t *rig_point_device(rig_point_t p) {
  try {
    uint64_t freed_last = UINT64_MAX;
    rig_device_t *d = device_of_value(slot_of(p), value_of(p), &freed_last);
    if (freed_last != UINT64_MAX) return nullptr;  // a value of a freed record
    if (!d) d = device_of_value(slot_of(p), value_of(p) + 1);  // value 0, or a start value
    if (!d || slot_taken_after(d)) return nullptr;
    return d;
  } catch (...) {
    return nullptr;  // a value a freed record's loss dropped (its tombstone's)
  }
}

rig_status_t rig_point_wait(rig_point_t p) {
  rig_device_t *waited = nullptr;
  rig_status_t status = wait_on(p, &waited);
  if (waited) RIG_PROBE(wait_end, waited->name.c_str(), value_of(p), static_cast<int>(status));
  return status;
}

rig_status_t rig_point_reached(rig_point_t p, bool *out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    // Written only once the point is known: an error leaves it false.
    *out = false;
    rig_device_t *d = resolve(p);
    bool reached = !d || d->reached(value_of(p));
    if (!reached) {
      d->commit_to(value_of(p));
      reached = d->reached(value_of(p));
    }
    *out = reached;
    return RIG_OK;
  });
}

}  // extern "C"
