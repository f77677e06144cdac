// The process's devices: registered drivers, the open device of each name,
// and the 65,535 slots whose timelines continue past their earlier devices.
#pragma once

#include "device.hpp"

#include <cstdint>
#include <functional>

namespace rig {

constexpr int kSlots = 65535;
constexpr int kValueBits = 47;
constexpr uint64_t kValueMax = (uint64_t{1} << kValueBits) - 1;

// The host device, made at the first use.
rig_device_t *host();

// The device of slot that holds value (the last one whose timeline started
// before it), or nullptr where none does or where that device's record was
// freed: then every value it was given is reached, and *retired_last
// (where given) is the last of them, but for the values its loss dropped,
// for which it throws RIG_ELOST "NAME lost: why" (their tombstone's,
// DEV-22) with no device.
rig_device_t *device_of_value(uint16_t slot, uint64_t value, uint64_t *retired_last = nullptr);
// True iff a later device took d's slot.
bool slot_taken_after(const rig_device_t *d);

// Called when a closed device may have returned its last holding: frees
// its slot once it has stopped and holds nothing, and retires its record
// once nothing names it either (retire_unnamed retries later).
void maybe_leave_slot(rig_device_t *d);
// Retires the records of devices that left their slots once nothing names
// them: a record lost (closed, or lost dropping points), stopped, holding
// nothing, named by no stamp or queue wait of another.  A retired record
// is released to the device pool (handles.hpp) once 4096 later ones were
// retired; until then it answers as the closed device it is.  The values
// a released record's loss dropped keep a tombstone in its slot for good.
void retire_unnamed();

// The registered driver of a name's prefix (the part before ':').
Driver *driver_of_prefix(const std::string &name);

// Opens name with driver (nullptr: the driver its prefix names).
rig_device_t *open_device(const char *name, Driver *driver, const char *config);
// The config of rig_open's options (NULL for none); RIG_EINVAL where
// their size is too small.
const char *open_config(const rig_open_options_t *opts);
// Opens name with driver, whose device make opens (start: the value its
// timeline starts after); the record is then given to ready, before any
// other thread can see it.
rig_device_t *open_device_with(const char *name, Driver *driver,
                               const std::function<std::unique_ptr<DriverDevice>(uint64_t start)> &make,
                               const std::function<void(rig_device_t *)> &ready);
void close_device(rig_device_t *d);

// Calls f on each device that holds a slot, without taking a lock.
void for_each_open_device(const std::function<void(rig_device_t *)> &f);

// Around fork: the parent holds the registry's lock so that the child
// inherits it unheld.
void lock_registry_for_fork();
void unlock_registry_after_fork();

}  // namespace rig
