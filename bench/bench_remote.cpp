// Copies and round trips of a device of another machine (MEM:0@peer, rig's
// machines over the link to rigd --listen) beside UCX's own ucx_perftest,
// across the veth pair of two hosts on one machine (two_hosts.h), in turn,
// --rounds rounds (3) in one run:
//   put_N / get_N   copies of N bytes (1 MiB, 64 MiB) from this process's
//                   memory into MEM:0@peer / back, submitted back to back
//                   and waited for once at the end (rig's submits take
//                   their turn past 64 MiB in flight, PROXY-43): the
//                   bandwidth beside ucx_perftest ucp_put_bw / ucp_get at
//                   the same message size;
//   round_trip      a fill of 4 bytes of MEM:0@peer then its wait, the p50
//                   of kTrips after kWarmup: beside twice ucx_perftest
//                   ucp_am_lat's median of 8 bytes (it reports half a
//                   round trip), both as ucx_perftest waits by default
//                   (polling, a core per side) and with -E sleep (asleep
//                   until the message comes, as rig's link waits, which
//                   keeps an idle link at no CPU).
// Both over UCX's tcp transport alone, on the veth (UCX_TLS=tcp and
// UCX_NET_DEVICES): the agent (tests/machines/machine_agent.h, the rigd
// built here) in side a, this program's client in side b.  Ratios: the
// copies' bandwidth over the raw one's at the same size, and over the best
// raw bandwidth of the round (ucx_perftest's tcp put of 64 MiB is far
// below its own 1 MiB one: the veth's bandwidth is the better baseline)
// (goal at least 0.9), and the round trip over the raw ones' (goal at
// most 2).  Needs root for the two
// hosts: says why and exits 2 where they cannot be made.
//
// Usage: bench_remote [--rounds N]
#include "machine_agent.h"
#include "perftest_command.h"
#include "two_hosts.h"

#include <rig/rig.h>
#include <rig/service.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kWarmup = 1000;
constexpr int kTrips = 10000;
constexpr int64_t kMiB = int64_t{1} << 20;

// The copies measured: the size, how many back to back, how many before
// as the warm-up (as ucx_perftest's -n and -w).
struct CopySize {
  const char *name;
  int64_t bytes;
  int count, warmup;
};
constexpr CopySize kSizes[] = {{"1MiB", kMiB, 256, 16}, {"64MiB", 64 * kMiB, 8, 2}};

[[noreturn]] void fail(const std::string &why) {
  std::fprintf(stderr, "bench_remote: %s\n", why.c_str());
  std::fflush(stderr);
  std::exit(1);
}

void check(rig_status_t status, const char *what) {
  if (status != RIG_OK) fail(std::string(what) + ": " + rig_status_name(status) + ": " + rig_last_error());
}

// ucx_perftest's figures between the hosts, this round.
struct Raw {
  double round_trip_us;         // ucx_perftest's own: polling
  double round_trip_asleep_us;  // -E sleep: waiting asleep, as rig does
  double put_mbs[2], get_mbs[2];  // per kSizes
  double best_mbs;                // the most of those four
};

double perftest_figure(two_hosts *h, const char *program, const char *test, int64_t bytes, int count, int warmup,
                       bool latency, const char *wait = nullptr) {
  char text[16384];
  perftest_run run = {program, test, static_cast<long>(bytes), count, warmup, wait};
  if (perftest_between(h, &run, text, sizeof text) != 0) fail(std::string("ucx_perftest ") + test + ": " + text);
  double figure = latency ? perftest_latency(text) : perftest_bandwidth(text);
  if (figure <= 0) fail(std::string("ucx_perftest ") + test + " reported no figure: " + text);
  return figure;
}

Raw measure_raw(two_hosts *h, const char *program) {
  Raw raw{};
  raw.round_trip_us = 2 * perftest_figure(h, program, "ucp_am_lat", 8, kTrips, kWarmup, true);
  raw.round_trip_asleep_us = 2 * perftest_figure(h, program, "ucp_am_lat", 8, kTrips, kWarmup, true, "sleep");
  std::printf("round_trip_raw: %.1f us\nround_trip_raw_asleep: %.1f us\n", raw.round_trip_us,
              raw.round_trip_asleep_us);
  for (size_t i = 0; i < std::size(kSizes); i++) {
    const CopySize &s = kSizes[i];
    raw.put_mbs[i] = perftest_figure(h, program, "ucp_put_bw", s.bytes, s.count, s.warmup, false);
    raw.get_mbs[i] = perftest_figure(h, program, "ucp_get", s.bytes, s.count, s.warmup, false);
    std::printf("put_%s_raw: %.0f MB/s\nget_%s_raw: %.0f MB/s\n", s.name, raw.put_mbs[i], s.name, raw.get_mbs[i]);
    raw.best_mbs = std::max({raw.best_mbs, raw.put_mbs[i], raw.get_mbs[i]});
  }
  std::fflush(stdout);
  return raw;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// count copies of src into dst submitted back to back, the last waited
// for: their bandwidth in MB/s.
double copies_mbs(rig_buffer_t *src, rig_buffer_t *dst, int64_t bytes, int count, const char *what) {
  rig_box_t box = rig_row(0, 0, bytes);
  rig_point_t last{};
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < count; k++) check(rig_buffer_submit_copy(src, dst, &box, 1, nullptr, 0, &last), what);
  check(rig_point_wait(last), what);
  return static_cast<double>(bytes) * count / seconds_since(start) / 1e6;
}

