/* rigd as the agent of other machines' clients (rigd --listen,
 * rig-remote-proxy.txt): a rigd serving MEM:0 and SIM:0 on 127.0.0.1,
 * port 0, with a key ring of the test's, and clients of the machine link
 * in the test's process.  Accounts are ids 0 (the host, CPU), 1 (MEM:0)
 * and 2 (SIM:0). */
#include "machine_client.hpp"
#include "protocol.h"
#include "raw_ucp_sender.hpp"
#include "rigd_watch.hpp"
#include "wire_encode.hpp"
#include "rigd_log.hpp"
#include "rigd_process.hpp"

#include <rig/rig.h>
#include <rig/service.h>

#ifdef RIGD_MACHINES_LAUNCHES
extern "C" {
#include "run_support.h"
}
#endif

#include <criterion/criterion.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace wire = rig::net::wire;

namespace {

constexpr uint32_t host = 0, mem = 1, sim = 2;
const std::string secret = "a secret of the test's, long enough for a key ring";

// A rigd --listen with a key ring of key "lab", its config's extra lines
// added.
struct Agent {
  std::string keys_dir;
  RigdProcess rigd;
  std::string address;
  std::string client_key;

  explicit Agent(const std::string &extra = "")
      : keys_dir(make_test_directory()),
        rigd(start_rigd_with_config({"--devices", "MEM:0,SIM:0", "--listen", "127.0.0.1:0"},
                                    "machine_keys = " + make_key_ring(keys_dir, "lab", secret) +
                                        "\ntest_knobs = allow\n" + extra,
                                    [](const std::string &directory) { log_to_file(directory); })),
        address(listening_address(rigd)),
        client_key(keys_dir + "/client-lab") {}
  ~Agent() { std::filesystem::remove_all(keys_dir); }

  std::unique_ptr<MachineClient> connect() {
    std::string why;
    std::unique_ptr<MachineClient> c = MachineClient::connect(address, client_key, "lab", &why);
    cr_assert(c, "cannot connect to %s: %s", address.c_str(), why.c_str());
    return c;
  }
};

// Opens account d and allocates object o of n bytes on it.
void open_and_alloc(MachineClient &c, uint32_t d, const std::string &config, uint64_t o, uint64_t n) {
  // The wire names every request's object; an OPEN makes none (rigd keeps
  // no id of it).
  auto opened = c.request(d, 1000 + d, wire::Open{config});
  cr_assert(opened && opened->status == RIG_OK, "OPEN of %u: %s", d,
            opened ? opened->why.c_str() : c.await_failure().c_str());
  auto made = c.request(d, o, wire::Alloc{RIG_MEMORY_DEVICE, n});
  cr_assert(made && made->status == RIG_OK, "ALLOC of %u: %s", d, made ? made->why.c_str() : c.await_failure().c_str());
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return bytes;
}

wire::Handover handover(uint32_t d, uint64_t v, std::vector<wire::Part> parts, std::vector<wire::Wait> waits = {}) {
  return wire::Handover{d, v, std::move(waits), std::move(parts)};
}

size_t position(const std::vector<std::string> &heard, const std::string &what) {
  return static_cast<size_t>(std::find(heard.begin(), heard.end(), what) - heard.begin());
}

}  // namespace

/* PROXY-01, PROXY-18, PROXY-19, PROXY-28, PROXY-65: DEVICES accounts
 * every served device, id 0 the machine's host; each account's arch,
 * budget and cache_bytes are the device's own (the same device opened
 * here has the same), reach as rig_reaches says. */
Test(rigd_machines, devices_account_every_served_device_id_0_the_host) {
  Agent agent;
  auto c = agent.connect();
  const auto &devices = c->devices();
  cr_assert_eq(devices.size(), 3u);
  for (uint32_t i = 0; i < devices.size(); ++i) cr_assert_eq(devices[i].id, i);
  cr_assert_str_eq(devices[host].name.c_str(), "CPU");
  cr_assert_str_eq(devices[mem].name.c_str(), "MEM:0");
  cr_assert_str_eq(devices[sim].name.c_str(), "SIM:0");
  cr_assert_str_eq(devices[host].arch.c_str(), rig_device_arch(rig_host()));
  cr_assert_eq(devices[host].budget, static_cast<uint64_t>(rig_budget(rig_host())));
  for (uint32_t id : {mem, sim}) {
    rig_device_t *d = nullptr;
    cr_assert(rig_open(devices[id].name.c_str(), nullptr, &d) == RIG_OK, "%s", rig_last_error());
    cr_assert_str_eq(devices[id].arch.c_str(), rig_device_arch(d));
    cr_assert_eq(devices[id].budget, static_cast<uint64_t>(rig_budget(d)), "%s", devices[id].name.c_str());
    cr_assert_eq(devices[id].cache_bytes, static_cast<uint64_t>(rig_device_cache_bytes(d)));
    rig_close(d);
  }
  // Every device's work reaches its own memory.
  for (const auto &a : devices)
    cr_assert(std::find(a.reach.begin(), a.reach.end(), a.id) != a.reach.end(), "%s reaches not itself",
              a.name.c_str());
}

