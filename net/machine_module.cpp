// rig-machines.so's one entry (machine_module.hpp).
#include "machine_module.hpp"

#include "keys.hpp"

#include <exception>
#include <type_traits>

extern "C" __attribute__((visibility("default"))) rig::net::ClientChannel *rig_machine_module_connect(
    uint32_t abi, const std::string &address, const std::string &key_file, const std::string &key_id,
    const rig::net::ClientChannel::Options &options, rig::net::ChannelHandlers &&handlers, std::string *why) {
  using namespace rig::net;
  static_assert(std::is_same_v<decltype(rig_machine_module_connect), MachineModuleConnect>);
  try {
    if (abi != kMachineModuleAbi) {
      *why = "rig's machines module is of ABI " + std::to_string(kMachineModuleAbi) + ", librig's " +
             std::to_string(abi) + ": install librig and the module of one build";
      return nullptr;
    }
    auto key = load_client_key(key_file, key_id);
    if (!key) {
      *why = address + ": " + key.error().message;
      return nullptr;
    }
    auto channel = ClientChannel::connect(address, key.value(), options, std::move(handlers));
    if (!channel) {
      *why = channel.error().message;
      return nullptr;
    }
    return channel.value().release();
  } catch (const std::exception &e) {
    *why = address + ": " + e.what();
    return nullptr;
  }
}
