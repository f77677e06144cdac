// librig's door to the machines module (machine_module.hpp): loaded once,
// at the first connection to another machine.
#pragma once

#include "machine_channel.hpp"

#include <memory>
#include <string>

namespace rig::remote {

// A channel to the agent at address, made by the module; throws
// std::runtime_error with the reason where the module does not load or
// the channel does not connect.
std::unique_ptr<net::ClientChannel> module_channel(const std::string &address, const std::string &key_file,
                                                   const std::string &key_id, const net::ClientChannel::Options &options,
                                                   net::ChannelHandlers handlers);

}  // namespace rig::remote
