// Loads rig-machines.so from the directory "rig" beside librig's own file
// (where the build and the packages put it), once per process.
#include "machine_module_loader.hpp"

#include "machine_module.hpp"

#include <dlfcn.h>
#include <signal.h>

#include <cstring>
#include <mutex>
#include <stdexcept>

namespace rig::remote {

namespace {

// UCX's constructors install handlers of their own for signals the
// program may handle (machine_module.hpp): each signal's action is put
// back as it was before the load.
struct SignalActions {
  struct sigaction before[NSIG];
  SignalActions() {
    for (int s = 1; s < NSIG; s++) sigaction(s, nullptr, &before[s]);
  }
  void restore() const {
    for (int s = 1; s < NSIG; s++) {
      struct sigaction now;
      if (sigaction(s, nullptr, &now) != 0) continue;
      if (now.sa_handler != before[s].sa_handler || now.sa_flags != before[s].sa_flags) sigaction(s, &before[s], nullptr);
    }
  }
};

std::string module_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&module_channel), &info) == 0 || !info.dli_fname)
    throw std::runtime_error("rig cannot find its own library, beside which its machines module lies");
  std::string self = info.dli_fname;
  auto slash = self.rfind('/');
  std::string dir = slash == std::string::npos ? "." : self.substr(0, slash);
  return dir + "/rig/" + net::kMachineModuleFile;
}

net::MachineModuleConnect *load() {
  static std::once_flag once;
  static net::MachineModuleConnect *connect = nullptr;
  static std::string failed;
  std::call_once(once, [] {
    std::string path = module_path();
    SignalActions actions;
    void *module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    actions.restore();
    if (!module) {
      const char *error = dlerror();
      failed = "rig cannot load its machines module: " + std::string(error ? error : path);
      return;
    }
    connect = reinterpret_cast<net::MachineModuleConnect *>(dlsym(module, net::kMachineModuleConnect));
    if (!connect) failed = path + " has no " + net::kMachineModuleConnect + ": it is no machines module of rig's";
  });
  if (!connect) throw std::runtime_error(failed);
  return connect;
}

}  // namespace

std::unique_ptr<net::ClientChannel> module_channel(const std::string &address, const std::string &key_file,
                                                   const std::string &key_id, const net::ClientChannel::Options &options,
                                                   net::ChannelHandlers handlers) {
  std::string why;
  net::ClientChannel *channel = load()(net::kMachineModuleAbi, address, key_file, key_id, options, std::move(handlers), &why);
  if (!channel) throw std::runtime_error(why);
  return std::unique_ptr<net::ClientChannel>(channel);
}

}  // namespace rig::remote
