// The machines of other hosts (rig/service.h's rig_machine_connect): a
// link to an agent, named for the life of the process, whose devices open
// as NAME@MACHINE.
#pragma once

#include "remote_link.hpp"
#include "rig_internal/machines.hpp"

#include <memory>
#include <string>

namespace rig::remote {

struct RemoteMachine : rig_machine {
  std::shared_ptr<RemoteLink> link;
  int pid;  // the process that connected

  std::string lost_reason() override;
  bool forked() const override;
  void close() override { link->close(); }
};

// What rig_machine_connect takes, its defaults applied.
struct MachineOptions {
  std::string name;  // "": "machine", "machine2", ...
  std::string key_file;
  std::string key_id;
  std::string transports;
  uint32_t failure_bound_ms = 10000;
};

// Whether name may name a machine: not empty, no '@', ',' or ':', and
// none of rigd's names ("rigd", "rigdN").
bool valid_machine_name(const std::string &name);
// Connects to the agent at address as a new machine; throws
// std::invalid_argument for a name that is invalid or held, and
// std::runtime_error with why it does not connect.
RemoteMachine *connect_machine(const std::string &address, MachineOptions options);
// The address $RIG_MACHINES lists for name ("name=HOST:PORT"), or "".
std::string listed_address(const std::string &name);
// The process's machine of another host named name, connecting first
// where it has none but $RIG_MACHINES lists "name=HOST:PORT"; nullptr
// where neither.
RemoteMachine *machine_named(const std::string &name);

}  // namespace rig::remote
