/* rigd's log (rigd(8), LOGS): a line for each client's arrival and
 * departure with its pid, uid, user and command, each refusal with its
 * reason and the peer's numbers, each fault with the client it lost, and
 * rigd's start and stop; to the journal (sd-daemon's "<N>" priorities on
 * stderr) where JOURNAL_STREAM names rigd's stderr; --log-level drops the
 * lines below it.  rigd runs as a process with its stderr in a file of the
 * test's; its clients are processes of their own (client_process.hpp).
 *
 * No rule ID: the log is rigd(8)'s, not the spec's. */
#include "client_process.hpp"
#include "command_named.hpp"
#include "known_work.hpp"
#include "raw_client.hpp"
#include "rigd_log.hpp"
#include "rigd_process.hpp"

#include <rig/service.h>

#include <criterion/criterion.h>

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

std::vector<std::string> served = {"--devices", "MEM:0,SIM:0"};

// "pid P, uid U (USER)": how rigd's lines name a client process.
std::string named(pid_t pid) {
  const passwd *pw = getpwuid(getuid());
  return "pid " + std::to_string(pid) + ", uid " + std::to_string(getuid()) + " (" + (pw ? pw->pw_name : "no name") +
         "), command ";
}

// A client that connects, opens MEM:0@rigd, runs known work and leaves.
pid_t well_behaved_client(const std::string &socket) {
  return fork_client([socket] {
    connect_service(socket);
    KnownWork work(open_device("MEM:0@rigd"), 4096);
    work.run(3);
    return 0;
  });
}

// A client whose SIM:0@rigd instance faults at its value 3 (the sim's
// fault_at knob; rigd's first value on it zeroes the new buffer).
pid_t faulting_client(const std::string &socket) {
  return fork_client([socket] {
    // rigd counts the test's own two connections out as their sessions
    // end, a moment after their departure lines: until then it refuses
    // this client past max_clients_per_user.
    rig_service_options_t options{sizeof options, socket.c_str()};
    rig_status_t connected = RIG_EOPEN;
    for (int tries = 0; connected == RIG_EOPEN && tries < 500; tries++) {
      if (tries > 0) usleep(10000);
      connected = rig_service_connect(&options, nullptr);
    }
    require(connected == RIG_OK, "rig_service_connect: %s: %s", rig_status_name(connected), rig_last_error());
    rig_open_options_t faulting{sizeof faulting, "fault_at=3"};
    rig_device_t *d = nullptr;
    require(rig_open("SIM:0@rigd", &faulting, &d) == RIG_OK, "open with fault_at: %s", rig_last_error());
    rig_buffer_t *b = create_buffer(d, 4096);
    rig_status_t waited = RIG_OK;
    for (int i = 0; i < 8 && waited == RIG_OK; ++i) {
      rig_point_t p{};
      rig_status_t submitted = rig_buffer_submit_fill(b, static_cast<uint8_t>(i), nullptr, 0, &p);
      waited = submitted == RIG_OK ? rig_point_wait(p) : submitted;
    }
    require(waited == RIG_ELOST, "the faulting value answers RIG_ELOST, not %s", rig_status_name(waited));
    rig_buffer_unref(b);
    return 0;
  });
}

// Opens a proxy of served device `device` with configuration config:
// rigd's status.
int32_t open_with(raw::Client &client, uint32_t device, const std::string &config) {
  cr_assert(client.payload.copy_in(0, std::as_bytes(std::span(config))));
  rig_proxy_entry e{};
  e.opcode = RIG_PROXY_OP_OPEN;
  e.device = device;
  e.payload_offset = 0;
  e.payload_bytes = static_cast<uint32_t>(config.size());
  return client.request(e).status;
}

}  // namespace

/* Each event has its line, with the client's numbers: a client's arrival
 * and departure (pid, uid, user, command), a refusal past
 * max_clients_per_user (the refused peer's pid and the limit's numbers), a
 * fault (the client it lost and the sim's reason), rigd's start and stop. */
Test(logs, each_connection_departure_refusal_and_fault_has_a_line_with_its_numbers, .timeout = 120) {
  RigdProcess rigd = start_rigd_with_config(served, "test_knobs = allow\nmax_clients_per_user = 2\n",
                                            [](const std::string &d) { log_to_file(d); });
  cr_assert_eq(await_lines(rigd, {"rigd: serving 3 devices on " + rigd.socket}).size(), 1u, "%s",
               whole_log(rigd).c_str());

  pid_t client = well_behaved_client(rigd.socket);
  cr_assert(ended_cleanly(await_client(client, client_end_s)), "the client ran its work");
  auto arrived = await_lines(rigd, {named(client), ") connected"});
  auto left = await_lines(rigd, {named(client), ") left after "});
  cr_assert(arrived.size() == 1 && left.size() == 1, "one line for the arrival, one for the departure:\n%s",
            whole_log(rigd).c_str());
  cr_assert(arrived[0].rfind("rigd: client ", 0) == 0, "the line names rigd's number of the client: %s",
            arrived[0].c_str());

  {
    // The test's own connections are its user's two clients: the next is
    // refused.
    raw::Client holding(rigd.socket), holding_too(rigd.socket);
    pid_t refused = fork_client([&] {
      rig_service_options_t options{sizeof options, rigd.socket.c_str()};
      require(rig_service_connect(&options, nullptr) == RIG_EOPEN, "refused past max_clients_per_user");
      return 0;
    });
    cr_assert(ended_cleanly(await_client(refused, client_end_s)));
    auto refusal = await_lines(rigd, {"refused a client (" + named(refused),
                                      "has 2 clients connected, the most rigd's policy admits (max_clients_per_user)"});
    cr_assert_eq(refusal.size(), 1u, "the refusal's line, with the peer and the limit:\n%s", whole_log(rigd).c_str());
  }

  pid_t faulting = faulting_client(rigd.socket);
  cr_assert(ended_cleanly(await_client(faulting, client_end_s)), "the client's proxy faulted");
  auto fault = await_lines(rigd, {named(faulting), ") lost proxy 0: ", "fault_at"});
  cr_assert_eq(fault.size(), 1u, "the fault's line names the client it lost:\n%s", whole_log(rigd).c_str());

  cr_assert(stop_rigd(rigd) == 0);
  cr_assert_eq(lines_with(rigd, {"rigd: stopping at SIGTERM (from pid " + std::to_string(getpid()) + ")"}).size(), 1u,
               "%s", whole_log(rigd).c_str());
  cr_assert_eq(lines_with(rigd, {"rigd: stopped"}).size(), 1u, "%s", whole_log(rigd).c_str());
}

