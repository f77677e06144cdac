// rigd: the per-host service.  It opens the host's devices, as any rig
// program does, and serves them to client processes through shared-memory
// rings (DESIGN.md "The per-host service").
//
//   rigd [--socket PATH] [--devices LIST] [--config FILE] [--foreground]
//
// It runs until SIGTERM or SIGINT, then ends its sessions, closes its
// devices, removes the socket it bound and exits 0.
#include "admission.hpp"
#include "config.hpp"
#include "descriptors.hpp"
#include "listener.hpp"
#include "served.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace {

// The signals that end rigd, blocked in every thread and read from a
// signalfd by the admission loop.
sigset_t ending_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

rigd::Options options_of(int argc, char **argv) {
  rigd::Options o = rigd::parse_arguments({argv, static_cast<size_t>(argc)});
  if (!o.config_file.empty()) {
    std::ifstream in(o.config_file);
    if (!in) throw std::invalid_argument("cannot read " + o.config_file);
    try {
      o.policy = rigd::parse_config(in);
    } catch (const std::invalid_argument &e) {
      throw std::invalid_argument(o.config_file + ": " + e.what());
    }
  }
  return o;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    rigd::Options options = options_of(argc, argv);
    rigd::raise_descriptor_limit();
    sigset_t ending = ending_signals();
    pthread_sigmask(SIG_BLOCK, &ending, nullptr);
    int signals = signalfd(-1, &ending, SFD_CLOEXEC);
    if (signals < 0) throw std::system_error(errno, std::generic_category(), "signalfd");
    rigd::ServedDevices served(options.devices, options.policy.cache_limit_bytes);
    rigd::Listener listener(options.socket);
    std::fprintf(stderr, "rigd: serving %zu devices on %s\n", served.size(),
                 listener.activated() ? "the socket systemd passed" : options.socket.c_str());
    rigd::serve_clients(listener, signals, served, options.policy);
    close(signals);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "rigd: %s\n", e.what());
    return 1;
  }
}
