// The served devices as a machine link's DEVICES accounts them (rigd
// --listen): id 0 is the machine's host, served last as CPU; ids 1 to n-1
// are the other served devices in their order.
#pragma once

#include "machine_channel.hpp"
#include "served.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace rigd {

// Every served device's account: its id, name, arch, budget, cache_bytes,
// and reach, the ids whose own memory its work reaches (rig_reaches, as
// the device records' reaches say; PROXY-65).
std::vector<rig::net::MachineAccount> machine_accounts(const ServedDevices &served);

// The served device of account id, or nullopt for no such account.
std::optional<size_t> served_of_account(uint32_t id, size_t served_count) noexcept;
// The account id of served device i.
uint32_t account_of_served(size_t i, size_t served_count) noexcept;

}  // namespace rigd
