#include "registry.hpp"

#include "allocation.hpp"
#include "rig_internal/errors.hpp"
#include "rig_internal/host_facts.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace rig {
namespace {

// The values (start, last] that a slot's devices were given: one device's,
// or, where device is nullptr, those of devices whose records were
// retired and freed: every one of them reached, or, in a tombstone, every
// one dropped by the loss of the device whose record was freed.
struct Era {
  uint64_t start;
  uint64_t last;  // a live record's: its submitted
  rig_device_t *device;
  // A tombstone's "NAME lost: why", which its points answer for good
  // (DEV-22, LOSS-14); nullptr in any other era.
  std::unique_ptr<const std::string> lost = nullptr;
};

// True iff b follows a on, both freed records' values all reached: one
// era holds them both.
bool joins(const Era &a, const Era &b) {
  return !a.device && !a.lost && !b.device && !b.lost && a.last == b.start;
}

struct Slot {
  // The device holding it, if any; read without the lock by fail and fork.
  std::atomic<rig_device_t *> current{nullptr};
  uint64_t last = 0;        // the last value its devices were given
  std::vector<Era> eras;    // in order
  // The last era's device, read without the lock: the values after its
  // start are its own, and a point nearly always names one of them.
  std::atomic<rig_device_t *> latest{nullptr};
};

// The open device of a name, and the lock an open of that name holds while
// its driver opens the device.
struct Name {
  rig_device_t *device = nullptr;
  std::unique_ptr<Mutex> open_lock = std::make_unique<Mutex>();
  std::thread::id opener;
  int users = 0;  // opens that hold open_lock's address
};

// The retired records rig keeps, so that a pointer a program kept answers
// as a closed device, before it releases the oldest to the device pool.
constexpr size_t kRetiredKept = 4096;

struct Registry {
  std::mutex mu;  // drivers, names, slots; never held across a driver call
  std::vector<Driver *> drivers;
  std::map<std::string, Name> names;
  std::vector<Slot> slots = std::vector<Slot>(kSlots);
  int next_free_hint = 0;
  std::vector<rig_device_t *> unretired;  // left their slots; something names them
  // Lost devices whose stop returned before their word showed their last
  // value (a driver may raise it afterwards): looked at again at each open
  // and close (retire_unnamed), so that their memory, slot and record
  // return once it does (STOP-01, STOP-16).
  std::vector<rig_device_t *> stopping;
  std::deque<rig_device_t *> retired;     // oldest first, at most kRetiredKept
};

// Marks a slot reserved by an open under way.
rig_device_t *opening() {
  static rig_device_t *marker = new rig_device();
  return marker;
}

Registry &registry() {
  static Registry *r = new Registry();  // lives for the process
  return *r;
}

}  // namespace

Driver *driver_of_prefix(const std::string &name) {
  // NAME@MACHINE names a device of another machine's agent, which the
  // driver of prefix "@MACHINE" opens as a proxy ("@rigd": the service).
  auto at = name.rfind('@');
  auto colon = name.find(':');
  std::string prefix = at != std::string::npos       ? name.substr(at)
                       : colon == std::string::npos ? name
                                                    : name.substr(0, colon);
  Registry &r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  for (Driver *d : r.drivers)
    if (d->opens_prefix(prefix)) return d;
  return nullptr;
}