/* PROXY-37, PROXY-81, PROXY-03: a PUT's bytes land in the object, a
 * GET's come back byte for byte in BYTES, before its value's REPORT. */
Test(rigd_machines, put_then_get_byte_for_byte_bytes_before_their_report) {
  Agent agent;
  auto c = agent.connect();
  constexpr size_t n = 1 << 20;
  open_and_alloc(*c, mem, "", 1, n);
  std::vector<uint8_t> sent = pattern(n, 3);
  cr_assert(c->send(handover(mem, 1, {wire::Put{{1, 0}, wire::Data{sent}}})));
  cr_assert(c->send(handover(mem, 2, {wire::Get{{1, 0}, n}})));
  cr_assert(c->await_report(mem, 2), "%s", c->await_failure().c_str());
  cr_assert(c->bytes_of(mem, 2, 0) == sent, "the GET's bytes differ from the PUT's");
  std::vector<std::string> heard = c->heard();
  cr_assert_lt(position(heard, "BYTES 1 2 0"), position(heard, "REPORT 1 2"));
}

/* PROXY-37: rigd lands PUTs and stages GETs of one size in memory it
 * reuses, and each GET still brings back its own PUT's bytes, none of an
 * earlier one's. */
Test(rigd_machines, puts_and_gets_in_reused_memory_each_bring_their_own_bytes) {
  Agent agent;
  auto c = agent.connect();
  constexpr size_t n = size_t{2} << 20;
  open_and_alloc(*c, mem, "", 1, n);
  for (uint64_t round = 0; round < 4; round++) {
    std::vector<uint8_t> sent = pattern(n, static_cast<uint8_t>(5 + round));
    uint64_t value = 2 * round + 1;
    cr_assert(c->send(handover(mem, value, {wire::Put{{1, 0}, wire::Data{sent}}})));
    cr_assert(c->send(handover(mem, value + 1, {wire::Get{{1, 0}, n}})));
    cr_assert(c->await_report(mem, value + 1), "%s", c->await_failure().c_str());
    cr_assert(c->bytes_of(mem, value + 1, 0) == sent, "round %lu's GET differs from its PUT",
              static_cast<unsigned long>(round));
  }
}

/* PROXY-39: a hand-over's parts run in its order: a FILL, a COPY of the
 * filled bytes object to object, then a GET of the copy, in one value. */
Test(rigd_machines, fill_then_copy_object_to_object_in_the_handovers_order) {
  Agent agent;
  auto c = agent.connect();
  open_and_alloc(*c, sim, "", 1, 8192);
  auto made = c->request(sim, 2, wire::Alloc{RIG_MEMORY_DEVICE, 8192});
  cr_assert(made && made->status == RIG_OK);
  cr_assert(c->send(handover(sim, 1,
                             {wire::Fill{{1, 100}, 4000, 0x5a}, wire::Copy{{1, 0}, {2, 0}, 8192},
                              wire::Get{{2, 0}, 8192}})));
  cr_assert(c->await_report(sim, 1), "%s", c->await_failure().c_str());
  std::vector<uint8_t> got = c->bytes_of(sim, 1, 2);
  cr_assert_eq(got.size(), 8192u);
  for (size_t i = 0; i < got.size(); ++i) {
    uint8_t expected = i >= 100 && i < 4100 ? 0x5a : 0;
    cr_assert_eq(got[i], expected, "byte %zu", i);
  }
}

/* PROXY-33 (the agent waits for it): a wait on another device's value of
 * the connection holds the value back until that one is done: SIM:0's slow value 1 is
 * reported before MEM:0's value 1, which waits for it; REPORTs of each
 * device come in order (PROXY-03). */
Test(rigd_machines, a_wait_on_another_devices_value_and_reports_in_order) {
  Agent agent;
  auto c = agent.connect();
  open_and_alloc(*c, sim, "latency_us=100000", 1, 4096);
  open_and_alloc(*c, mem, "", 2, 4096);
  cr_assert(c->send(handover(sim, 1, {wire::Fill{{1, 0}, 4096, 1}})));
  cr_assert(c->send(handover(mem, 1, {wire::Fill{{2, 0}, 4096, 2}}, {wire::Wait{sim, 1}})));
  for (uint64_t v = 2; v <= 4; ++v) cr_assert(c->send(handover(sim, v, {wire::Fill{{1, 0}, 64, 3}})));
  cr_assert(c->await_report(sim, 4) && c->await_report(mem, 1), "%s", c->await_failure().c_str());
  std::vector<std::string> heard = c->heard();
  cr_assert_lt(position(heard, "REPORT 2 1"), position(heard, "REPORT 1 1"));
  uint64_t last = 0;
  for (const std::string &h : heard)
    if (h.rfind("REPORT 2 ", 0) == 0) {
      uint64_t v = std::stoull(h.substr(9));
      cr_assert_gt(v, last, "SIM:0's reports go back: %s", h.c_str());
      last = v;
    }
}

