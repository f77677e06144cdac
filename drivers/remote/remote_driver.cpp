// The driver of other machines' devices, NAME@MACHINE for a machine of
// rig_machine_connect's (remote_machines.hpp), and rig_machine_connect.
#include "remote_device.hpp"
#include "remote_machines.hpp"

#include "rig_internal/errors.hpp"
#include "rig_internal/locks.hpp"

#include <cstddef>
#include <stdexcept>

namespace rig::remote {

namespace {

class RemoteDriver : public Driver {
 public:
  const char *prefix() const override { return "@machine"; }
  bool opens_prefix(const std::string &p) const override {
    return p.size() > 1 && p[0] == '@' && machine_named_or_listed(p.substr(1));
  }

  std::unique_ptr<DriverDevice> open(const std::string &name, const std::string &config, uint64_t start) override {
    auto at = name.rfind('@');
    std::string served = name.substr(0, at);
    RemoteMachine *m = machine_named(name.substr(at + 1));
    if (!m) throw std::runtime_error("this process has no machine named " + name.substr(at + 1));
    std::shared_ptr<RemoteLink> link = m->link;
    if (auto why = link->failure()) throw std::runtime_error(m->name + ": " + *why);
    const net::MachineAccount *account = link->account(served);
    if (!account) throw std::runtime_error("the agent at " + link->address() + " serves no device named " + served);
    if (!link->opened(account->id)) {
      // The agent opens the client's instance of the device, once per
      // connection.
      // The wire names an object for every request (wire_check): a fresh
      // one, which an OPEN makes nothing of.
      Reply r = link->request(account->id, link->fresh(), net::wire::Open{config});
      if (r.status != RIG_OK)
        throw std::runtime_error("the agent at " + link->address() + " refused " + served + " (" +
                                 rig_status_name(static_cast<rig_status_t>(r.status)) + "): " + r.why);
      link->opened_by_agent(account->id);
    }
    return std::make_unique<RemoteDevice>(link, *account, start);
  }

  // The devices of each of the process's machines of other hosts.
  void probe(const std::function<void(const std::string &, const std::string &)> &report) override {
    for (rig_machine *each : own_machines()) {
      auto *m = dynamic_cast<RemoteMachine *>(each);
      if (!m) continue;
      std::string why = m->lost_reason();
      for (const net::MachineAccount &a : m->link->devices()) report(a.name + "@" + m->name, why);
    }
  }

 private:
  static bool machine_named_or_listed(const std::string &name) {
    return dynamic_cast<RemoteMachine *>(find_machine(name)) ||
           (valid_machine_name(name) && !listed_address(name).empty());
  }
};

}  // namespace

}  // namespace rig::remote

namespace {
using rig::remote::RemoteDriver;
RIG_REGISTER_DRIVER(RemoteDriver)
}  // namespace

using namespace rig;

extern "C" {

rig_status_t rig_machine_connect(const char *address, const rig_machine_options_t *opts, rig_machine_t **machine) {
  RIG_API_CALL({
    refuse_inside_lock();
    if (machine) *machine = nullptr;
    require(address != nullptr, "address is NULL");
    remote::MachineOptions options;
    if (opts) {
      require(opts->size >= offsetof(rig_machine_options_t, name) + sizeof(opts->name),
              "rig_machine_options_t.size is too small");
      auto has = [&](size_t offset, size_t bytes) { return opts->size >= offset + bytes; };
      auto text = [](const char *s) { return s ? std::string(s) : std::string(); };
      require(!opts->name || *opts->name, "the machine's name is empty");
      options.name = text(opts->name);
      if (has(offsetof(rig_machine_options_t, key_file), sizeof opts->key_file)) options.key_file = text(opts->key_file);
      if (has(offsetof(rig_machine_options_t, key_id), sizeof opts->key_id)) options.key_id = text(opts->key_id);
      if (has(offsetof(rig_machine_options_t, transports), sizeof opts->transports))
        options.transports = text(opts->transports);
      if (has(offsetof(rig_machine_options_t, failure_bound_ms), sizeof opts->failure_bound_ms))
        options.failure_bound_ms = opts->failure_bound_ms;
    }
    rig_machine_t *m;
    try {
      m = remote::connect_machine(address, options);
    } catch (const std::invalid_argument &e) {
      throw_invalid(e.what());
    } catch (const std::runtime_error &e) {
      throw_open(e.what());
    }
    if (machine) *machine = m;
    return RIG_OK;
  });
}

}  // extern "C"
