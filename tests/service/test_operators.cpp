/* Tests of what operators see of rigd and do to it (rigd(8), ADMIN
 * CHANNEL and METRICS; rig(1)'s clients, drop and metrics), against the
 * built rigd and the built rig tool, with clients that are processes on
 * librig's public API.
 *
 * No rule ID: rigd's counters, admin channel and metrics are the design's
 * (DESIGN.md "The per-host service", Operators) and rigd(8)'s.  Asserted:
 * three clients with known allocations appear in `rig clients --json`
 * with their exact bytes per served device, pids and users; `rig drop` of
 * one loses its proxies and returns its memory to what rigd held without
 * it while the others go on working; a user neither root nor of
 * admin_group is refused the admin channel with the reason, and one of
 * admin_group is answered; rigd's metrics file parses as Prometheus text
 * and its counts match `rig clients`; malformed admin requests, and
 * peers that ask and never read, are answered or refused while rigd
 * serves on and gives back what they held. */
#include "client_process.hpp"
#include "command_named.hpp"
#include "json_reader.hpp"
#include "prometheus_text.hpp"
#include "rigd_process.hpp"
#include "tool_run.hpp"

#include "protocol.h"

#include <rig/rig.h>
#include <rig/service.h>

#include <criterion/criterion.h>

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace {

constexpr int64_t mib = 1 << 20;
// A test's users, where the test runs as root: one outside admin_group,
// and its group.
constexpr uid_t outsider = 61236;
constexpr gid_t admin_gid = 61237;

// What a holder asks of its client: to end, to work on what it holds, or
// to say whether its proxies are lost.
enum Order : uint64_t { end_now = 0, work = 2, report_lost = 3 };

using Allocations = std::vector<std::pair<std::string, int64_t>>;  // served device, bytes

// A client that allocates allocs on the rigd at socket, says so on link,
// then does what the test orders: each order's answer is 1 where it held.
pid_t start_holder(const std::string &socket, Channel &link, const Allocations &allocs) {
  pid_t pid = fork_client(
      [&] {
        setenv("RIG_SERVICE", socket.c_str(), 1);
        std::vector<rig_device_t *> devices;
        std::vector<rig_buffer_t *> buffers;
        for (const auto &[name, bytes] : allocs) {
          rig_device_t *d = nullptr;
          rig_buffer_t *b = nullptr;
          require(rig_open((name + "@rigd").c_str(), nullptr, &d) == RIG_OK, "open %s: %s", name.c_str(),
                  rig_last_error());
          require(rig_buffer_create(d, bytes, RIG_MEMORY_DEVICE, &b) == RIG_OK, "alloc: %s", rig_last_error());
          require(rig_buffer_fill(b, 1) == RIG_OK, "fill: %s", rig_last_error());
          devices.push_back(d);
          buffers.push_back(b);
        }
        uint64_t order = exchange(link.ends[1], 1, "the test is gone");
        for (;;) {
          bool held = true;
          if (order == work) {
            for (rig_buffer_t *b : buffers) {
              uint8_t seen = 0;
              held = held && rig_buffer_fill(b, 9) == RIG_OK &&
                     rig_buffer_blit_to_bytes(b, 0, &seen, 1, 0, 1) == RIG_OK && seen == 9;
            }
          } else if (order == report_lost) {
            // rig_service_drop returns once rigd ends the session: the
            // client learns of it as its link reads the closed socket.
            auto lost = [&] {
              for (rig_device_t *d : devices)
                if (!rig_lost(d)) return false;
              return true;
            };
            auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!lost() && std::chrono::steady_clock::now() < deadline)
              std::this_thread::sleep_for(std::chrono::milliseconds(5));
            for (rig_buffer_t *b : buffers) held = held && rig_buffer_fill(b, 3) == RIG_ELOST;
            for (rig_device_t *d : devices) held = held && rig_lost(d) != nullptr;
          } else {
            return 0;
          }
          order = exchange(link.ends[1], held ? 1 : 0, "the test is gone");
        }
      },
      {link.ends[1]});
  link.close_end(1);
  uint64_t ready = 0;
  cr_assert(receive_value(link.ends[0], ready, client_start_ms) && ready == 1, "a holder allocated");
  return pid;
}

