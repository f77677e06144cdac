// The served devices' accounts (remote_accounts.hpp).
#include "remote_accounts.hpp"

namespace rigd {

std::optional<size_t> served_of_account(uint32_t id, size_t served_count) noexcept {
  if (served_count == 0 || id >= served_count) return std::nullopt;
  return id == 0 ? served_count - 1 : size_t{id} - 1;
}

uint32_t account_of_served(size_t i, size_t served_count) noexcept {
  return i + 1 == served_count ? 0 : static_cast<uint32_t>(i + 1);
}

std::vector<rig::net::MachineAccount> machine_accounts(const ServedDevices &served) {
  const std::vector<rig_proxy_device_record> &records = served.records();
  std::vector<rig::net::MachineAccount> accounts(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const rig_proxy_device_record &r = records[i];
    rig::net::MachineAccount &a = accounts[account_of_served(i, records.size())];
    a.id = account_of_served(i, records.size());
    a.name = r.name;
    a.arch = r.arch;
    a.budget = static_cast<uint64_t>(r.budget);
    a.cache_bytes = static_cast<uint64_t>(r.cache_bytes);
    // A record knows the first 64 devices' memory; rigd serves fewer.
    for (size_t j = 0; j < records.size() && j < 64; ++j)
      if (r.reaches & (uint64_t{1} << j)) a.reach.push_back(account_of_served(j, records.size()));
  }
  return accounts;
}

}  // namespace rigd
