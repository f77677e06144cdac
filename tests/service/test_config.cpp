/* Tests of rigd's command line, config file and admission policy
 * (service/config.hpp).
 *
 * No rule ID: rigd's configuration is the design's (DESIGN.md "The
 * per-host service": SO_PEERCRED admission by policy; issue #8's config
 * keys).  Asserts: the arguments and their errors; the socket path's
 * defaults ($RIG_SERVICE, $XDG_RUNTIME_DIR/rig/rigd.sock,
 * /run/rig/rigd.sock); config lines, comments and errors naming their
 * line; a policy without lists admits everyone, one with lists only a
 * listed uid, primary group or supplementary group; a user's connected
 * clients are bounded by max_clients_per_user, each user apart, and all
 * by max_clients; the limits' keys (rigd(8), LIMITS) and defaults; an
 * account counts within its client's and its user's limits, refusing
 * with the key and numbers, and gives all back as it goes; refusal log
 * lines are bounded and say how many were dropped; the admin channel's
 * and the metrics file's keys. */
#include "config.hpp"
#include "service_path.hpp"
#include "account.hpp"
#include "refusal_log.hpp"
#include "user_clients.hpp"

#include <criterion/criterion.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace rigd;

namespace {

Options parse(std::vector<const char *> args) {
  args.insert(args.begin(), "rigd");
  return parse_arguments({const_cast<char *const *>(args.data()), args.size()});
}

bool refuses_arguments(std::vector<const char *> args) {
  try {
    parse(args);
    return false;
  } catch (const std::invalid_argument &) {
    return true;
  }
}

Policy config(const char *text) {
  std::istringstream in(text);
  return parse_config(in);
}

std::string config_error(const char *text) {
  try {
    config(text);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

}  // namespace

Test(config, arguments) {
  Options o = parse({"--socket", "/s/rigd.sock", "--devices", "SIM:0, MEM:0", "--config", "c.conf", "--foreground"});
  cr_assert(o.socket == "/s/rigd.sock");
  cr_assert(o.devices == (std::vector<std::string>{"SIM:0", "MEM:0"}));
  cr_assert(o.config_file == "c.conf");
  cr_assert(o.foreground);
  cr_assert(refuses_arguments({"--socket"}), "a missing value");
  cr_assert(refuses_arguments({"--devices", " , "}), "no device");
  cr_assert(refuses_arguments({"--verbose"}), "an unknown argument");
}

/* rigd(8), LOGS: --log-level and log_level name syslog's levels, info by
 * default; another name is refused, saying which are. */
Test(config, log_levels_by_name) {
  cr_assert(!parse({}).log_level, "no --log-level: the config's level holds");
  cr_assert(parse({"--log-level", "debug"}).log_level == LogLevel::debug);
  cr_assert(refuses_arguments({"--log-level", "loud"}), "an unknown level");
  cr_assert(config("").log_level == LogLevel::info, "info by default");
  cr_assert(config("log_level = error").log_level == LogLevel::error);
  cr_assert(config("log_level = warning").log_level == LogLevel::warning);
  cr_assert(config("log_level = notice").log_level == LogLevel::notice);
  cr_assert(config_error("log_level = verbose").find("error, warning, notice, info or debug, not verbose") !=
            std::string::npos);
  set_log_level(LogLevel::warning);
  cr_assert(logs(LogLevel::error) && logs(LogLevel::warning) && !logs(LogLevel::notice) && !logs(LogLevel::debug));
  set_log_level(default_log_level);
}

Test(config, socket_path_defaults) {
  setenv("RIG_SERVICE", "/a/rigd.sock", 1);
  setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
  cr_assert(parse({}).socket == "/a/rigd.sock");
  setenv("RIG_SERVICE", "", 1);
  cr_assert(rig::proxy::service_socket_path() == "/run/user/7/rig/rigd.sock");
  // A client tries the packaged rigd's socket after the user's own.
  cr_assert(rig::proxy::service_socket_candidates() ==
            (std::vector<std::string>{"/run/user/7/rig/rigd.sock", "/run/rig/rigd.sock"}));
  unsetenv("XDG_RUNTIME_DIR");
  cr_assert(rig::proxy::service_socket_path() == "/run/rig/rigd.sock");
  cr_assert(rig::proxy::service_socket_candidates() == std::vector<std::string>{"/run/rig/rigd.sock"});
  setenv("RIG_SERVICE", "/a/rigd.sock", 1);
  cr_assert(rig::proxy::service_socket_candidates() == std::vector<std::string>{"/a/rigd.sock"});
}

Test(config, config_lines) {
  Policy p = config(
      "# who may connect\n"
      "allow_users = 1000, 1001\n"
      "\n"
      "allow_groups = 0   # root's group\n"
      "quota_bytes = 1048576\n"
      "cache_limit_bytes = 4096\n"
      "max_clients_per_user = 8\n");
  cr_assert(p.users == (std::vector<uid_t>{1000, 1001}));
  cr_assert(p.groups == (std::vector<gid_t>{0}));
  cr_assert(p.quota_bytes() == 1048576);
  cr_assert(p.max_clients_per_user == 8);
  cr_assert(p.cache_limit_bytes == 4096);
  cr_assert(config("").cache_limit_bytes == 64 << 20, "64 MiB cached per device by default");
  cr_assert(config("").max_clients_per_user == 256, "256 clients a user by default");
  cr_assert(config("allow_users = root").users == (std::vector<uid_t>{0}), "a user by name");
  cr_assert(!config("").host_code, "rigd runs no client's host code by default");
  cr_assert(config("host_code = allow").host_code);
  cr_assert(!config("host_code = deny").host_code);
  cr_assert(!config("").test_knobs, "test knobs are refused by default");
  cr_assert(config("test_knobs = allow").test_knobs && !config("test_knobs = refuse").test_knobs);
  cr_assert(config("").shutdown_deadline_ms == 10000, "SIGTERM waits 10 s at most by default");
  cr_assert(config("shutdown_deadline_ms = 250").shutdown_deadline_ms == 250);
}

Test(config, config_errors_name_their_line) {
  cr_assert(config_error("\nallow_users 1000\n").starts_with("line 2: "));
  cr_assert(config_error("colour = blue").find("unknown key colour") != std::string::npos);
  cr_assert(config_error("quota_bytes = -1").starts_with("line 1: "));
  cr_assert(config_error("quota_bytes = 12kb") != "");
  cr_assert(config_error("max_clients_per_user = -1").starts_with("line 1: "));
  cr_assert(config_error("cache_limit_bytes = -1").find("cache_limit_bytes is not a byte count: -1") !=
            std::string::npos);
  cr_assert(config_error("shared_rows = 0").find("shared_rows is not a count from 1 to 1048576: 0") !=
            std::string::npos);
  cr_assert(config_error("shared_rows = 1048577") != "");
  cr_assert(config("").shared_rows == 65536 && config("shared_rows = 8").shared_rows == 8);
  cr_assert(config_error("allow_users = no-such-user-here").find("no user") != std::string::npos);
  cr_assert(config_error("host_code = yes").find("allow or deny") != std::string::npos);
  cr_assert(config_error("test_knobs = yes").find("allow or refuse") != std::string::npos);
  cr_assert(config_error("shutdown_deadline_ms = 0").find("shutdown_deadline_ms is not a positive count") !=
            std::string::npos);
}

/* rigd(8), ADMIN CHANNEL and METRICS: their keys and --metrics. */
Test(config, admin_and_metrics_keys) {
  cr_assert(!config("").admin_group, "no admin group by default");
  cr_assert(config("admin_group = 4321").admin_group == gid_t{4321});
  cr_assert(config("admin_group = root").admin_group == gid_t{0});
  cr_assert(config("").metrics_file.empty() && config("").metrics_interval_ms == 5000);
  Policy p = config("metrics_file = /var/lib/rig.prom\nmetrics_interval_ms = 250");
  cr_assert(p.metrics_file == "/var/lib/rig.prom" && p.metrics_interval_ms == 250);
  cr_assert(config_error("metrics_interval_ms = 0").find("metrics_interval_ms is not a positive count") !=
            std::string::npos);
  cr_assert(config_error("admin_group = no-such-group-here").find("no group") != std::string::npos);
  cr_assert(parse({"--metrics", "/tmp/m.prom"}).metrics_file == "/tmp/m.prom");
  cr_assert(refuses_arguments({"--metrics"}), "--metrics needs a value");
}

Test(config, policy_admits_listed_peers_only) {
  Policy open;
  cr_assert(admits(open, 1234, 1234, {}), "no lists: the socket's mode decides");
  Policy p;
  p.users = {1000};
  p.groups = {50};
  std::vector<gid_t> none, staff{20, 50};
  cr_assert(admits(p, 1000, 1000, none), "a listed user");
  cr_assert(admits(p, 2000, 50, none), "a listed primary group");
  cr_assert(admits(p, 2000, 2000, staff), "a listed supplementary group");
  cr_assert(!admits(p, 2000, 2000, none), "neither user nor group listed");
  cr_assert(!admits(p, 0, 0, none), "root is not admitted unless listed");
}

Test(config, each_users_clients_are_bounded_apart) {
  rigd::UserClients users(2);
  cr_assert(users.join(1000) && users.join(1000), "two clients of a user");
  cr_assert(!users.join(1000), "not a third");
  cr_assert(users.join(1001), "another user's count is its own");
  users.leave(1000);
  cr_assert(users.join(1000), "one gone, another comes");
  rigd::UserClients unbounded(0);
  for (int i = 0; i < 1000; i++) cr_assert(unbounded.join(1000), "0: no bound");
}

Test(config, all_clients_are_bounded_by_max_clients) {
  rigd::UserClients users(0, {}, 3);
  cr_assert(users.join(1000) && users.join(1001) && users.join(1002), "three clients of any users");
  cr_assert(!users.join(1003) && users.clients() == 3, "not a fourth");
  users.leave(1001);
  cr_assert(users.join(1003), "one gone, another comes");
  cr_assert(config("").max_clients == 4096 && config("max_clients = 8").max_clients == 8);
}

Test(config, limits_keys_and_defaults) {
  Policy d = config("");
  cr_assert(d.quota_bytes() == 0 && d.limits[Held::device_bytes].user == 0, "device memory unbounded by default");
  cr_assert(d.limits[Held::arena_bytes].client == int64_t{16} << 30 &&
            d.limits[Held::arena_bytes].user == int64_t{64} << 30);
  cr_assert(d.limits[Held::exports].client == 4096 && d.limits[Held::exports].user == 16384);
  cr_assert(d.limits[Held::export_fds].client == 256 && d.limits[Held::export_fds].user == 1024);
  cr_assert(d.limits[Held::proxies].client == 1024 && d.limits[Held::proxies].user == 8192);
  cr_assert(d.limits[Held::image_bytes].client == int64_t{1} << 30 &&
            d.limits[Held::image_bytes].user == int64_t{4} << 30);
  cr_assert(d.limits[Held::handles].client == 65536 && d.limits[Held::handles].user == 262144);
  Policy images = config("image_bytes = 10\nimage_bytes_per_user = 11\nhandles = 12\nhandles_per_user = 13\n");
  cr_assert(images.limits[Held::image_bytes].client == 10 && images.limits[Held::image_bytes].user == 11 &&
            images.limits[Held::handles].client == 12 && images.limits[Held::handles].user == 13);
  Policy p = config(
      "quota_bytes_per_user = 7\narena_bytes = 1\narena_bytes_per_user = 2\nexports = 3\nexports_per_user = 4\n"
      "export_fds = 5\nexport_fds_per_user = 6\nproxies = 0\nproxies_per_user = 9\n");
  cr_assert(p.limits[Held::device_bytes].user == 7 && p.limits[Held::arena_bytes].client == 1 &&
            p.limits[Held::arena_bytes].user == 2 && p.limits[Held::exports].client == 3 &&
            p.limits[Held::exports].user == 4 && p.limits[Held::export_fds].client == 5 &&
            p.limits[Held::export_fds].user == 6 && p.limits[Held::proxies].client == 0 &&
            p.limits[Held::proxies].user == 9);
  cr_assert(config_error("exports_per_user = -1").find("line 1: exports_per_user is not a count: -1") == 0);
}

Test(config, an_account_counts_within_its_clients_and_its_users_limits) {
  rigd::Limits limits;
  limits[Held::exports] = {3, 5};
  rigd::UserClients users(0, limits);
  {
    rigd::Account first(users, 1000), second(users, 1000), other(users, 1001);
    cr_assert(first.take(Held::exports, 3).empty());
    cr_assert(first.take(Held::exports, 1) == "rigd's limit exports is 3: the client holds 3 and asks 1 more");
    cr_assert(second.take(Held::exports, 2).empty());
    cr_assert(second.take(Held::exports, 1) ==
              "rigd's limit exports_per_user is 5: the user's clients hold 5 and the client asks 1 more");
    cr_assert(other.take(Held::exports, 3).empty(), "another user's count is its own");
    cr_assert(users.total(Held::exports) == 8);
    first.give(Held::exports, 1);
    cr_assert(second.take(Held::exports, 1).empty(), "one given back, one more fits");
    cr_assert(!second.take(Held::exports, INT64_MAX).empty(), "no count overflows");
  }
  cr_assert(users.total(Held::exports) == 0, "the accounts gave everything back as they went");
}

Test(config, refusal_log_lines_are_bounded_and_say_how_many_were_dropped) {
  std::fflush(stderr);
  int saved = dup(STDERR_FILENO);
  FILE *captured = std::tmpfile();
  cr_assert(saved >= 0 && captured && dup2(fileno(captured), STDERR_FILENO) >= 0);
  int burst = static_cast<int>(rigd::refusal_log_burst);
  for (int i = 0; i < burst + 5; ++i) rigd::log_refusal("line " + std::to_string(i));
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(1100 / rigd::refusal_log_per_second)));
  rigd::log_refusal("after");
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::rewind(captured);
  std::vector<std::string> lines;
  char line[256];
  while (std::fgets(line, sizeof line, captured)) lines.emplace_back(line);
  std::fclose(captured);
  cr_assert(lines.size() == static_cast<size_t>(burst) + 2, "%zu lines for %d refusals", lines.size(), burst + 6);
  cr_assert(lines[0] == "rigd: line 0\n" &&
            lines[static_cast<size_t>(burst) - 1] == "rigd: line " + std::to_string(burst - 1) + "\n");
  cr_assert(lines[static_cast<size_t>(burst)].starts_with("rigd: 5 refusal lines dropped"), "%s",
            lines[static_cast<size_t>(burst)].c_str());
  cr_assert(lines.back() == "rigd: after\n");
}
