// rig/service.h's machines, whatever their driver: a rigd of this host
// (drivers/proxy) or the agent of another machine (drivers/remote).  Each
// is a record that lives for the process, named for its life; the core
// keeps the registry and answers rig_machine_name, _lost and _open.
#pragma once

#include <rig/service.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

struct rig_machine {
  virtual ~rig_machine() = default;
  // Why the machine's connection is lost, "" while it works.  Called from
  // any thread; must not block.
  virtual std::string lost_reason() = 0;
  // Whether the connection is a parent's, seen in a child after fork: the
  // child has none of its parent's machines.
  virtual bool forked() const = 0;
  // Begins the job's close (rig_machine_close): the connection ends and
  // lost_reason() answers "the job is closed" from then, unless it had a
  // reason already, which stays.  Called from any thread, more than once.
  virtual void close() = 0;

  std::string name;  // set once, by adopt_machine
  std::mutex why_mu;
  std::string why;  // set once, when the machine is first seen lost
  std::atomic<bool> lost{false};
};

namespace rig {

// The process's own machine named name (none of a parent's), or nullptr.
rig_machine *find_machine(const std::string &name);
// The process's own machines.
std::vector<rig_machine *> own_machines();
// Makes m, a record that lives for the process, the process's machine
// named name, or where name is empty named base, then base2, base3, ...:
// the first that no machine of the process holds.  False, adopting
// nothing, where name is held already.
bool adopt_machine(rig_machine *m, const std::string &name, const std::string &base);

}  // namespace rig