namespace {

// Takes a free slot for a new device; -1 where all are held.
int take_slot(Registry &r) {
  for (int i = 0; i < kSlots; i++) {
    int s = (r.next_free_hint + i) % kSlots;
    if (!r.slots[s].current) {
      r.next_free_hint = (s + 1) % kSlots;
      return s;
    }
  }
  return -1;
}

void check_facts(const Facts &f) {
  auto power_of_two = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  if (!power_of_two(f.alignment)) throw_invalid("the driver's facts state an alignment that is not a power of two");
  if (f.alignment > 4096) throw_invalid("the driver's facts state an alignment above a page");
  if (!f.word && !f.own_word) throw_invalid("the driver's facts give no timeline word");
  if (f.copy_engine >= static_cast<int>(f.queues.size())) throw_invalid("the driver's facts name a copy engine it does not have");
  if (f.budget < 0) throw_invalid("the driver's facts state a negative budget");
  if (f.cache_limit < 0) throw_invalid("the driver's facts state a negative cache limit");
  if (f.commit_every < 1) throw_invalid("the driver's facts state a commit interval below 1");
  if (f.first_after > kValueMax) throw_invalid("the driver's facts start the timeline past its last value");
  if (f.hang_ms && *f.hang_ms <= 0) throw_invalid("the driver's facts state a hang bound that is not positive");
}

rig_device_t *make_record(const std::string &name, Driver *driver, std::unique_ptr<DriverDevice> drv,
                          int slot, uint64_t start) {
  auto *d = new rig_device();
  d->name = name;
  d->driver = driver;
  d->facts = drv->facts();
  d->arch = d->facts.arch;
  d->instruction_set = instruction_set_of(d->arch);
  d->slot = static_cast<uint16_t>(slot);
  d->start = start;
  d->submitted.store(start);
  d->committed.store(start);
  d->reported.store(start);
  d->budget.store(d->facts.budget);
  d->cache_limit.store(d->facts.cache_limit);
  d->drv = std::move(drv);
  return d;
}

}  // namespace

void register_driver(Driver *d) {
  Registry &r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  r.drivers.push_back(d);
}

void install_fork_handlers();  // failure.cpp

rig_device_t *host() {
  static rig_device_t *h = [] {
    install_fork_handlers();
    Registry &r = registry();
    auto drv = host_driver()->open("CPU", "", 0);
    rig_device_t *d = make_record("CPU", host_driver(), std::move(drv), 0, 0);
    d->is_host = true;
    std::lock_guard<std::mutex> g(r.mu);
    r.slots[0].current = d;
    r.slots[0].eras.push_back({0, 0, d});
    r.slots[0].latest.store(d, std::memory_order_release);
    r.names["CPU"].device = d;
    r.next_free_hint = 1;
    return d;
  }();
  return h;
}

rig_device_t *device_of_value(uint16_t slot, uint64_t value, uint64_t *retired_last) {
  host();
  Registry &r = registry();
  if (slot >= kSlots) return nullptr;
  // latest is never a retired record (retire_locked), and a record's start
  // never changes.
  rig_device_t *latest = r.slots[slot].latest.load(std::memory_order_acquire);
  if (latest && latest->start < value) return latest;
  std::lock_guard<std::mutex> g(r.mu);
  const auto &eras = r.slots[slot].eras;
  for (auto it = eras.rbegin(); it != eras.rend(); ++it)
    if (it->start < value) {
      if (it->lost && value <= it->last) throw Error(RIG_ELOST, *it->lost);
      if (!it->device && retired_last) *retired_last = it->last;
      return it->device;
    }
  return nullptr;
}

bool slot_taken_after(const rig_device_t *d) {
  Registry &r = registry();
  // Nearly always d is its slot's latest, which needs no lock (Slot::latest:
  // an open publishes its device there once the device is its slot's last
  // era); a record that retired, or whose slot another device took, is
  // looked up under the lock.
  if (r.slots[d->slot].latest.load(std::memory_order_acquire) == d) return false;
  std::lock_guard<std::mutex> g(r.mu);
  return r.slots[d->slot].eras.back().device != d;
}

