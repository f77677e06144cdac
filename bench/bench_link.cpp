// The transport of the link to other machines (net/ucx_link.hpp) beside
// UCX's own ucx_perftest, across the veth pair of two hosts on one machine
// (tests/machines/two_hosts.h), in turn, --rounds rounds (3) in one run:
//   am_round_trip  an 8-byte active message and its echo, the p50 of
//                  kTrips after kWarmup: the link's beside twice
//                  ucx_perftest ucp_am_lat's median (it reports half a
//                  round trip);
//   put            kPuts puts of kPutBytes (1 MiB) from registered memory
//                  into the peer's, each flushed: the link's bandwidth
//                  beside ucx_perftest ucp_put_bw's at the same size.
// Both over UCX's tcp transport alone, on the veth (UCX_TLS=tcp and
// UCX_NET_DEVICES). The link's side is this program: `--serve PORT` in
// side a (an echo of message 1, the key of its region for message 2), and
// a client in side b. Ratios: the link's round trip over the raw one's
// (above 1: the link is slower) and the link's bandwidth over the raw
// one's (below 1: slower). Needs root for the two hosts: says why and
// exits 2 where they cannot be made.
//
// Usage: bench_link [--rounds N]
#include "perftest_command.h"
#include "two_hosts.h"
#include "ucx_endpoint.hpp"
#include "ucx_link.hpp"
#include "ucx_listener.hpp"
#include "ucx_memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using rig::net::UcxEndpoint;
using rig::net::UcxLink;
using rig::net::UcxMessage;

constexpr int kWarmup = 1000;
constexpr int kTrips = 10000;
// ucx_perftest's put over TCP is at its best near 1 MiB (373 MB/s on a
// loopback here, where 64 MiB puts ran at 26): both sides put 1 MiB.
constexpr size_t kPutBytes = size_t{1} << 20;
constexpr int kPuts = 256;
constexpr int kPort = 13338;
constexpr uint16_t kEcho = 1, kKey = 2;

[[noreturn]] void fail(const std::string &why) {
  std::fprintf(stderr, "bench_link: %s\n", why.c_str());
  std::exit(1);
}

rig::net::UcxOptions tcp_only() {
  rig::net::UcxOptions options;
  options.transports = "tcp";
  return options;
}

// One message to answer, handed from the link's handler to the thread that
// answers it (a handler may not send).  Both sides wait on atomics' futexes
// (std::atomic::wait), as a user of the link waits: a spinning thread
// would take the CPU the link's progress thread delivers with.
struct Pending {
  std::atomic<int> id{0};
  std::shared_ptr<UcxEndpoint> from;
  uint64_t header = 0;
};

// The agent's side, in side a: echoes message 1's header, answers message
// 2 with its region's key; runs until killed.
[[noreturn]] void serve(int port) {
  auto link = UcxLink::create(tcp_only());
  if (!link.ok()) fail("the server's link: " + link.message());
  std::vector<std::byte> region(kPutBytes);
  auto memory = link.value()->map(region.data(), region.size());
  if (!memory.ok()) fail("the server's region: " + memory.message());
  Pending pending;
  auto take = [&](uint16_t id) {
    return rig::net::UcxHandler{nullptr, [&, id](const UcxMessage &m) {
                                  pending.from = m.from.shared_from_this();
                                  std::memcpy(&pending.header, m.header.data(),
                                              std::min(m.header.size(), sizeof pending.header));
                                  pending.id.store(id, std::memory_order_release);
                                  pending.id.notify_one();
                                }};
  };
  link.value()->on_message(kEcho, take(kEcho));
  link.value()->on_message(kKey, take(kKey));
  std::mutex mu;
  std::vector<std::shared_ptr<UcxEndpoint>> clients;
  auto listener = link.value()->listen("0.0.0.0:" + std::to_string(port), [&](std::shared_ptr<UcxEndpoint> e) {
    std::lock_guard g(mu);
    clients.push_back(std::move(e));
  });
  if (!listener.ok()) fail("the server's listener: " + listener.message());
  const rig::net::UcxRegionKey &key = memory.value()->key();
  for (;;) {
    pending.id.wait(0, std::memory_order_acquire);
    int id = pending.id.load(std::memory_order_acquire);
    std::shared_ptr<UcxEndpoint> from = std::move(pending.from);
    uint64_t header = pending.header;
    pending.id.store(0, std::memory_order_release);
    if (id == kEcho) {
      (void)from->send(kEcho, std::as_bytes(std::span(&header, 1)), {});
    } else {
      uint64_t where[2] = {key.address, key.length};
      (void)from->send(kKey, std::as_bytes(std::span(where)), key.rkey);
    }
  }
}