// Sends order to a holder and answers whether it held.
bool ask(Channel &link, uint64_t order) {
  uint64_t held = 0;
  return send_value(link.ends[0], order) && receive_value(link.ends[0], held, client_start_ms) && held == 1;
}

std::string user_name(uid_t uid) {
  const passwd *pw = getpwuid(uid);
  return pw ? pw->pw_name : std::to_string(uid);
}

Json clients_json(const RigdProcess &rigd) {
  ToolRun run = run_rig({"clients", "--json", "--service", rigd.socket});
  cr_assert(run.status == 0, "rig clients --json exits 0: %s", run.err.c_str());
  try {
    return parse_json(run.out);
  } catch (const std::invalid_argument &e) {
    cr_assert_fail("rig clients --json: %s:\n%s", e.what(), run.out.c_str());
  }
  return {};
}

// The client of pid in rig clients' JSON, or NULL.
const Json *client_of(const Json &clients, pid_t pid) {
  for (const Json &c : clients["clients"].items)
    if (c["pid"].text == std::to_string(pid)) return &c;
  return nullptr;
}

// The bytes a client's JSON says it holds on device, "" where it does not use it.
std::string bytes_on(const Json &client, const std::string &device) {
  for (const Json &use : client["devices"].items)
    if (use["device"].text == device) return use["bytes"].text;
  return "";
}

PrometheusText metrics_of(const RigdProcess &rigd) {
  ToolRun run = run_rig({"metrics", "--service", rigd.socket});
  cr_assert(run.status == 0, "rig metrics exits 0: %s", run.err.c_str());
  try {
    return parse_prometheus_text(run.out);
  } catch (const std::invalid_argument &e) {
    cr_assert_fail("rig metrics is not Prometheus text: %s", e.what());
  }
  return {};
}

std::string allocated_on(const PrometheusText &m, const std::string &device) {
  auto it = m.samples.find("rigd_device_allocated_bytes{device=\"" + device + "\"}");
  cr_assert(it != m.samples.end(), "rig metrics has MEM:0's allocated bytes");
  return it->second;
}

// Waits up to 20 s for value() to be want; answers the last value seen.
std::string settles_at(const std::string &want, const std::function<std::string()> &value) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string seen = value();
  while (seen != want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    seen = value();
  }
  return seen;
}

const std::vector<std::string> served = {"--devices", "MEM:0,SIM:0"};

int connect_to(const std::string &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  cr_assert(fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0, "connect");
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

// rigd's answer to an admin request of raw bytes: its status and why
// (a refusal at the hello reads the same: protocol.h).
std::pair<int32_t, std::string> answer_to(const std::string &socket, const void *request, size_t bytes) {
  int fd = connect_to(socket);
  cr_assert(send(fd, request, bytes, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes));
  rig_proxy_admin_reply reply{};
  ssize_t got = recv(fd, &reply, sizeof reply, MSG_WAITALL);
  close(fd);
  cr_assert(got == sizeof reply, "rigd answers the admin request (%zd bytes)", got);
  reply.why[sizeof reply.why - 1] = '\0';
  return {reply.status, reply.why};
}

// What each of pid's descriptors is ("7 -> socket:[1234]"), in order.
std::vector<std::string> descriptors_of(pid_t pid) {
  std::vector<std::string> held;
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    std::error_code gone;
    std::string target = std::filesystem::read_symlink(entry.path(), gone).string();
    if (!gone) held.push_back(entry.path().filename().string() + " -> " + target);
  }
  std::sort(held.begin(), held.end());
  return held;
}

// The descriptors of after that before did not hold, one a line.
std::string added(const std::vector<std::string> &before, const std::vector<std::string> &after) {
  std::string lines;
  for (const std::string &held : after)
    if (std::find(before.begin(), before.end(), held) == before.end()) lines += "\n  " + held;
  return lines;
}

}  // namespace