/* --log-level warning drops the notice and info lines (start, arrivals,
 * departures, refusals) and keeps the warnings (a fault). */
Test(logs, a_log_level_drops_the_lines_below_it, .timeout = 120) {
  std::vector<std::string> arguments = served;
  arguments.insert(arguments.end(), {"--log-level", "warning"});
  RigdProcess rigd = start_rigd_with_config(arguments, "test_knobs = allow\nlog_level = debug\n",
                                            [](const std::string &d) { log_to_file(d); });
  pid_t client = well_behaved_client(rigd.socket);
  cr_assert(ended_cleanly(await_client(client, client_end_s)));
  pid_t faulting = faulting_client(rigd.socket);
  cr_assert(ended_cleanly(await_client(faulting, client_end_s)));
  cr_assert_eq(await_lines(rigd, {named(faulting), ") lost proxy 0: "}).size(), 1u, "%s", whole_log(rigd).c_str());
  cr_assert(lines_with(rigd, {"connected"}).empty() && lines_with(rigd, {"left after"}).empty() &&
                lines_with(rigd, {"serving"}).empty(),
            "no line below warning:\n%s", whole_log(rigd).c_str());
}

/* Under systemd (JOURNAL_STREAM naming rigd's stderr) each line starts
 * with its sd-daemon priority: <5> notice, <6> info, <4> warning, and
 * carries no "rigd: " (the journal names the unit). */
Test(logs, under_the_journal_lines_carry_their_priorities, .timeout = 120) {
  RigdProcess rigd = start_rigd_with_config(served, "test_knobs = allow\n",
                                            [](const std::string &d) { log_to_file(d, true); });
  pid_t client = well_behaved_client(rigd.socket);
  cr_assert(ended_cleanly(await_client(client, client_end_s)));
  pid_t faulting = faulting_client(rigd.socket);
  cr_assert(ended_cleanly(await_client(faulting, client_end_s)));
  cr_assert_eq(await_lines(rigd, {"<4>client ", named(faulting), ") lost proxy 0: "}).size(), 1u, "%s",
               whole_log(rigd).c_str());
  cr_assert_eq(lines_with(rigd, {"<5>serving 3 devices"}).size(), 1u, "%s", whole_log(rigd).c_str());
  cr_assert_eq(lines_with(rigd, {"<6>client ", named(client), ") connected"}).size(), 1u, "%s",
               whole_log(rigd).c_str());
  for (const std::string &line : lines_of(rigd))
    cr_assert(line.size() > 3 && line[0] == '<' && line[2] == '>' && line.find("rigd: ") != 3, "a journal line: %s",
              line.c_str());
}

/* A client's text in a line (its command's name; the configuration of an
 * open rigd refuses, which the refusal quotes) has its control characters
 * and backslashes escaped, as \xNN, and its UTF-8 kept: a newline in it
 * cannot end the line and begin another that the journal would take as
 * rigd's, at a priority of the client's choosing (<0>, emergency), nor a
 * backslash of its own pass for an escape. */
Test(logs, a_clients_text_forges_no_line, .timeout = 120) {
  RigdProcess rigd = start_rigd_with_config(served, "", [](const std::string &d) { log_to_file(d, true); });
  {
    std::optional<raw::Client> client;
    {
      CommandNamed forging("rig\n<0>forged");
      client.emplace(rigd.socket);
    }
    client->open(0);
    cr_assert_eq(open_with(*client, 0, "x\n<0>forged by a configuration\t(déjà vu) \\x0a"), RIG_EOPEN,
                 "the open with another configuration than the live instance's is refused");
  }
  cr_assert_eq(
      await_lines(rigd, {"not \"x\\x0a<0>forged by a configuration\\x09(déjà vu) \\x5cx0a\""}).size(), 1u,
      "the refusal quotes the configuration, its newline and backslash escaped:\n%s", whole_log(rigd).c_str());
  cr_assert_eq(await_lines(rigd, {"command rig\\x0a<0>forged", ") connected"}).size(), 1u,
               "the arrival names the command, its newline escaped:\n%s", whole_log(rigd).c_str());
  for (const std::string &line : lines_of(rigd))
    cr_assert(line.size() > 3 && line[0] == '<' && line[1] >= '3' && line[1] <= '7' && line[2] == '>',
              "each line is rigd's, at one of its priorities (error to debug): %s", line.c_str());
}