struct ClientRun {
  const machine_agent *agent;
  Raw raw;
};

// The client's side, in side b: connects, then the round trips and the
// copies of each size both ways, each beside its raw figure.
int client_round(void *arg) {
  const ClientRun *run = static_cast<const ClientRun *>(arg);
  machine_agent_environment(run->agent->hosts, TWO_HOSTS_B);
  rig_machine_options_t options{};
  options.size = sizeof options;
  options.name = "peer";
  options.key_file = run->agent->good_key_file;
  options.transports = "tcp";
  rig_machine_t *machine = nullptr;
  check(rig_machine_connect(run->agent->address, &options, &machine), "rig_machine_connect");
  rig_device_t *d = nullptr;
  check(rig_machine_open(machine, "MEM:0", nullptr, &d), "rig_machine_open MEM:0");

  rig_buffer_t *word = nullptr;
  check(rig_buffer_create(d, 4, RIG_MEMORY_DEVICE, &word), "4 bytes on MEM:0@peer");
  std::vector<double> us;
  for (int i = 0; i < kWarmup + kTrips; i++) {
    auto start = std::chrono::steady_clock::now();
    rig_point_t filled{};
    check(rig_buffer_submit_fill(word, static_cast<uint8_t>(i), nullptr, 0, &filled), "a fill");
    check(rig_point_wait(filled), "a fill's wait");
    if (i >= kWarmup) us.push_back(seconds_since(start) * 1e6);
  }
  std::sort(us.begin(), us.end());
  double round_trip = us[us.size() / 2];
  std::printf("round_trip_remote: %.1f us\nratio round_trip_remote_vs_raw: %.2f\n"
              "ratio round_trip_remote_vs_raw_asleep: %.2f\n",
              round_trip, round_trip / run->raw.round_trip_us, round_trip / run->raw.round_trip_asleep_us);

  for (size_t i = 0; i < std::size(kSizes); i++) {
    const CopySize &s = kSizes[i];
    rig_buffer_t *host = nullptr, *remote = nullptr;
    check(rig_buffer_create(rig_host(), s.bytes, RIG_MEMORY_DEVICE, &host), "host memory");
    check(rig_buffer_fill(host, 0x5a), "the host's fill");
    check(rig_buffer_create(d, s.bytes, RIG_MEMORY_DEVICE, &remote), "memory of MEM:0@peer");
    copies_mbs(host, remote, s.bytes, s.warmup, "the PUTs' warm-up");
    double put = copies_mbs(host, remote, s.bytes, s.count, "PUT");
    copies_mbs(remote, host, s.bytes, s.warmup, "the GETs' warm-up");
    double get = copies_mbs(remote, host, s.bytes, s.count, "GET");
    std::printf("put_%s_remote: %.0f MB/s\nratio put_%s_remote_vs_raw: %.2f\nratio put_%s_remote_vs_best_raw: %.2f\n",
                s.name, put, s.name, put / run->raw.put_mbs[i], s.name, put / run->raw.best_mbs);
    std::printf("get_%s_remote: %.0f MB/s\nratio get_%s_remote_vs_raw: %.2f\nratio get_%s_remote_vs_best_raw: %.2f\n",
                s.name, get, s.name, get / run->raw.get_mbs[i], s.name, get / run->raw.best_mbs);
    rig_buffer_unref(host);
    rig_buffer_unref(remote);
  }
  rig_buffer_unref(word);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  int rounds = 3;
  if (argc == 3 && std::strcmp(argv[1], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[2]));
  char program[256];
  two_hosts *h = perftest_hosts_or_exit("bench_remote", program, sizeof program);
  machine_agent agent;
  if (machine_agent_start(&agent, h, RIGD_PATH, "MEM:0") != 0) {
    std::string why = machine_agent_error();
    two_hosts_down(h);
    fail("the agent in side a: " + why);
  }
  std::printf("between %s (%s) and rigd at %s (%s), UCX_TLS=tcp\n", two_hosts_device(h, TWO_HOSTS_B),
              two_hosts_address(h, TWO_HOSTS_B), agent.address, two_hosts_device(h, TWO_HOSTS_A));
  int status = 0;
  for (int r = 0; r < rounds && status == 0; r++) {
    std::printf("round %d\n", r + 1);
    std::fflush(stdout);
    ClientRun run{&agent, measure_raw(h, program)};
    status = two_hosts_run(h, TWO_HOSTS_B, client_round, &run);
  }
  machine_agent_stop(&agent);
  two_hosts_down(h);
  return status == 0 ? 0 : 1;
}
