// rigd: the per-host service.  It opens the host's devices, as any rig
// program does, and serves them to client processes through shared-memory
// rings (DESIGN.md "The per-host service").
//
//   rigd [--socket PATH] [--devices LIST] [--config FILE] [--metrics FILE]
//        [--log-level LEVEL] [--listen HOST:PORT] [--foreground]
//   rigd --help | --version
//
// It runs until SIGTERM or SIGINT, then ends its sessions, closes its
// devices, removes the socket it bound and exits 0; past its shutdown
// deadline it abandons the devices still busy and exits 1 (admission.hpp).
// SIGHUP reloads its policy from the config file.
#include "admission.hpp"
#include "config.hpp"
#include "descriptors.hpp"
#include "listener.hpp"
#include "machine_agent.hpp"
#include "log.hpp"
#include "metrics.hpp"
#include "served.hpp"

#include <rig/rig.h>

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <system_error>

namespace {

// The signals that end rigd, and SIGHUP, which reloads its policy:
// blocked in every thread and read from a signalfd by the admission loop.
sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

constexpr char usage_text[] =
    "usage: rigd [--socket PATH] [--devices LIST] [--config FILE] [--metrics FILE]\n"
    "            [--log-level LEVEL] [--listen HOST:PORT] [--foreground]\n"
    "       rigd --help | --version\n"
    "\n"
    "  --socket PATH   listen at PATH (default: $RIG_SERVICE, else\n"
    "                  $XDG_RUNTIME_DIR/rig/rigd.sock, else /run/rig/rigd.sock)\n"
    "  --devices LIST  serve the devices LIST names (MEM:0,SIM:0), not every one\n"
    "  --config FILE   admission and limits: allow_users, allow_groups,\n"
    "                  quota_bytes, arena_bytes, exports, export_fds, proxies\n"
    "                  (each also _per_user), max_clients_per_user, max_clients,\n"
    "                  cuda_contexts, admin_group, metrics_file,\n"
    "                  metrics_interval_ms, log_level, listen, machine_keys;\n"
    "                  SIGHUP reads it again\n"
    "  --metrics FILE  write the counters to FILE in Prometheus' text format\n"
    "  --log-level LEVEL  log error, warning, notice, info (the default) or\n"
    "                  debug lines and above, whatever the config file says\n"
    "  --listen HOST:PORT  serve the devices to other machines' clients there\n"
    "                  (port 0: the system picks), proving the keys of the\n"
    "                  config's machine_keys directory\n"
    "  --foreground    stay in the foreground (rigd never daemonizes itself)\n"
    "\n"
    "rigd(8) documents the service and its config file.\n";

// True, having printed it, where the only argument is --help or --version.
bool printed_information(int argc, char **argv) {
  if (argc != 2) return false;
  std::string_view arg = argv[1];
  if (arg == "--help" || arg == "-h") {
    std::fputs(usage_text, stdout);
  } else if (arg == "--version") {
    int loaded = rig_version();
    std::printf("rigd %d.%d.%d (librig %d.%d.%d)\n", RIG_VERSION_MAJOR, RIG_VERSION_MINOR, RIG_VERSION_PATCH,
                loaded / 10000, loaded / 100 % 100, loaded % 100);
  } else {
    return false;
  }
  return true;
}

// The policy of options' config file (the default policy where it names
// none), its log level set unless the command line set one.  Throws
// std::invalid_argument saying why the file does not parse.
rigd::Policy read_policy(const rigd::Options &o) {
  rigd::Policy policy;
  if (!o.config_file.empty()) {
    std::ifstream in(o.config_file);
    if (!in) throw std::invalid_argument("cannot read " + o.config_file);
    try {
      policy = rigd::parse_config(in);
    } catch (const std::invalid_argument &e) {
      throw std::invalid_argument(o.config_file + ": " + e.what());
    }
  }
  rigd::set_log_level(o.log_level.value_or(policy.log_level));
  return policy;
}

rigd::Options options_of(int argc, char **argv) {
  rigd::Options o = rigd::parse_arguments({argv, static_cast<size_t>(argc)});
  o.policy = read_policy(o);
  return o;
}

}  // namespace

int main(int argc, char **argv) {
  if (printed_information(argc, argv)) return 0;
  // A usage error names the bad argument, shows the usage and exits 2.
  try {
    rigd::parse_arguments({argv, static_cast<size_t>(argc)});
  } catch (const std::invalid_argument &e) {
    std::fprintf(stderr, "rigd: %s\n%s", e.what(), usage_text);
    return 2;
  }
  try {
    rigd::Options options = options_of(argc, argv);
    // A --listen that cannot work refuses to start, as a usage error does.
    std::optional<rigd::MachineListen> machines;
    try {
      machines = rigd::machine_listen(options);
    } catch (const std::invalid_argument &e) {
      rigd::log_line(rigd::LogLevel::error, e.what());
      return 2;
    }
    rigd::raise_descriptor_limit();
    sigset_t handled = handled_signals();
    pthread_sigmask(SIG_BLOCK, &handled, nullptr);
    int signals = signalfd(-1, &handled, SFD_CLOEXEC);
    if (signals < 0) throw std::system_error(errno, std::generic_category(), "signalfd");
    rigd::ServedDevices served(options.devices, options.policy.cache_limit_bytes,
                               static_cast<uint32_t>(options.policy.shared_rows));
    // Before the listener: it ends after it, whose close ends a snapshot
    // it waits for.
    std::optional<rigd::MetricsWriter> metrics;
    rigd::Listener listener(options.socket);
    if (std::string file = options.metrics_file.empty() ? options.policy.metrics_file : options.metrics_file;
        !file.empty())
      metrics.emplace(file, std::chrono::milliseconds(options.policy.metrics_interval_ms), listener.address());
    rigd::log_line(rigd::LogLevel::notice, "serving " + std::to_string(served.size()) + " devices on " +
                                               (listener.activated() ? "the socket systemd passed" : options.socket));
    rigd::serve_clients(listener, signals, served, options.policy, [&] { return read_policy(options); },
                        std::move(machines));
    close(signals);
    rigd::log_line(rigd::LogLevel::notice, "stopped");
    return 0;
  } catch (const std::exception &e) {
    rigd::log_line(rigd::LogLevel::error, e.what());
    return 1;
  }
}
