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
 * clients are bounded by max_clients_per_user, each user apart. */
#include "config.hpp"
#include "service_path.hpp"
#include "user_clients.hpp"

#include <criterion/criterion.h>

#include <cstdlib>
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
}

Test(config, config_errors_name_their_line) {
  cr_assert(config_error("\nallow_users 1000\n").starts_with("line 2: "));
  cr_assert(config_error("colour = blue").find("unknown key colour") != std::string::npos);
  cr_assert(config_error("quota_bytes = -1").starts_with("line 1: "));
  cr_assert(config_error("quota_bytes = 12kb") != "");
  cr_assert(config_error("max_clients_per_user = -1").starts_with("line 1: "));
  cr_assert(config_error("cache_limit_bytes = -1").find("cache_limit_bytes is not a byte count: -1") !=
            std::string::npos);
  cr_assert(config_error("allow_users = no-such-user-here").find("no user") != std::string::npos);
  cr_assert(config_error("host_code = yes").find("allow or deny") != std::string::npos);
  cr_assert(config_error("test_knobs = yes").find("allow or refuse") != std::string::npos);
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