Test(operators, three_clients_appear_with_their_bytes_per_device_pids_and_users, .timeout = 120) {
  RigdProcess rigd = start_rigd(served);
  Allocations allocs[3] = {{{"MEM:0", 1 * mib}},
                           {{"MEM:0", 2 * mib}, {"SIM:0", 3 * mib}},
                           {{"SIM:0", 5 * mib + 4096}}};
  Channel links[3];
  pid_t pids[3];
  for (int k = 0; k < 3; ++k) pids[k] = start_holder(rigd.socket, links[k], allocs[k]);
  Json clients = clients_json(rigd);
  cr_assert_eq(clients["clients"].items.size(), 3u, "rig clients lists the three holders");
  for (int k = 0; k < 3; ++k) {
    const Json *c = client_of(clients, pids[k]);
    cr_assert(c, "rig clients lists the holder of pid %d", static_cast<int>(pids[k]));
    cr_assert_eq((*c)["uid"].text, std::to_string(getuid()));
    cr_assert_eq((*c)["user"].text, user_name(getuid()));
    int64_t total = 0;
    for (const auto &[device, bytes] : allocs[k]) {
      cr_assert_eq(bytes_on(*c, device), std::to_string(bytes), "holder %d's bytes on %s: %s", k, device.c_str(),
                   bytes_on(*c, device).c_str());
      total += bytes;
    }
    cr_assert_eq((*c)["device_bytes"].text, std::to_string(total), "holder %d's device bytes", k);
    cr_assert_eq(bytes_on(*c, k == 2 ? "MEM:0" : "CPU"), "", "a device the holder never opened is not listed");
    cr_assert((*c)["quota_bytes"].kind == Json::Kind::null, "no quota is null, not a number");
    cr_assert((*c)["connected_ns"].kind == Json::Kind::string, "a count past 2^53 is a string, exact");
    cr_assert_eq((*c)["id"].kind, Json::Kind::number);
  }
  // rig devices --service: each served device's clients and their bytes.
  ToolRun devices = run_rig({"devices", "--json", "--service", rigd.socket});
  cr_assert(devices.status == 0, "rig devices --service: %s", devices.err.c_str());
  Json listing = parse_json(devices.out);
  bool sim = false;
  for (const Json &d : listing.items) {
    if (d["name"].text != "SIM:0@rigd") continue;
    sim = true;
    cr_assert_eq(d["service_clients"].text, "2", "two holders use SIM:0");
    std::vector<std::string> seen;
    for (const Json &user : d["clients"].items) seen.push_back(user["pid"].text + ":" + user["bytes"].text);
    std::vector<std::string> want = {std::to_string(pids[1]) + ":" + std::to_string(3 * mib),
                                     std::to_string(pids[2]) + ":" + std::to_string(5 * mib + 4096)};
    cr_assert(seen == want, "SIM:0@rigd's clients and their bytes");
  }
  cr_assert(sim, "rig devices --service lists SIM:0@rigd");
  for (Channel &link : links) send_value(link.ends[0], end_now);
  for (pid_t pid : pids) cr_assert(ended_cleanly(await_client(pid, client_end_s)));
}