namespace {

// Takes a retired record out of its slot's eras before it is freed: the
// values it reached join the slot's retired ones, and those its loss
// dropped stay in a tombstone of their own, a few dozen bytes where the
// record held kilobytes.
void forget_record(Registry &r, rig_device_t *d) {
  std::vector<Era> &eras = r.slots[d->slot].eras;
  auto i = static_cast<size_t>(
      std::find_if(eras.begin(), eras.end(), [&](const Era &e) { return e.device == d; }) - eras.begin());
  uint64_t last = d->submitted.load();
  uint64_t reached = std::min(d->reached_at_loss(), last);  // a retired record is lost
  if (reached < last) {
    auto lost = std::make_unique<const std::string>(d->name + " lost: " + d->lost_reason());
    eras.insert(eras.begin() + static_cast<std::ptrdiff_t>(i) + 1, Era{reached, last, nullptr, std::move(lost)});
  }
  eras[i] = {eras[i].start, reached, nullptr};
  if (eras[i].start == reached && reached < last) {  // it reached none of its values
    eras.erase(eras.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
  // Neighbouring eras of reached values that follow on merge into one.
  if (i + 1 < eras.size() && joins(eras[i], eras[i + 1])) {
    eras[i].last = eras[i + 1].last;
    eras.erase(eras.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  if (i > 0 && joins(eras[i - 1], eras[i])) {
    eras[i - 1].last = eras[i].last;
    eras.erase(eras.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// Retires d's record where nothing names it any more: its name is free
// and the record joins the retired ones kept; returns the oldest of those
// to free, if any.  Called with r.mu held, once d has left its slot.
rig_device_t *retire_locked(Registry &r, rig_device_t *d) {
  if (d->record_retired) return nullptr;
  if (d->holdings.load() != 0 || d->named.load() != 0) {
    if (std::find(r.unretired.begin(), r.unretired.end(), d) == r.unretired.end()) r.unretired.push_back(d);
    return nullptr;
  }
  d->record_retired = true;
  std::erase(r.unretired, d);
  // Points of a retired record resolve under the lock (device_of_value), so
  // that no reader holds it unlocked as it is freed.
  Slot &s = r.slots[d->slot];
  if (s.latest.load(std::memory_order_relaxed) == d) s.latest.store(nullptr, std::memory_order_release);
  if (auto name = r.names.find(d->name); name != r.names.end() && name->second.device == d) {
    name->second.device = nullptr;
    if (name->second.users == 0) r.names.erase(name);
  }
  r.retired.push_back(d);
  if (r.retired.size() <= kRetiredKept) return nullptr;
  rig_device_t *oldest = r.retired.front();
  r.retired.pop_front();
  forget_record(r, oldest);
  return oldest;
}

// Releases d's record to the device pool (handles.hpp): its header then
// answers a kept pointer's uses (require_device).
void free_record(rig_device_t *d) {
  if (!d) return;
  DriverCallMask mask;
  delete d;
}

}  // namespace

void maybe_leave_slot(rig_device_t *d) {
  if (d->is_host || !d->is_lost()) return;
  Registry &r = registry();
  if (!d->stopped()) {
    if (d->stop_returned()) {
      std::lock_guard<std::mutex> g(r.mu);
      if (r.slots[d->slot].current == d && std::find(r.stopping.begin(), r.stopping.end(), d) == r.stopping.end())
        r.stopping.push_back(d);
    }
    return;
  }
  if (d->holdings.load() != 0) return;
  bool left = false;
  {
    std::lock_guard<std::mutex> g(r.mu);
    Slot &s = r.slots[d->slot];
    if (s.current == d) {
      std::erase(r.stopping, d);
      // A device whose timeline passed 2^46 keeps its slot for good, so
      // that the slot's values never run out (DEV-15).
      if (d->submitted.load() > (uint64_t{1} << 46)) return;
      s.last = d->submitted.load();
      s.current = nullptr;
      left = true;
    }
  }
  // No device maps a word of a driver's own (queues wait only on plain
  // words), so it goes back as the device leaves its slot.
  if (left) d->free_own_word();
  rig_device_t *freed;
  {
    std::lock_guard<std::mutex> g(r.mu);
    freed = r.slots[d->slot].current == d ? nullptr : retire_locked(r, d);
  }
  free_record(freed);
}

void retire_unnamed() {
  Registry &r = registry();
  std::vector<rig_device_t *> stopping;
  {
    std::lock_guard<std::mutex> g(r.mu);
    stopping = r.stopping;
    // Named while looked at, so that no other thread retires and frees one.
    for (rig_device_t *d : stopping) d->named.fetch_add(1);
  }
  for (rig_device_t *d : stopping) {
    try {
      reclaim_stopped(d);  // leaves its slot once it has stopped and holds nothing
    } catch (const std::exception &) {
      // Its memory stays; the next open or close looks again.
    }
    d->named.fetch_sub(1);
  }
  std::vector<rig_device_t *> freed;
  {
    std::lock_guard<std::mutex> g(r.mu);
    for (rig_device_t *d : std::vector<rig_device_t *>(r.unretired)) freed.push_back(retire_locked(r, d));
  }
  for (rig_device_t *d : freed) free_record(d);
}

namespace {

// Refuses (RIG_EINVAL) a name that is not PREFIX[:UNIT][~TAG][@MACHINE],
// PREFIX and UNIT of letters, digits and '_', TAG and MACHINE of those
// and '.' and '-', none empty: a stray character would open a new device.
void check_name(const std::string &name) {
  auto word = [](char c, bool dots) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (dots && (c == '.' || c == '-'));
  };
  static const char *const form = "; a device name is PREFIX[:UNIT][~TAG][@MACHINE]";
  // The separators each part starts with, in order, and whether it holds dots.
  const char *seps = ":~@";
  size_t part = 0;  // 0: PREFIX; else 1 + the index in seps of the last separator
  size_t length = 0;
  for (size_t i = 0; i < name.size(); i++) {
    char c = name[i];
    const char *sep = c ? std::strchr(seps, c) : nullptr;
    if (sep && static_cast<size_t>(sep - seps) + 1 > part) {
      if (length == 0) break;
      part = static_cast<size_t>(sep - seps) + 1;
      length = 0;
      continue;
    }
    if (!word(c, part >= 2))
      throw_invalid("\"" + name + "\" is not a device name: character " + std::to_string(i) + " is not allowed there" +
                    form);
    length++;
  }
  if (length == 0) throw_invalid("\"" + name + "\" is not a device name: a part of it is empty" + form);
}

// The name of the hardware that name opens: NAME~TAG (TAG before any
// @MACHINE) is an instance of NAME's, which its driver opens as it opens
// NAME, as a device of its own.
std::string hardware_of(const std::string &name) {
  auto tilde = name.find('~');
  if (tilde == std::string::npos) return name;
  auto at = name.find('@', tilde);  // check_name found TAG not empty
  return name.substr(0, tilde) + (at == std::string::npos ? "" : name.substr(at));
}

}  // namespace

rig_device_t *open_device(const char *name_c, Driver *driver, const char *config) {
  if (name_c) check_name(name_c);
  if (name_c && std::string(name_c) != "CPU" && !driver) {
    driver = driver_of_prefix(name_c);
    if (!driver) throw_invalid(std::string("no driver opens devices named ") + name_c);
  }
  std::string hardware = hardware_of(name_c ? name_c : "");
  return open_device_with(
      name_c, driver, [&](uint64_t start) { return driver->open(hardware, config ? config : "", start); },
      [](rig_device_t *) {});
}

rig_device_t *open_device_with(const char *name_c, Driver *driver,
                               const std::function<std::unique_ptr<DriverDevice>(uint64_t start)> &make,
                               const std::function<void(rig_device_t *)> &ready) {
  refuse_inside_lock();
  require(name_c != nullptr, "the device name is NULL");
  std::string name = name_c;
  if (name == "CPU") {
    if (driver && driver != host_driver()) throw_invalid("CPU is the host, not a device of that driver");
    return host();
  }
  host();
  Registry &r = registry();
  Mutex *open_lock;
  {
    std::lock_guard<std::mutex> g(r.mu);
    Name &n = r.names[name];
    if (n.opener == std::this_thread::get_id()) throw_invalid("open of " + name + " from inside its own open");
    open_lock = n.open_lock.get();
    n.users++;
  }
  // The name's entry goes once no open uses it and no device holds it, so
  // that names opened once each (rigd's instances) return their memory.
  struct LeaveName {
    Registry &r;
    const std::string &name;
    ~LeaveName() {
      std::lock_guard<std::mutex> g(r.mu);
      auto n = r.names.find(name);
      if (--n->second.users == 0 && !n->second.device) r.names.erase(n);
    }
  } leave_name{r, name};
  retire_unnamed();
  Guard name_guard(*open_lock);
  rig_device_t *existing;
  {
    std::lock_guard<std::mutex> g(r.mu);
    existing = r.names[name].device;
  }
  if (const char *why = rig_failure()) throw_open(why);
  if (existing) {
    if (existing->driver != driver) throw_invalid(name + " is open with another driver");
    if (!existing->notice_loss()) return existing;
    // An open of a lost device's name runs its owed stop first.
    existing->stop();
    if (!existing->stop_returned()) throw_open(name + ": its lost device has not stopped");
    reclaim_stopped(existing);
  }

  int slot;
  uint64_t start;
  {
    std::lock_guard<std::mutex> g(r.mu);
    slot = take_slot(r);
    if (slot < 0) throw_open(name + ": every one of the 65,535 device slots is held");
    start = r.slots[slot].last;
    r.slots[slot].current = opening();  // reserved while opening
    r.names[name].opener = std::this_thread::get_id();
  }
  auto release_slot = [&] {
    std::lock_guard<std::mutex> g(r.mu);
    r.slots[slot].current = nullptr;
    r.names[name].opener = std::thread::id();
  };
  std::unique_ptr<DriverDevice> drv;
  try {
    DriverCallMask mask;
    drv = make(start);
    if (!drv) throw std::runtime_error("the driver opened nothing");
  } catch (const Error &) {
    release_slot();
    throw;
  } catch (const std::invalid_argument &e) {
    // A configuration the driver refuses: a key it has not, a bad value.
    release_slot();
    throw_invalid(name + ": " + e.what());
  } catch (const std::exception &e) {
    release_slot();
    throw_open(name + ": " + e.what());
  }
  try {
    check_facts(drv->facts());
  } catch (...) {
    release_slot();
    // A handle no device holds is stopped once (DEV-25).
    try {
      DriverCallMask mask;
      drv->stop(std::nullopt, start);
    } catch (...) {
    }
    throw;
  }
  uint64_t first = std::max(start, drv->facts().first_after);
  rig_device_t *d = make_record(name, driver, std::move(drv), slot, first);
  ready(d);
  // An open that races fail makes a lost device.
  if (const char *why = rig_failure()) d->lose(why, false);
  std::lock_guard<std::mutex> g(r.mu);
  r.slots[slot].current = d;
  r.slots[slot].eras.push_back({d->start, 0, d});
  r.slots[slot].latest.store(d, std::memory_order_release);
  r.names[name].device = d;
  r.names[name].opener = std::thread::id();
  return d;
}

void close_device(rig_device_t *d) {
  refuse_inside_lock();
  require_device(d);
  require(!d->is_host, "the host cannot be closed");
  d->closed.store(true, std::memory_order_release);
  if (!d->is_lost()) {
    try {
      d->wait(d->submitted.load());
    } catch (const Error &e) {
      if (e.status == RIG_EINTR) throw;  // close again to finish it
    }
    d->lose("closed", false);
  }
  d->stop();
  reclaim_stopped(d);
  maybe_leave_slot(d);
  retire_unnamed();
}

void probe(rig_probe_fn f, void *context) {
  host();
  f("CPU", nullptr, context);
  std::vector<Driver *> drivers;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> g(r.mu);
    drivers = r.drivers;
  }
  for (Driver *driver : drivers) {
    if (driver == host_driver()) continue;
    DriverCallMask mask;
    driver->probe([&](const std::string &name, const std::string &why) {
      f(name.c_str(), why.empty() ? nullptr : why.c_str(), context);
    });
  }
}

const char *open_config(const rig_open_options_t *opts) {
  if (!opts) return nullptr;
  require(opts->size >= offsetof(rig_open_options_t, config) + sizeof(opts->config),
          "rig_open_options_t.size is too small");
  return opts->config;
}

void for_each_open_device(const std::function<void(rig_device_t *)> &f) {
  Registry &r = registry();
  for (Slot &s : r.slots) {
    rig_device_t *d = s.current.load(std::memory_order_acquire);
    if (d && d != opening()) f(d);
  }
}

void lock_registry_for_fork() { registry().mu.lock(); }
void unlock_registry_after_fork() { registry().mu.unlock(); }

}  // namespace rig

using namespace rig;

extern "C" {

rig_device_t *rig_host(void) { return host(); }

rig_status_t rig_open(const char *name, const rig_open_options_t *opts, rig_device_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    *out = open_device(name, nullptr, open_config(opts));
    return RIG_OK;
  });
}

rig_status_t rig_close(rig_device_t *d) {
  RIG_API_CALL({
    close_device(d);
    return RIG_OK;
  });
}

rig_status_t rig_probe(rig_probe_fn f, void *context) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(f != nullptr, "the probe function is NULL");
    probe(f, context);
    return RIG_OK;
  });
}

}  // extern "C"