/* PROXY-32, PROXY-36: the machine's host runs a WORDS part, its writes
 * in order after the earlier parts; on another device a WORDS part fails
 * the job, saying the device does not run it. */
Test(rigd_machines, the_host_runs_words_parts_and_no_other_device_does) {
  Agent agent;
  auto c = agent.connect();
  open_and_alloc(*c, host, "", 1, 64);
  const uint64_t first = 0x1122334455667788, second = 42;
  wire::Words words{{wire::Word{{1, 8}, first}, wire::Word{{1, 16}, second}, wire::Word{{1, 16}, second + 1}}};
  cr_assert(c->send(handover(host, 1, {wire::Fill{{1, 0}, 64, 0xff}, words, wire::Get{{1, 0}, 32}})));
  cr_assert(c->await_report(host, 1), "%s", c->await_failure().c_str());
  std::vector<uint8_t> got = c->bytes_of(host, 1, 2);
  cr_assert_eq(got.size(), 32u);
  uint64_t at[4];
  std::memcpy(at, got.data(), sizeof at);
  cr_assert_eq(at[0], ~uint64_t{0}, "the fill before the words");
  cr_assert_eq(at[1], first);
  cr_assert_eq(at[2], second + 1, "the later write of the same word wins");
  cr_assert_eq(at[3], ~uint64_t{0});
  auto other = agent.connect();
  open_and_alloc(*other, mem, "", 1, 64);
  cr_assert(other->send(handover(mem, 1, {wire::Words{{wire::Word{{1, 0}, 1}}}})));
  std::string failure = other->await_failure();
  cr_assert(failure.find("does not run") != std::string::npos, "%s", failure.c_str());
}

/* PROXY-61: a RELEASE right after a GET of the object lets the GET finish
 * (the object goes once the work submitted before no longer needs it);
 * a later hand-over naming it fails the job, saying which object. */
Test(rigd_machines, release_after_the_work_before_it) {
  Agent agent;
  auto c = agent.connect();
  open_and_alloc(*c, sim, "latency_us=50000", 1, 4096);
  cr_assert(c->send(handover(sim, 1, {wire::Fill{{1, 0}, 4096, 9}, wire::Get{{1, 0}, 4096}})));
  cr_assert(c->send(wire::Release{wire::Released::Object, 1}));
  cr_assert(c->await_report(sim, 1), "%s", c->await_failure().c_str());
  cr_assert(c->bytes_of(sim, 1, 1) == std::vector<uint8_t>(4096, 9));
  cr_assert(c->send(handover(sim, 2, {wire::Fill{{1, 0}, 16, 1}})));
  std::string failure = c->await_failure();
  cr_assert(failure.find("object 1") != std::string::npos, "%s", failure.c_str());
}

/* PROXY-59: an ALLOC past the client's quota (quota_bytes, which bounds
 * remote clients as local ones) is answered RIG_ENOMEM with why and its
 * bytes; a request on a device not opened is answered, the job still
 * working. */
Test(rigd_machines, alloc_refused_with_why_the_job_still_working) {
  Agent agent("quota_bytes = 1048576\n");
  auto c = agent.connect();
  auto answer = c->request(mem, 1, wire::Alloc{RIG_MEMORY_DEVICE, 4096});
  cr_assert(answer && answer->status != RIG_OK && answer->why.find("not open") != std::string::npos,
            "%s", answer ? answer->why.c_str() : c->await_failure().c_str());
  open_and_alloc(*c, mem, "", 2, 4096);
  constexpr uint64_t past = 2 << 20;
  answer = c->request(mem, 3, wire::Alloc{RIG_MEMORY_DEVICE, past});
  cr_assert(answer && answer->status == RIG_ENOMEM, "%d %s", answer ? answer->status : 0,
            answer ? answer->why.c_str() : c->await_failure().c_str());
  cr_assert(answer->why.find("quota_bytes") != std::string::npos && answer->detail == past, "%s",
            answer->why.c_str());
  cr_assert(c->send(handover(mem, 1, {wire::Get{{2, 0}, 16}})));
  cr_assert(c->await_report(mem, 1), "%s", c->await_failure().c_str());
}

/* PROXY-74 (the agent's reason): an IMAGE the device does not load is
 * answered with rigd's reason, the job still working. */