Test(operators, a_dropped_client_goes_and_its_memory_returns_while_the_others_work, .timeout = 120) {
  RigdProcess rigd = start_rigd(served);
  std::string baseline = allocated_on(metrics_of(rigd), "MEM:0");
  Allocations allocs[3] = {{{"MEM:0", 1 * mib}}, {{"MEM:0", 4 * mib}, {"SIM:0", 2 * mib}}, {{"MEM:0", 2 * mib}}};
  Channel links[3];
  pid_t pids[3];
  for (int k = 0; k < 3; ++k) pids[k] = start_holder(rigd.socket, links[k], allocs[k]);
  std::string without_dropped = allocated_on(metrics_of(rigd), "MEM:0");
  Json before = clients_json(rigd);
  const Json *dropped = client_of(before, pids[1]);
  cr_assert(dropped);
  std::string id = (*dropped)["id"].text;

  ToolRun drop = run_rig({"drop", id, "--service", rigd.socket});
  cr_assert(drop.status == 0 && drop.out == "dropped client " + id + "\n", "rig drop: %d %s %s", drop.status,
            drop.out.c_str(), drop.err.c_str());
  cr_assert(ask(links[1], report_lost), "the dropped client's proxies are lost");
  cr_assert(ask(links[0], work) && ask(links[2], work), "the other clients go on working");
  std::string listed = settles_at("", [&] {
    Json clients = clients_json(rigd);
    return client_of(clients, pids[1]) ? id : "";
  });
  cr_assert_eq(listed, "", "rig clients lists the dropped client no more");
  // What rigd holds on MEM:0 returns to what it held with the two others.
  int64_t others = 3 * mib;
  std::string want = std::to_string(std::stoll(baseline) + others);
  std::string seen = settles_at(want, [&] { return allocated_on(metrics_of(rigd), "MEM:0"); });
  cr_assert_eq(seen, want, "MEM:0 holds %s bytes once the client dropped; %s before the clients, %s with them",
               seen.c_str(), baseline.c_str(), without_dropped.c_str());
  cr_assert(ask(links[0], work) && ask(links[2], work), "the other clients still work");
  ToolRun again = run_rig({"drop", id, "--service", rigd.socket});
  cr_assert(again.status == 1 && again.err.find("no client " + id) != std::string::npos,
            "a second drop names the client rigd no longer has: %s", again.err.c_str());
  for (int k : {0, 1, 2}) send_value(links[k].ends[0], end_now);
  for (pid_t pid : pids) await_client(pid, client_end_s);
}

Test(operators, a_user_neither_root_nor_of_admin_group_is_refused_the_admin_channel, .timeout = 60) {
  if (getuid() != 0) cr_skip_test("the outsider is a user of the test's own: needs root");
  RigdProcess rigd = start_rigd_with_config(served, "admin_group = " + std::to_string(admin_gid) + "\n");
  // The outsider reaches the socket through the group root, as a client.
  cr_assert(chmod(rigd.directory.c_str(), 0770) == 0);
  auto as_outsider = [](std::vector<gid_t> groups) {
    return [groups] {
      if (setgroups(groups.size(), groups.data()) != 0 || setuid(outsider) != 0) _exit(126);
    };
  };
  std::string why = "rigd admits only root and group " + std::to_string(admin_gid) +
                    " to its admin channel: uid " + std::to_string(outsider) + " is neither";
  for (const char *command : {"clients", "metrics"}) {
    ToolRun refused = run_rig({command, "--service", rigd.socket}, as_outsider({}));
    cr_assert(refused.status == 1 && refused.err.find(why) != std::string::npos,
              "rig %s as uid %d: %d, \"%s\"", command, static_cast<int>(outsider), refused.status, refused.err.c_str());
    cr_assert(refused.err.find("RIG_EOPEN") != std::string::npos);
  }
  ToolRun drop = run_rig({"drop", "1", "--service", rigd.socket}, as_outsider({}));
  cr_assert(drop.status == 1 && drop.err.find(why) != std::string::npos, "rig drop: \"%s\"", drop.err.c_str());
  ToolRun member = run_rig({"clients", "--json", "--service", rigd.socket}, as_outsider({admin_gid}));
  cr_assert(member.status == 0, "a member of admin_group is answered: %s", member.err.c_str());
  cr_assert_eq(parse_json(member.out)["clients"].items.size(), 0u);
  // A client of that user is still a client: the channel refuses only the role.
  ToolRun devices = run_rig({"devices", "--service", rigd.socket}, as_outsider({}));
  cr_assert(devices.status == 0 && devices.out.find("MEM:0@rigd") != std::string::npos,
            "the outsider still lists rigd's devices: %s", devices.err.c_str());
}