struct Raw {
  double round_trip_us, put_mbs;
};

struct Measured {
  double round_trip_us = 0, put_mbs = 0;
};

// The client's side, in side b: the round trips, then the puts.
Measured measure(const std::string &server) {
  auto link = UcxLink::create(tcp_only());
  if (!link.ok()) fail("the client's link: " + link.message());
  std::atomic<uint64_t> echoed{0};
  std::mutex key_mu;
  std::vector<std::byte> key_header, key_bytes;
  std::atomic<bool> keyed{false};
  link.value()->on_message(kEcho, {nullptr, [&](const UcxMessage &m) {
                                     uint64_t n = 0;
                                     std::memcpy(&n, m.header.data(), std::min(m.header.size(), sizeof n));
                                     echoed.store(n, std::memory_order_release);
                                     echoed.notify_one();
                                   }});
  link.value()->on_message(kKey, {nullptr, [&](const UcxMessage &m) {
                                    std::lock_guard g(key_mu);
                                    key_header.assign(m.header.begin(), m.header.end());
                                    key_bytes.assign(m.data.begin(), m.data.end());
                                    keyed.store(true, std::memory_order_release);
                                    keyed.notify_one();
                                  }});
  auto endpoint = link.value()->connect(server);
  for (int tries = 0; !endpoint.ok() && tries < 100; tries++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    endpoint = link.value()->connect(server);
  }
  if (!endpoint.ok()) fail("connect to " + server + ": " + endpoint.message());
  std::shared_ptr<UcxEndpoint> to = endpoint.value();
  // A failed link wakes the waits below, which then report it.
  to->on_failure([&](const std::string &) {
    echoed.store(UINT64_MAX, std::memory_order_release);
    echoed.notify_one();
    keyed.store(true, std::memory_order_release);
    keyed.notify_one();
  });

  std::vector<double> us;
  for (uint64_t i = 1; i <= kWarmup + kTrips; i++) {
    auto start = std::chrono::steady_clock::now();
    if (!to->send(kEcho, std::as_bytes(std::span(&i, 1)), {}).ok()) fail("a ping: " + to->failure());
    for (uint64_t seen; (seen = echoed.load(std::memory_order_acquire)) != i;) {
      if (to->failed()) fail("the link: " + to->failure());
      echoed.wait(seen, std::memory_order_acquire);
    }
    if (i > kWarmup) us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(us.begin(), us.end());
  Measured m;
  m.round_trip_us = us[us.size() / 2];

  uint64_t none = 0;
  if (!to->send(kKey, std::as_bytes(std::span(&none, 1)), {}).ok()) fail("the key's request: " + to->failure());
  keyed.wait(false, std::memory_order_acquire);
  if (to->failed()) fail("the link: " + to->failure());
  rig::net::UcxRegionKey key;
  {
    std::lock_guard g(key_mu);
    uint64_t where[2];
    std::memcpy(where, key_header.data(), sizeof where);
    key = {where[0], where[1], key_bytes};
  }
  auto region = to->open_region(key);
  if (!region.ok()) fail("the server's region: " + region.message());
  std::vector<std::byte> bytes(kPutBytes, std::byte{0x5a});
  for (int k = 0; k < 16; k++)  // the warm-up, as ucx_perftest's
    if (rig::net::UcxStatus s = region.value()->put(0, bytes); !s.ok()) fail("a put: " + s.message());
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < kPuts; k++)
    if (rig::net::UcxStatus s = region.value()->put(0, bytes); !s.ok()) fail("a put: " + s.message());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.put_mbs = static_cast<double>(kPutBytes) * kPuts / seconds / 1e6;
  return m;
}