Test(rigd_machines, an_image_refused_is_answered_with_the_reason) {
  Agent agent;
  auto c = agent.connect();
  open_and_alloc(*c, host, "", 1, 64);
  const std::vector<uint8_t> garbage(256, 0xab);
  auto answer = c->request(host, 2, wire::Image{wire::Data{garbage}});
  cr_assert(answer && answer->status != RIG_OK && !answer->why.empty(), "%s",
            answer ? "loaded garbage" : c->await_failure().c_str());
  cr_assert(c->send(handover(host, 1, {wire::Fill{{1, 0}, 64, 1}})));
  cr_assert(c->await_report(host, 1), "%s", c->await_failure().c_str());
}

/* A CLOSE releases what the client held, as a local client's departure
 * does: remote clients share one user's limits (quota_bytes_per_user),
 * and the next client's ALLOC of all of it succeeds only once the first
 * one's memory went back. */
Test(rigd_machines, close_releases_what_the_client_held) {
  Agent agent("quota_bytes_per_user = 1048576\n");
  {
    auto first = agent.connect();
    open_and_alloc(*first, mem, "", 1, 1 << 20);
    auto second = agent.connect();
    auto opened = second->request(mem, 9, wire::Open{""});
    cr_assert(opened && opened->status == RIG_OK);
    auto refused = second->request(mem, 1, wire::Alloc{RIG_MEMORY_DEVICE, 1 << 20});
    cr_assert(refused && refused->status == RIG_ENOMEM && refused->why.find("per_user") != std::string::npos,
              "%s", refused ? refused->why.c_str() : "no answer");
  }
  // Logged once what each held went back.
  cr_assert_eq(await_lines(agent.rigd, {"remote client", "left (closed)"}, 2).size(), 2u, "%s",
               whole_log(agent.rigd).c_str());
  auto next = agent.connect();
  open_and_alloc(*next, mem, "", 1, 1 << 20);
}

/* rig_service_stats shows remote clients beside local ones: uid
 * 4294967295 (the one user they count under), their hello as their
 * command, the device memory they hold and their hand-overs; and
 * rig_service_drop ends one, once. */
Test(rigd_machines, stats_show_remote_clients_and_drop_ends_one) {
  Agent agent;
  auto c = agent.connect();
  open_and_alloc(*c, mem, "", 1, 1 << 20);
  cr_assert(c->send(handover(mem, 1, {wire::Fill{{1, 0}, 64, 1}})));
  cr_assert(c->await_report(mem, 1), "%s", c->await_failure().c_str());
  rig_service_options_t options{sizeof options, agent.rigd.socket.c_str()};
  rig_service_stats_t *stats = nullptr;
  cr_assert(rig_service_stats(&options, &stats) == RIG_OK, "%s", rig_last_error());
  cr_assert_eq(rig_service_stats_clients(stats), 1u);
  rig_service_client_info_t info{};
  info.size = sizeof info;
  cr_assert(rig_service_stats_client(stats, 0, &info) == RIG_OK);
  cr_assert_eq(info.uid, 4294967295u);
  cr_assert_str_eq(info.command, "rigd test");
  cr_assert_eq(info.device_bytes, uint64_t{1} << 20);
  cr_assert_eq(info.submissions, 1u);
  uint64_t id = info.id;
  rig_service_stats_release(stats);
  cr_assert(rig_service_drop(&options, id) == RIG_OK, "%s", rig_last_error());
  // Dropped, it is connected no more, though its session may still be
  // ending: a second drop finds no such client.
  cr_assert(rig_service_drop(&options, id) == RIG_EINVAL, "a second drop of remote client %llu",
            static_cast<unsigned long long>(id));
  cr_assert(!c->await_failure().empty());
}

/* rigd's SIGTERM ends its remote sessions as its local ones: it exits
 * 0, and the client's connection fails. */
Test(rigd_machines, sigterm_ends_remote_sessions) {
  Agent agent;
  auto c = agent.connect();
  open_and_alloc(*c, sim, "", 1, 4096);
  cr_assert(c->send(handover(sim, 1, {wire::Fill{{1, 0}, 4096, 1}})));
  cr_assert(c->await_report(sim, 1), "%s", c->await_failure().c_str());
  int status = stop_rigd(agent.rigd);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
  cr_assert(!c->await_failure().empty());
}

/* A client that dies (SIGKILL) fails its link: rigd ends its session
 * with the link's reason and releases what it held, as a local client's
 * departure does (the next client's ALLOC of the per-user quota fits). */