Test(operators, the_metrics_file_is_prometheus_text_and_matches_rig_clients, .timeout = 120) {
  std::string directory = make_temporary_directory();
  std::string file = directory + "/rigd.prom";
  std::vector<std::string> arguments = served;
  arguments.insert(arguments.end(), {"--metrics", file});
  RigdProcess rigd = start_rigd_with_config(arguments, "metrics_interval_ms = 100\n");
  Allocations allocs[3] = {{{"MEM:0", 1 * mib}}, {{"SIM:0", 6 * mib}}, {{"MEM:0", 3 * mib}, {"SIM:0", mib}}};
  Channel links[3];
  pid_t pids[3];
  for (int k = 0; k < 3; ++k) pids[k] = start_holder(rigd.socket, links[k], allocs[k]);
  cr_assert(ask(links[0], work), "the first holder works");
  Json clients = clients_json(rigd);
  // The file follows within a few intervals; it is whole at every read.
  PrometheusText metrics;
  std::string count = settles_at("3", [&] {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    try {
      metrics = parse_prometheus_text(text.str());
    } catch (const std::invalid_argument &e) {
      cr_assert_fail("the metrics file is not Prometheus text: %s", e.what());
    }
    auto it = metrics.samples.find("rigd_clients");
    if (it == metrics.samples.end()) return std::string();
    const Json *first = client_of(clients, pids[0]);
    std::string prefix = "rigd_client_submissions_total{client=\"" + (*first)["id"].text + "\"";
    for (const auto &[series, value] : metrics.samples)
      if (series.rfind(prefix, 0) == 0 && value != (*first)["submissions"].text) return std::string();
    return it->second;
  });
  cr_assert_eq(count, "3", "the metrics file counts the three clients");
  cr_assert_eq(metrics.types["rigd_client_submissions_total"], "counter");
  cr_assert_eq(metrics.types["rigd_client_use_bytes"], "gauge");
  for (const Json &c : clients["clients"].items) {
    std::string labels = "client=\"" + c["id"].text + "\",pid=\"" + c["pid"].text + "\",user=\"" + c["user"].text +
                         "\",command=\"" + c["command"].text + "\"";
    for (const char *key : {"device_bytes", "submissions", "copies", "copied_bytes", "fills", "faults"}) {
      std::string family = std::string("rigd_client_") + key + (std::string(key) == "device_bytes" ? "" : "_total");
      auto it = metrics.samples.find(family + "{" + labels + "}");
      cr_assert(it != metrics.samples.end(), "the file has %s of client %s", family.c_str(), c["id"].text.c_str());
      cr_assert_eq(it->second, c[key].text, "%s of client %s: %s in the file, %s in rig clients", family.c_str(),
                   c["id"].text.c_str(), it->second.c_str(), c[key].text.c_str());
    }
    for (const Json &use : c["devices"].items) {
      auto it = metrics.samples.find("rigd_client_use_bytes{" + labels + ",device=\"" + use["device"].text + "\"}");
      cr_assert(it != metrics.samples.end() && it->second == use["bytes"].text, "client %s's bytes on %s",
                c["id"].text.c_str(), use["device"].text.c_str());
    }
  }
  // rig metrics prints the same text, by the same formatter.
  PrometheusText once = metrics_of(rigd);
  cr_assert(once.samples == metrics.samples, "rig metrics and the file agree");
  for (Channel &link : links) send_value(link.ends[0], end_now);
  for (pid_t pid : pids) await_client(pid, client_end_s);
  std::filesystem::remove_all(directory);
}

