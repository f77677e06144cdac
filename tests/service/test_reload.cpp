/* SIGHUP reloads rigd's policy from its config file without dropping a
 * client (rigd(8), SIGNALS): a lowered quota applies to connected clients'
 * next allocation; a user no longer admitted keeps its connected client,
 * and is refused at its next connection; a file that does not parse is
 * logged and the policy before it kept.  rigd runs as a process, its
 * stderr in a file of the test's (rigd_log.hpp).
 *
 * No rule ID: the policy and its reload are rigd(8)'s, not the spec's. */
#include "client_process.hpp"
#include "raw_client.hpp"
#include "rigd_log.hpp"
#include "rigd_process.hpp"

#include <rig/service.h>

#include <criterion/criterion.h>

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kib = 1024;

std::vector<std::string> served = {"--devices", "MEM:0"};

// Rewrites rigd's config file with text, sends SIGHUP and waits for rigd's
// line that says what came of it (lines of it so far, plus one).
void reload(const RigdProcess &rigd, const std::string &text, const std::string &outcome) {
  size_t before = lines_with(rigd, {"SIGHUP: "}).size();
  std::ofstream(rigd.directory + "/rigd.conf") << text;
  cr_assert(kill(rigd.pid, SIGHUP) == 0);
  auto said = await_lines(rigd, {"SIGHUP: "}, before + 1);
  cr_assert(said.size() == before + 1 && said.back().find(outcome) != std::string::npos,
            "rigd's line for the SIGHUP says \"%s\":\n%s", outcome.c_str(), whole_log(rigd).c_str());
}

// An allocation of bytes on proxy 0: rigd's status, and why where refused.
int32_t alloc_status(raw::Client &client, uint64_t bytes, std::string *why) {
  rig_proxy_entry e{};
  e.opcode = RIG_PROXY_OP_ALLOC;
  e.device = 0;
  e.args[1] = bytes;
  return client.with_code(e, {}, why).status;
}

// Connects a process of the test's user: its exit status, 0 where rigd
// welcomed it, 3 where rigd refused it.
int connects(const std::string &socket) {
  pid_t client = fork_client([socket] {
    rig_service_options_t options{sizeof options, socket.c_str()};
    return rig_service_connect(&options, nullptr) == RIG_OK ? 0 : 3;
  });
  int status = await_client(client, client_end_s);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

/* rigd(8), quota_bytes: a client holding 256 KiB of a 1 MiB quota; SIGHUP
 * with a quota of 320 KiB: its next 128 KiB is refused with the new
 * quota's numbers, 64 KiB still fits, and the client stays connected.
 * Before, rigd's SIGHUP ended it (the signal's default action). */
Test(reload, a_sighup_that_lowers_a_quota_applies_to_the_next_allocation, .timeout = 60) {
  RigdProcess rigd =
      start_rigd_with_config(served, "quota_bytes = 1048576\n", [](const std::string &d) { log_to_file(d); });
  raw::Client client(rigd.socket);
  client.open(0);
  std::string why;
  cr_assert(alloc_status(client, 256 * kib, &why) == raw::rig_ok, "%s", why.c_str());
  reload(rigd, "quota_bytes = 327680\n", "reloaded the policy");
  cr_assert(alloc_status(client, 128 * kib, &why) == raw::rig_enomem, "past the new quota: refused");
  cr_assert(why.find("quota_bytes is 327680 bytes: the client holds 262144 bytes and asks 131072 more") !=
                std::string::npos,
            "the refusal names the new quota's numbers: %s", why.c_str());
  cr_assert(alloc_status(client, 64 * kib, &why) == raw::rig_ok, "within it: %s", why.c_str());
  cr_assert(kill(rigd.pid, 0) == 0, "rigd stays up");
}

/* rigd(8), allow_users: the test's user, admitted, connects; SIGHUP with a
 * list that no longer names it: the connected client goes on being
 * served, and the user's next connection is refused; SIGHUP with the user
 * listed again admits it again. */
Test(reload, a_user_no_longer_admitted_is_refused_at_its_next_connection, .timeout = 60) {
  std::string me = "allow_users = " + std::to_string(getuid()) + "\n";
  RigdProcess rigd = start_rigd_with_config(served, me, [](const std::string &d) { log_to_file(d); });
  raw::Client client(rigd.socket);
  client.open(0);
  uid_t other = getuid() + 4242;
  reload(rigd, "allow_users = " + std::to_string(other) + "\n", "reloaded the policy");
  std::string why;
  cr_assert(alloc_status(client, 4 * kib, &why) == raw::rig_ok, "the connected client is served: %s", why.c_str());
  cr_assert(connects(rigd.socket) == 3, "the user's next connection is refused");
  cr_assert_eq(await_lines(rigd, {"user " + std::to_string(getuid()) + " is not admitted by rigd's policy"}).size(),
               1u, "%s", whole_log(rigd).c_str());
  reload(rigd, me, "reloaded the policy");
  cr_assert(connects(rigd.socket) == 0, "admitted again");
}

/* A config file that does not parse: rigd logs why, with its line, and
 * keeps the policy it had (the quota, the admitted users). */
Test(reload, a_config_that_does_not_parse_keeps_the_policy, .timeout = 60) {
  RigdProcess rigd =
      start_rigd_with_config(served, "quota_bytes = 65536\n", [](const std::string &d) { log_to_file(d); });
  raw::Client client(rigd.socket);
  client.open(0);
  reload(rigd, "quota_bytes = 1048576\ncolour = blue\n", "the policy is kept: ");
  cr_assert_eq(lines_with(rigd, {"rigd.conf: line 2: unknown key colour"}).size(), 1u, "%s", whole_log(rigd).c_str());
  std::string why;
  cr_assert(alloc_status(client, 128 * kib, &why) == raw::rig_enomem &&
                why.find("quota_bytes is 65536 bytes") != std::string::npos,
            "the old quota holds: %s", why.c_str());
  cr_assert(connects(rigd.socket) == 0, "rigd admits as before");
}
