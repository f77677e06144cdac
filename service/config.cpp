// rigd's command line, config file and admission policy (config.hpp).
#include "config.hpp"

#include "service_path.hpp"

#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace rigd {

namespace {

std::string trim(std::string_view s) {
  auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  auto last = s.find_last_not_of(" \t\r");
  return std::string(s.substr(first, last - first + 1));
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> items;
  while (!s.empty()) {
    auto comma = s.find(',');
    std::string item = trim(s.substr(0, comma));
    if (!item.empty()) items.push_back(item);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return items;
}

template <class Number>
bool parse_number(const std::string &s, Number &out) {
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), out);
  return error == std::errc() && end == s.data() + s.size();
}

uid_t user_id(const std::string &name) {
  uid_t id;
  if (parse_number(name, id)) return id;
  if (const passwd *pw = getpwnam(name.c_str())) return pw->pw_uid;
  throw std::invalid_argument("no user " + name);
}

gid_t group_id(const std::string &name) {
  gid_t id;
  if (parse_number(name, id)) return id;
  if (const group *gr = getgrnam(name.c_str())) return gr->gr_gid;
  throw std::invalid_argument("no group " + name);
}

// The limit key names (a client's or, *is_user, a user's), or NULL.
Limit *limit_of(Limits &limits, const std::string &key, bool *is_user) {
  for (size_t k = 0; k < held_kinds; ++k) {
    auto kind = static_cast<Held>(k);
    *is_user = key == user_key(kind);
    if (*is_user || key == client_key(kind)) return &limits[kind];
  }
  return nullptr;
}

}  // namespace

Options parse_arguments(std::span<char *const> args) {
  Options o;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view arg = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::invalid_argument(std::string(arg) + " needs a value");
      return args[++i];
    };
    if (arg == "--socket") {
      o.socket = value();
    } else if (arg == "--devices") {
      o.devices = split_list(value());
      if (o.devices.empty()) throw std::invalid_argument("--devices names no device");
    } else if (arg == "--config") {
      o.config_file = value();
    } else if (arg == "--metrics") {
      o.metrics_file = value();
    } else if (arg == "--listen") {
      o.listen = value();
    } else if (arg == "--foreground") {
      o.foreground = true;
    } else if (arg == "--log-level") {
      o.log_level = parse_log_level(value());
    } else {
      throw std::invalid_argument("unknown argument " + std::string(arg));
    }
  }
  if (o.socket.empty()) o.socket = rig::proxy::service_socket_path();
  return o;
}

Policy parse_config(std::istream &in) {
  Policy p;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto where = [&] { return "line " + std::to_string(number) + ": "; };
    std::string text = trim(line.substr(0, line.find('#')));
    if (text.empty()) continue;
    auto equals = text.find('=');
    if (equals == std::string::npos) throw std::invalid_argument(where() + "not `key = value`");
    std::string key = trim(std::string_view(text).substr(0, equals));
    std::string value = trim(std::string_view(text).substr(equals + 1));
    bool is_user = false;
    try {
      if (key == "allow_users") {
        for (const auto &name : split_list(value)) p.users.push_back(user_id(name));
      } else if (key == "allow_groups") {
        for (const auto &name : split_list(value)) p.groups.push_back(group_id(name));
      } else if (Limit *limit = limit_of(p.limits, key, &is_user)) {
        int64_t &bound = is_user ? limit->user : limit->client;
        if (!parse_number(value, bound) || bound < 0) throw std::invalid_argument(key + " is not a count: " + value);
      } else if (key == "cuda_contexts") {
        p.cuda_contexts = parse_cuda_contexts(value);
      } else if (key == "cache_limit_bytes") {
        if (!parse_number(value, p.cache_limit_bytes) || p.cache_limit_bytes < 0)
          throw std::invalid_argument("cache_limit_bytes is not a byte count: " + value);
      } else if (key == "shared_rows") {
        if (!parse_number(value, p.shared_rows) || p.shared_rows < 1 || p.shared_rows > max_shared_rows)
          throw std::invalid_argument("shared_rows is not a count from 1 to " + std::to_string(max_shared_rows) +
                                      ": " + value);
      } else if (key == "max_clients_per_user" || key == "max_clients") {
        int64_t &bound = key == "max_clients" ? p.max_clients : p.max_clients_per_user;
        if (!parse_number(value, bound) || bound < 0) throw std::invalid_argument(key + " is not a count: " + value);
      } else if (key == "host_code") {
        if (value != "allow" && value != "deny") throw std::invalid_argument("host_code is allow or deny, not " + value);
        p.host_code = value == "allow";
      } else if (key == "test_knobs") {
        if (value != "allow" && value != "refuse")
          throw std::invalid_argument("test_knobs is allow or refuse, not " + value);
        p.test_knobs = value == "allow";
      } else if (key == "shutdown_deadline_ms") {
        if (!parse_number(value, p.shutdown_deadline_ms) || p.shutdown_deadline_ms <= 0)
          throw std::invalid_argument("shutdown_deadline_ms is not a positive count of milliseconds: " + value);
      } else if (key == "log_level") {
        p.log_level = parse_log_level(value);
      } else if (key == "admin_group") {
        p.admin_group = group_id(value);
      } else if (key == "metrics_file") {
        p.metrics_file = value;
      } else if (key == "listen") {
        p.listen = value;
      } else if (key == "machine_keys") {
        p.machine_keys = value;
      } else if (key == "metrics_interval_ms") {
        if (!parse_number(value, p.metrics_interval_ms) || p.metrics_interval_ms <= 0)
          throw std::invalid_argument("metrics_interval_ms is not a positive count of milliseconds: " + value);
      } else {
        throw std::invalid_argument("unknown key " + key);
      }
    } catch (const std::invalid_argument &e) {
      throw std::invalid_argument(where() + e.what());
    }
  }
  return p;
}

bool admits(const Policy &policy, uid_t uid, gid_t gid, std::span<const gid_t> groups) {
  if (policy.users.empty() && policy.groups.empty()) return true;
  auto listed = [](const auto &list, auto id) { return std::find(list.begin(), list.end(), id) != list.end(); };
  if (listed(policy.users, uid) || listed(policy.groups, gid)) return true;
  return std::any_of(groups.begin(), groups.end(), [&](gid_t g) { return listed(policy.groups, g); });
}

}  // namespace rigd