Test(rigd_machines, a_client_that_dies_has_what_it_held_released) {
  Agent agent("quota_bytes_per_user = 1048576\n");
  int ready[2];
  cr_assert(pipe(ready) == 0);
  pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    auto c = agent.connect();
    open_and_alloc(*c, mem, "", 1, 1 << 20);
    char one = 1;
    if (write(ready[1], &one, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(ready[1]);
  char one = 0;
  cr_assert(read(ready[0], &one, 1) == 1, "the client did not allocate");
  close(ready[0]);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  cr_assert_eq(await_lines(agent.rigd, {"remote client", "left (its link failed"}).size(), 1u, "%s",
               whole_log(agent.rigd).c_str());
  auto next = agent.connect();
  open_and_alloc(*next, mem, "", 1, 1 << 20);
}

/* A PUT past the client's arena_bytes (its staged bytes) fails its job
 * naming the limit; the limit bounds the connection's queued messages
 * too, with room for a hand-over's parts, so that the PUT arrives to be
 * refused rather than failing the link. */
Test(rigd_machines, a_put_past_arena_bytes_fails_the_job_naming_it) {
  Agent agent("arena_bytes = 1048576\n");
  auto c = agent.connect();
  open_and_alloc(*c, mem, "", 1, 4 << 20);
  std::vector<uint8_t> sent(2 << 20, 7);
  cr_assert(c->send(handover(mem, 1, {wire::Put{{1, 0}, wire::Data{sent}}})));
  std::string failure = c->await_failure();
  cr_assert(failure.find("arena_bytes") != std::string::npos, "%s", failure.c_str());
}

/* A connection that proves a wrong secret, or a key the ring lacks, is
 * refused with the reason and logged with its cause (never the secret),
 * while another client keeps working. */
Test(rigd_machines, refused_authentication_while_another_client_works) {
  Agent agent;
  auto working = agent.connect();
  open_and_alloc(*working, mem, "", 1, 4096);
  std::string wrong = write_client_key(agent.keys_dir, "wrong", "another secret, as long as a key must be");
  std::string why;
  cr_assert(!MachineClient::connect(agent.address, wrong, "lab", &why), "a wrong secret connected");
  cr_assert(!why.empty());
  cr_assert(!MachineClient::connect(agent.address, agent.client_key, "nobody", &why), "an unknown key connected");
  cr_assert(!why.empty());
  std::vector<uint8_t> sent = pattern(4096, 1);
  cr_assert(working->send(handover(mem, 1, {wire::Put{{1, 0}, wire::Data{sent}}, wire::Get{{1, 0}, 4096}})));
  cr_assert(working->await_report(mem, 1), "%s", working->await_failure().c_str());
  cr_assert(working->bytes_of(mem, 1, 1) == sent);
  std::vector<std::string> refused = await_lines(agent.rigd, {"refused a machine connection"}, 2);
  cr_assert_eq(refused.size(), 2u, "%s", whole_log(agent.rigd).c_str());
  cr_assert(whole_log(agent.rigd).find(secret) == std::string::npos, "the log shows a secret");
}

/* Peers that connect and prove no key hold at most 8 of rigd's
 * handshakes from one host (rigd(8)): a ninth is closed at once, rigd
 * logging why, while the eight stay open until their failure bound; once
 * they go, a client with the key connects and works. */
Test(rigd_machines, a_host_holds_at_most_8_connections_proving_keys) {
  Agent agent;
  const auto kept = std::chrono::milliseconds(200);
  std::vector<std::unique_ptr<rig::net::test::RawUcpSender>> pending;
  for (int i = 0; i < 8; ++i) {
    pending.push_back(std::make_unique<rig::net::test::RawUcpSender>(agent.address));
    cr_assert(!pending.back()->closed(kept), "rigd closed connection %d in its handshake", i);
  }
  {
    rig::net::test::RawUcpSender ninth(agent.address);
    cr_assert(ninth.closed(std::chrono::seconds(5)), "rigd kept a ninth connection from the host");
  }
  std::vector<std::string> refused =
      await_lines(agent.rigd, {"refused a machine connection from 127.0.0.1:",
                               ": 8 connections from 127.0.0.1 prove their keys already, the most from one host"});
  cr_assert_eq(refused.size(), 1u, "%s", whole_log(agent.rigd).c_str());
  for (auto &p : pending) cr_assert(!p->closed(std::chrono::milliseconds(0)), "rigd closed a connection it held");
  pending.clear();
  // Each that went ends its handshake, which rigd logs.
  cr_assert_eq(await_lines(agent.rigd, {"refused a machine connection"}, 9).size(), 9u, "%s",
               whole_log(agent.rigd).c_str());
  auto c = agent.connect();
  open_and_alloc(*c, mem, "", 1, 4096);
}

/* A malformed HANDOVER (an object not held, a range past the end) fails
 * that connection's job with FAILURE saying what was wrong, and only that
 * connection closes. */
Test(rigd_machines, malformed_handover_fails_that_job_alone) {
  Agent agent;
  auto other = agent.connect();
  open_and_alloc(*other, mem, "", 1, 4096);
  {
    auto c = agent.connect();
    open_and_alloc(*c, mem, "", 1, 4096);
    cr_assert(c->send(handover(mem, 1, {wire::Fill{{99, 0}, 16, 1}})));
    std::string failure = c->await_failure();
    cr_assert(failure.find("object 99") != std::string::npos, "%s", failure.c_str());
  }
  {
    auto c = agent.connect();
    open_and_alloc(*c, mem, "", 1, 4096);
    cr_assert(c->send(handover(mem, 1, {wire::Fill{{1, 4000}, 200, 1}})));
    std::string failure = c->await_failure();
    cr_assert(failure.find("does not fit") != std::string::npos && failure.find("4096") != std::string::npos,
              "%s", failure.c_str());
  }
  cr_assert(other->send(handover(mem, 1, {wire::Get{{1, 0}, 64}})));
  cr_assert(other->await_report(mem, 1), "%s", other->await_failure().c_str());
}

/* A remote client's values of a device that are not done are at most
 * RIG_PROXY_VALUES_IN_FLIGHT, as a local client's: behind a slow value,
 * the agent takes no more HANDOVERs than fit beside it, however cheap
 * each is to run, and runs the rest, in order, once it is done (PROXY-03,
 * PROXY-39). */
Test(rigd_machines, handovers_past_the_values_in_flight_wait_for_room) {
  Agent agent;
  auto c = agent.connect();
  open_and_alloc(*c, sim, "latency_us=4000000", 1, 4096);
  cr_assert(c->send(handover(sim, 1, {wire::Fill{{1, 0}, 16, 7}})));
  const uint64_t values = 2 * uint64_t{RIG_PROXY_VALUES_IN_FLIGHT};
  for (uint64_t v = 2; v <= 1 + values; ++v) cr_assert(c->send(handover(sim, v, {})));
  // The agent's count of hand-overs it took, once it stops moving.
  rig_service_options_t options{sizeof options, agent.rigd.socket.c_str()};
  auto taken = [&] {
    rig_service_stats_t *stats = nullptr;
    cr_assert(rig_service_stats(&options, &stats) == RIG_OK, "%s", rig_last_error());
    rig_service_client_info_t info{};
    info.size = sizeof info;
    cr_assert(rig_service_stats_client(stats, 0, &info) == RIG_OK);
    rig_service_stats_release(stats);
    return info.submissions;
  };
  // Up to the bound, then a while longer for any past it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (taken() < RIG_PROXY_VALUES_IN_FLIGHT && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const uint64_t seen = taken();
  cr_assert(c->heard().empty(), "the slow fill was still running as the hand-overs were counted");
  cr_assert_eq(seen, uint64_t{RIG_PROXY_VALUES_IN_FLIGHT}, "the agent took %llu of %llu hand-overs",
               (unsigned long long)seen, (unsigned long long)(1 + values));
  cr_assert(c->await_report(sim, 1 + values), "%s", c->await_failure().c_str());
  cr_assert_eq(taken(), 1 + values);
}

/* A connection's messages wait for its session as the bytes they came
 * in, which the agent's bound on them counts (rigd(8): arena_bytes, beside
 * 64 MiB for a hand-over's parts): decoded, a hand-over's parts take
 * several times their encoding, so the agent decodes each as its session
 * takes it.  Behind a session that waits for room (4096 values of SIM:0's
 * in flight), 32 HANDOVERs of 65536 fills each grow rigd by less than
 * twice their bytes; the first of them, which names no object the client
 * holds, then fails the job. */
Test(rigd_machines, messages_waiting_for_their_session_cost_their_bytes) {
  Agent agent("arena_bytes = 67108864\n");
  auto c = agent.connect();
  // Four slow fills, 4 s each (within the sim's hang bound), then empty
  // values: each fill done lets the session take one more empty value,
  // which waits behind the rest, so the session waits 16 s in all, longer
  // than the sends take under a sanitizer too (up to 10 s under TSan).
  open_and_alloc(*c, sim, "latency_us=4000000", 1, 4096);
  open_and_alloc(*c, mem, "", 2, 4096);
  constexpr uint64_t slow = 4;
  for (uint64_t v = 1; v <= slow; ++v) cr_assert(c->send(handover(sim, v, {wire::Fill{{1, 0}, 16, 7}})));
  for (uint64_t v = slow + 1; v <= slow + RIG_PROXY_VALUES_IN_FLIGHT; ++v) cr_assert(c->send(handover(sim, v, {})));
  std::vector<wire::Part> fills(65536, wire::Fill{{99, 0}, 16, 1});
  const wire::Message many = handover(mem, 1, fills);
  auto encoded = wire::encode(many);
  cr_assert(encoded.ok());
  const uint64_t message_bytes = encoded.value().size();
  const long before_kib = watch::status_of(agent.rigd.pid, "VmRSS:");
  const int messages = 32;
  for (int i = 0; i < messages; ++i) cr_assert(c->send(many), "HANDOVER %d: %s", i, c->await_failure().c_str());
  const long grown_kib = watch::status_of(agent.rigd.pid, "VmRSS:") - before_kib;
  // The session still waits for room while the last slow fill runs: the
  // earlier fills' REPORTs may have come.
  const std::string of_sim = "REPORT " + std::to_string(sim) + " ";
  for (const std::string &h : c->heard())
    cr_assert(h.rfind(of_sim, 0) != 0 || std::stoull(h.substr(of_sim.size())) < slow,
              "the last slow fill was done before the HANDOVERs were counted (%s)", h.c_str());
  const uint64_t sent_kib = messages * message_bytes / 1024;
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer's shadow takes four bytes for each byte rigd writes
  // (5.0x the bytes sent here, where decoding on arrival takes 4.5x that).
  constexpr uint64_t shadow = 5;
#else
  constexpr uint64_t shadow = 1;
#endif
  cr_assert(grown_kib >= 0 && static_cast<uint64_t>(grown_kib) < 2 * shadow * sent_kib,
            "rigd grew by %ld KiB for %llu KiB of HANDOVERs waiting", grown_kib, (unsigned long long)sent_kib);
  std::string failure = c->await_failure();
  cr_assert(failure.find("object 99") != std::string::npos, "%s", failure.c_str());
}

/* Messages that break the wire's contract fail the job with what was
 * wrong, with its numbers: an ALLOC naming an object id in use, a wait on
 * a device the connection has not opened, a LAUNCH of a function it does
 * not hold, a RELEASE of an object it does not hold, a GET of more bytes
 * than its object holds. */
Test(rigd_machines, contract_breaches_fail_the_job_saying_what_was_wrong) {
  Agent agent;
  auto expect_failure = [&](const std::function<void(MachineClient &)> &breach, const std::string &said) {
    auto c = agent.connect();
    open_and_alloc(*c, mem, "", 1, 4096);
    breach(*c);
    std::string failure = c->await_failure();
    cr_assert(failure.find(said) != std::string::npos, "\"%s\" in \"%s\"", said.c_str(), failure.c_str());
  };
  expect_failure([](MachineClient &c) { c.request(mem, 1, wire::Alloc{RIG_MEMORY_DEVICE, 64}); },
                 "object 1, which names another already");
  expect_failure([](MachineClient &c) { c.send(handover(mem, 1, {wire::Fill{{1, 0}, 8, 1}}, {wire::Wait{sim, 1}})); },
                 "waits for device 2, which is not open");
  expect_failure(
      [](MachineClient &c) {
        wire::Launch launch{7, 8, {1, 1, 1}, {1, 1, 1}, 0, wire::Data{}, {}};
        c.send(handover(mem, 1, {launch}));
      },
      "names image 7 and function 8");
  expect_failure([](MachineClient &c) { c.send(wire::Release{wire::Released::Object, 5}); },
                 "a RELEASE of object 5, which the connection does not hold");
  // Refused before rigd stages a byte of it.
  expect_failure([](MachineClient &c) { c.send(handover(mem, 1, {wire::Get{{1, 0}, uint64_t{1} << 40}})); },
                 "(GET) of 1099511627776 bytes reads past object 1's 4096");
}

/* A device fault (the sim's fault_at knob) fails the job with the
 * device's own reason, the root cause the client's proxies then report
 * (PROXY-07's failure, at the agent), and rigd serves the next client. */
Test(rigd_machines, sim_fault_fails_the_job_with_the_devices_reason) {
  Agent agent;
  {
    auto c = agent.connect();
    open_and_alloc(*c, sim, "fault_at=1", 1, 4096);
    cr_assert(c->send(handover(sim, 1, {wire::Fill{{1, 0}, 4096, 1}})));
    std::string failure = c->await_failure();
    cr_assert(failure.find("fault_at") != std::string::npos, "%s", failure.c_str());
  }
  auto next = agent.connect();
  open_and_alloc(*next, sim, "", 1, 4096);
  cr_assert(next->send(handover(sim, 1, {wire::Fill{{1, 0}, 4096, 4}, wire::Get{{1, 0}, 8}})));
  cr_assert(next->await_report(sim, 1), "%s", next->await_failure().c_str());
  cr_assert(next->bytes_of(sim, 1, 1) == std::vector<uint8_t>(8, 4));
}

/* Admission counts remote clients: with max_clients = 1 a second
 * connection hears FAILURE naming max_clients. */
Test(rigd_machines, max_clients_bounds_remote_clients) {
  Agent agent("max_clients = 1\n");
  auto first = agent.connect();
  open_and_alloc(*first, mem, "", 1, 64);
  std::string why;
  auto second = MachineClient::connect(agent.address, agent.client_key, "lab", &why);
  std::string failure = second ? second->await_failure() : why;
  cr_assert(failure.find("max_clients") != std::string::npos, "%s", failure.c_str());
}

/* rigd --listen refuses to start, exit 2 and the reason, without a key
 * ring that loads: no machine_keys, or a key others may read. */
Test(rigd_machines, listen_without_a_usable_key_ring_refuses_to_start) {
  std::string dir = make_test_directory();
  std::string ring = make_key_ring(dir, "lab", secret);
  chmod((ring + "/lab").c_str(), 0644);
  for (const std::string &config : {std::string(""), "machine_keys = " + ring + "\n"}) {
    std::string rigd_dir = make_test_directory();
    std::string config_file = rigd_dir + "/rigd.conf";
    { std::ofstream(config_file) << config; }
    pid_t pid = fork();
    if (pid == 0) {
      log_to_file(rigd_dir);
      execl(RIGD_PATH, "rigd", "--socket", (rigd_dir + "/rigd.sock").c_str(), "--foreground", "--listen",
            "127.0.0.1:0", "--config", config_file.c_str(), static_cast<char *>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status %#x", status);
    std::ifstream log(rigd_dir + "/rigd.log");
    std::string said((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    cr_assert(said.find(config.empty() ? "machine_keys" : "lab") != std::string::npos, "%s", said.c_str());
    std::filesystem::remove_all(rigd_dir);
  }
  std::filesystem::remove_all(dir);
}

#ifdef RIGD_MACHINES_LAUNCHES
/* IMAGE, ENTRY and LAUNCH through the link: the spec's add kernel on
 * SIM:0 (host_code = allow), its function's max threads in ENTRY's
 * detail, its refs the addresses of the objects' places, z = x + y read
 * back by a GET after the launch in the same hand-over. */
Test(rigd_machines, a_launch_of_add_through_the_link) {
  object_t o = host_object(LINK_KERNEL("add"));
  std::vector<uint8_t> object(o.bytes, o.bytes + o.n);
  object_free(&o);
  Agent agent("host_code = allow\n");
  auto c = agent.connect();
  constexpr int64_t n = 1000;
  constexpr uint64_t bytes = n * sizeof(float);
  open_and_alloc(*c, sim, "", 1, bytes);
  for (uint64_t id : {2, 3}) {
    auto made = c->request(sim, id, wire::Alloc{RIG_MEMORY_DEVICE, bytes});
    cr_assert(made && made->status == RIG_OK);
  }
  auto image = c->request(sim, 10, wire::Image{wire::Data{object}});
  cr_assert(image && image->status == RIG_OK, "%s", image ? image->why.c_str() : c->await_failure().c_str());
  auto entry = c->request(sim, 11, wire::Entry{{10, "add"}});
  cr_assert(entry && entry->status == RIG_OK, "%s", entry ? entry->why.c_str() : c->await_failure().c_str());
  cr_assert_geq(entry->detail, 64u, "add's max threads: %llu", static_cast<unsigned long long>(entry->detail));
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>(i);
    y[static_cast<size_t>(i)] = 2.0f * static_cast<float>(i);
  }
  // add's parameters: x, y and z at 0, 8 and 16 (the refs), n at 24.
  std::vector<uint8_t> params(32, 0);
  std::memcpy(params.data() + 24, &n, sizeof n);
  wire::Launch launch{10, 11, {(n + 63) / 64, 1, 1}, {64, 1, 1}, 0, wire::Data{params},
                      {wire::Ref{{1, 0}, 0}, wire::Ref{{2, 0}, 8}, wire::Ref{{3, 0}, 16}}};
  auto as_bytes = [](const std::vector<float> &v) {
    return std::span(reinterpret_cast<const uint8_t *>(v.data()), v.size() * sizeof(float));
  };
  cr_assert(c->send(handover(sim, 1,
                             {wire::Put{{1, 0}, wire::Data{as_bytes(x)}}, wire::Put{{2, 0}, wire::Data{as_bytes(y)}},
                              launch, wire::Get{{3, 0}, bytes}})));
  cr_assert(c->await_report(sim, 1), "%s", c->await_failure().c_str());
  std::vector<uint8_t> got = c->bytes_of(sim, 1, 3);
  cr_assert_eq(got.size(), bytes);
  for (int64_t i = 0; i < n; ++i) {
    float z;
    std::memcpy(&z, got.data() + i * sizeof(float), sizeof z);
    cr_assert_float_eq(z, 3.0f * static_cast<float>(i), 1e-6, "z[%lld] = %f", static_cast<long long>(i), z);
  }
}
#endif
