// The process's machines (rig_internal/machines.hpp) and rig/service.h's
// calls that hold for every machine.
#include "rig_internal/machines.hpp"

#include "rig_internal/errors.hpp"

#include <rig/rig.h>

#include <cstring>

namespace rig {

namespace {

// Records that live for the process, as the machines they hold.
struct Machines {
  std::mutex mu;
  std::vector<rig_machine *> all;
};

Machines &machines() {
  static Machines *m = new Machines();  // outlives every static destructor
  return *m;
}

rig_machine *find_locked(Machines &ms, const std::string &name) {
  for (rig_machine *m : ms.all)
    if (m->name == name && !m->forked()) return m;
  return nullptr;
}

}  // namespace

rig_machine *find_machine(const std::string &name) {
  Machines &ms = machines();
  std::lock_guard g(ms.mu);
  return find_locked(ms, name);
}

std::vector<rig_machine *> own_machines() {
  Machines &ms = machines();
  std::lock_guard g(ms.mu);
  std::vector<rig_machine *> ours;
  for (rig_machine *m : ms.all)
    if (!m->forked()) ours.push_back(m);
  return ours;
}

bool adopt_machine(rig_machine *m, const std::string &name, const std::string &base) {
  Machines &ms = machines();
  std::lock_guard g(ms.mu);
  if (!name.empty()) {
    if (find_locked(ms, name)) return false;
    m->name = name;
  } else {
    m->name = base;
    for (int n = 2; find_locked(ms, m->name); n++) m->name = base + std::to_string(n);
  }
  ms.all.push_back(m);
  return true;
}

}  // namespace rig

using namespace rig;

extern "C" {

const char *rig_machine_name(const rig_machine_t *m) { return m ? m->name.c_str() : nullptr; }

const char *rig_machine_lost(rig_machine_t *m) {
  if (!m) return nullptr;
  if (m->lost.load(std::memory_order_acquire)) return m->why.c_str();
  std::string why = m->lost_reason();
  if (why.empty()) return nullptr;
  std::lock_guard g(m->why_mu);
  // The first reason stays, so that the pointer answered never dangles.
  if (!m->lost.load(std::memory_order_relaxed)) {
    m->why = why;
    m->lost.store(true, std::memory_order_release);
  }
  return m->why.c_str();
}

rig_status_t rig_machine_close(rig_machine_t *m) {
  RIG_API_CALL({
    require(m != nullptr, "the machine is NULL");
    require(!m->forked(), "the machine is the parent process's, whose connection this child does not hold");
    m->close();
    return RIG_OK;
  });
}

rig_status_t rig_machine_open(rig_machine_t *m, const char *name, const rig_open_options_t *opts,
                              rig_device_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require(m != nullptr, "the machine is NULL");
    require(name != nullptr, "name is NULL");
    require(std::strchr(name, '@') == nullptr, "the name names a machine itself");
    std::string full = std::string(name) + "@" + m->name;
    return rig_open(full.c_str(), opts, out);
  });
}

}  // extern "C"
