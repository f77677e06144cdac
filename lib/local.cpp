// Values per device: a key's value on a device, made at its first get and
// dropped once the device's driver's stop has returned.
#include "device.hpp"

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

struct rig_local_key {
  rig_local_init_fn init;
  rig_local_drop_fn drop;
  void *context;
};

namespace rig {

void drop_locals(rig_device_t *d) {
  std::vector<std::pair<rig_local_key_t *, void *>> values;
  {
    std::lock_guard<std::mutex> g(d->locals_mu);
    values.swap(d->locals);
    d->locals_dropped = true;
  }
  for (auto &[key, value] : values)
    if (key->drop) key->drop(value, key->context);
}

}  // namespace rig

using namespace rig;

namespace {

bool find(rig_device_t *d, rig_local_key_t *key, void **out) {
  std::lock_guard<std::mutex> g(d->locals_mu);
  for (auto &[k, v] : d->locals)
    if (k == key) {
      *out = v;
      return true;
    }
  return false;
}

// The inits under way, each a key's on a device by one thread, and the one
// each thread waits for: a second get of the value waits for the first's
// init (LOCAL-03), and a get that would wait for itself, directly or
// through other threads' inits, is refused instead.
struct Making {
  rig_local_key_t *key;
  rig_device_t *device;
  std::thread::id maker;
};

struct Inits {
  std::mutex mu;
  std::condition_variable done;
  std::vector<Making> making;
  std::map<std::thread::id, Making> waiting;  // thread: the init it waits for

  const Making *find_making(rig_local_key_t *key, rig_device_t *d) const {
    for (const Making &m : making)
      if (m.key == key && m.device == d) return &m;
    return nullptr;
  }
  // True iff the init m waits, through the inits its maker waits for, for
  // one of self's.
  bool waits_for(Making m, std::thread::id self) const {
    for (size_t hops = 0; hops <= waiting.size(); hops++) {
      if (m.maker == self) return true;
      auto next = waiting.find(m.maker);
      if (next == waiting.end()) return false;
      m = next->second;
    }
    return false;
  }
};

Inits &inits() {
  static auto *i = new Inits();  // lives for the process
  return *i;
}

// Returns true with *out the value where it is made; otherwise marks the
// init this thread is to run, after waiting for another thread's.
bool made_or_mine(rig_local_key_t *key, rig_device_t *d, void **out) {
  Inits &in = inits();
  std::thread::id self = std::this_thread::get_id();
  std::unique_lock<std::mutex> g(in.mu);
  for (;;) {
    if (find(d, key, out)) return true;
    require_live(d);
    const Making *m = in.find_making(key, d);
    if (!m) {
      in.making.push_back({key, d, self});
      return false;
    }
    if (in.waits_for(*m, self))
      throw_invalid("rig_local_get of a key on " + d->name + " from inside " +
                    (m->maker == self ? "that key's own init" : "an init that its init waits for") +
                    ", as a call inside a lock");
    in.waiting[self] = *m;
    in.done.wait(g);
    in.waiting.erase(self);
  }
}

// Ends this thread's init of key on d, waking the gets that wait for it.
void end_making(rig_local_key_t *key, rig_device_t *d) {
  Inits &in = inits();
  {
    std::lock_guard<std::mutex> g(in.mu);
    std::erase_if(in.making, [&](const Making &m) { return m.key == key && m.device == d; });
  }
  in.done.notify_all();
}

}  // namespace

extern "C" {

rig_local_key_t *rig_local_new_key(rig_local_init_fn init, rig_local_drop_fn drop, void *context) {
  if (!init) return nullptr;
  // Keys live for the process: rig keeps every one it made.
  static std::mutex mu;
  static auto *keys = new std::vector<std::unique_ptr<rig_local_key>>();
  try {
    std::lock_guard<std::mutex> g(mu);
    keys->push_back(std::make_unique<rig_local_key>(rig_local_key{init, drop, context}));
    return keys->back().get();
  } catch (...) {
    return nullptr;
  }
}

rig_status_t rig_local_get(rig_local_key_t *key, rig_device_t *d, void **out) {
  RIG_API_CALL({
    require(key != nullptr && d != nullptr && out != nullptr, "the key, device or out is NULL");
    require_device(d);
    *out = nullptr;
    if (find(d, key, out)) return RIG_OK;
    refuse_inside_lock();
    if (made_or_mine(key, d, out)) return RIG_OK;
    struct End {
      rig_local_key_t *key;
      rig_device_t *d;
      ~End() { end_making(key, d); }
    } end{key, d};
    // init runs holding no lock of rig's: it may call rig.
    void *value = key->init(d, key->context);
    // An init that ends once the stop's drops began (LOCAL-04) keeps no
    // value: nothing would drop it later.
    bool stopped = false;
    {
      std::lock_guard<std::mutex> g(d->locals_mu);
      stopped = d->locals_dropped;
      if (!stopped) d->locals.push_back({key, value});
    }
    if (stopped) {
      if (key->drop) key->drop(value, key->context);
      throw_lost(d);
    }
    *out = value;
    return RIG_OK;
  });
}

}  // extern "C"
