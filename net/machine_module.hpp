// The machines module, rig-machines.so: the client's end of the link to
// other machines (machine_channel.hpp) with UCX and OpenSSL, which librig
// loads with dlopen at a process's first connection to another machine.
// Linked into librig, UCX's libraries would load into every program that
// links librig, whose constructors install signal handlers (SIGSEGV,
// SIGBUS, SIGILL, SIGFPE and SIGHUP) and memory hooks, in programs that
// never connect to another machine.
//
// The module exports one function of C linkage, kMachineModuleConnect, of
// type MachineModuleConnect; librig calls the channel it makes through its
// virtual calls alone.  Both are built from one tree: abi is
// kMachineModuleAbi, and a module of another answers why not.
#pragma once

#include "machine_channel.hpp"

#include <cstdint>
#include <string>

namespace rig::net {

inline constexpr uint32_t kMachineModuleAbi = 1;
inline constexpr const char *kMachineModuleConnect = "rig_machine_module_connect";
// The module's file name, in the directory "rig" beside librig's own.
inline constexpr const char *kMachineModuleFile = "rig-machines.so";

// Connects to address with the key of key_file, whose id in the agent's
// ring is key_id, as ClientChannel::connect does: the channel, which the
// caller deletes, or NULL with *why.
using MachineModuleConnect = ClientChannel *(uint32_t abi, const std::string &address, const std::string &key_file,
                                             const std::string &key_id, const ClientChannel::Options &options,
                                             ChannelHandlers &&handlers, std::string *why);

}  // namespace rig::net