Test(operators, malformed_admin_requests_and_peers_that_never_read_leave_rigd_serving, .timeout = 120) {
  RigdProcess rigd = start_rigd(served);
  std::vector<std::string> descriptors = descriptors_of(rigd.pid);
  rig_proxy_admin_request request{RIG_PROXY_MAGIC_ADMIN, RIG_PROXY_VERSION, 9, 0, 0};
  auto [status, why] = answer_to(rigd.socket, &request, sizeof request);
  cr_assert(status == RIG_EINVAL && why.find("no such admin request: 9") != std::string::npos, "%d %s", status,
            why.c_str());
  // STATS names no client: one that does is refused as what it is.
  request = {RIG_PROXY_MAGIC_ADMIN, RIG_PROXY_VERSION, RIG_PROXY_ADMIN_STATS, 0, 5};
  std::tie(status, why) = answer_to(rigd.socket, &request, sizeof request);
  cr_assert(status == RIG_EINVAL && why.find("STATS request names client 5") != std::string::npos, "%d %s", status,
            why.c_str());
  request = {RIG_PROXY_MAGIC_ADMIN, RIG_PROXY_VERSION, RIG_PROXY_ADMIN_STATS, 1, 0};
  std::tie(status, why) = answer_to(rigd.socket, &request, sizeof request);
  cr_assert(status == RIG_EOPEN && why.find("reserved field is not zero") != std::string::npos, "reserved set: %s",
            why.c_str());
  request = {RIG_PROXY_MAGIC_ADMIN, RIG_PROXY_VERSION + 1, RIG_PROXY_ADMIN_STATS, 0, 0};
  std::tie(status, why) = answer_to(rigd.socket, &request, sizeof request);
  cr_assert(status == RIG_EOPEN && why.find("protocol version") != std::string::npos, "another version: %s",
            why.c_str());
  // Peers that send half a request, or ask for snapshots and never read.
  std::vector<int> peers;
  request = {RIG_PROXY_MAGIC_ADMIN, RIG_PROXY_VERSION, RIG_PROXY_ADMIN_STATS, 0, 0};
  for (int i = 0; i < 100; ++i) {
    int fd = connect_to(rigd.socket);
    size_t bytes = i % 2 ? sizeof request : 12;
    cr_assert(send(fd, &request, bytes, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes));
    peers.push_back(fd);
  }
  ToolRun clients = run_rig({"clients", "--json", "--service", rigd.socket});
  cr_assert(clients.status == 0, "rigd answers the admin channel meanwhile: %s", clients.err.c_str());
  Channel link;
  pid_t holder = start_holder(rigd.socket, link, {{"MEM:0", mib}});
  cr_assert(ask(link, work), "a client works meanwhile");
  send_value(link.ends[0], end_now);
  cr_assert(ended_cleanly(await_client(holder, client_end_s)));
  for (int fd : peers) close(fd);
  // At most as many as before: one rigd had open at the start (its
  // start's own) may have closed meanwhile.
  auto held = [&] {
    return descriptors_of(rigd.pid).size() <= descriptors.size() ? std::string("returned") : std::string("held");
  };
  std::string left = settles_at("returned", held);
  std::vector<std::string> after = descriptors_of(rigd.pid);
  cr_assert_eq(left, "returned", "rigd holds %zu descriptors after the peers, %zu before; new:%s", after.size(),
               descriptors.size(), added(descriptors, after).c_str());
}

/* rig(1), clients: a client's command is any name its process gives
 * itself, control bytes included, and rig shows it on an operator's
 * terminal: each control byte as '?', so that no client's name moves the
 * cursor, clears the screen or begins a line of rig's.  A client named
 * "x\x1b[2J\ny" is listed as "x?[2J?y", and rig's output holds no escape
 * byte.  Before, rig printed the name as it came. */
Test(operators, a_clients_chosen_command_shows_no_control_bytes, .timeout = 60) {
  RigdProcess rigd = start_rigd(served);
  rig_machine_t *machine = nullptr;
  {
    CommandNamed named("x\x1b[2J\ny");
    rig_service_options_t options = {sizeof options, rigd.socket.c_str()};
    cr_assert(rig_service_connect(&options, &machine) == RIG_OK, "connect: %s", rig_last_error());
  }
  ToolRun run = run_rig({"clients", "--service", rigd.socket});
  cr_assert(run.status == 0, "rig clients exits 0: %s", run.err.c_str());
  cr_assert(run.out.find("command x?[2J?y\n") != std::string::npos, "the client's name, shown:\n%s",
            run.out.c_str());
  cr_assert(run.out.find('\x1b') == std::string::npos, "rig's output holds an escape byte");
  rig_machine_close(machine);
}