struct ClientRun {
  std::string server, device;  // the server's HOST:PORT, side b's veth end
  Raw raw;
};

int client_round(void *arg) {
  const ClientRun *run = static_cast<const ClientRun *>(arg);
  setenv("UCX_NET_DEVICES", run->device.c_str(), 1);
  Measured m = measure(run->server);
  std::printf("am_round_trip_link: %.1f us\nput_link: %.0f MB/s\n", m.round_trip_us, m.put_mbs);
  std::printf("ratio am_round_trip_link_vs_raw: %.2f\nratio put_link_vs_raw: %.2f\n",
              m.round_trip_us / run->raw.round_trip_us, m.put_mbs / run->raw.put_mbs);
  std::fflush(stdout);
  return 0;
}

// ucx_perftest's figures between the hosts, this round.
Raw measure_raw(two_hosts *h, const char *program) {
  char text[16384];
  perftest_run latency = {program, "ucp_am_lat", 8, kTrips, kWarmup, nullptr};
  if (perftest_between(h, &latency, text, sizeof text) != 0) fail(std::string("ucx_perftest ucp_am_lat: ") + text);
  double half = perftest_latency(text);
  perftest_run put = {program, "ucp_put_bw", static_cast<long>(kPutBytes), kPuts, 16, nullptr};
  if (perftest_between(h, &put, text, sizeof text) != 0) fail(std::string("ucx_perftest ucp_put_bw: ") + text);
  Raw raw{2 * half, perftest_bandwidth(text)};
  if (half <= 0 || raw.put_mbs <= 0) fail(std::string("ucx_perftest reported no figure: ") + text);
  std::printf("am_round_trip_raw: %.1f us\nput_raw: %.0f MB/s\n", raw.round_trip_us, raw.put_mbs);
  std::fflush(stdout);
  return raw;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "--serve") == 0) serve(std::atoi(argv[2]));
  int rounds = 3;
  if (argc == 3 && std::strcmp(argv[1], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[2]));
  char program[256];
  two_hosts *h = perftest_hosts_or_exit("bench_link", program, sizeof program);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) fail("readlink /proc/self/exe failed");
  self[n] = '\0';
  std::string port = std::to_string(kPort);
  std::string device = std::string("UCX_NET_DEVICES=") + two_hosts_device(h, TWO_HOSTS_A);
  char *serve_argv[] = {self, const_cast<char *>("--serve"), port.data(), nullptr};
  char *serve_envp[] = {device.data(), nullptr};
  std::printf("between %s (%s) and %s (%s), UCX_TLS=tcp\n", two_hosts_device(h, TWO_HOSTS_B),
              two_hosts_address(h, TWO_HOSTS_B), two_hosts_device(h, TWO_HOSTS_A), two_hosts_address(h, TWO_HOSTS_A));
  int status = 0;
  for (int r = 0; r < rounds && status == 0; r++) {
    std::printf("round %d\n", r + 1);
    std::fflush(stdout);
    ClientRun run{std::string(two_hosts_address(h, TWO_HOSTS_A)) + ":" + port, two_hosts_device(h, TWO_HOSTS_B),
                  measure_raw(h, program)};
    pid_t server = two_hosts_spawn(h, TWO_HOSTS_A, serve_argv, serve_envp);
    if (server <= 0) fail(std::string("the link's server: ") + two_hosts_error());
    status = two_hosts_run(h, TWO_HOSTS_B, client_round, &run);
    two_hosts_kill(h, server);
  }
  two_hosts_down(h);
  return status == 0 ? 0 : 1;
}
