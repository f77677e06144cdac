/* Launches through rigd (issue 16): a client's images load on its instance
 * of the served device, and its launches ride in hand-overs, their refs
 * patched by rigd with the served device's addresses and ordered by the
 * stamps of the memory they name, as in-process (rig.txt, Running work;
 * rig-remote-proxy.txt's images and launches with rigd as the agent:
 * PROXY-74, PROXY-77, PROXY-79).  rigd's sims run the clients' host code
 * only with host_code = allow.  Each client is a process of its own
 * (client_process.hpp); raw clients send what the proxy driver would not. */
#include "add_launch.hpp"
#include "client_process.hpp"
#include "known_work.hpp"
#include "raw_client.hpp"
#include "rigd_process.hpp"

#include <rig/service.h>

#include <criterion/criterion.h>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

constexpr int64_t floats = 1000;

RigdProcess trusting_rigd(const char *devices) {
  // The sim's fault_at, a test knob, makes a launch fault.
  return start_rigd_with_config({"--devices", devices}, "host_code = allow\ntest_knobs = allow\n");
}

// A client that launches add rounds times over its own buffers, seeds
// from first on, each result checked.
int launch_rounds(const std::string &socket, const std::vector<uint8_t> &object, uint64_t first, int rounds) {
  connect_service(socket);
  AddLaunch add(open_device("SIM:0@rigd"), object, floats);
  for (int i = 0; i < rounds; i++) add.run(first + static_cast<uint64_t>(i));
  return 0;
}

// What rig_image_load answers for bytes on the device name, and its message.
rig_status_t load_status(const char *name, const void *bytes, int64_t n, std::string *why) {
  rig_image_t *i = nullptr;
  rig_status_t s = rig_image_load(open_device(name), bytes, n, &i);
  *why = rig_last_error();
  rig_image_unref(i);
  return s;
}

}  // namespace

/* Two client processes load add and launch it over their own buffers,
 * interleaved: every result is exact. */
Test(launches, two_clients_launch_add_interleaved, .timeout = 120) {
  RigdProcess rigd = trusting_rigd("SIM:0");
  std::vector<uint8_t> object = add_object();
  pid_t one = fork_client([&] { return launch_rounds(rigd.socket, object, 1, 40); });
  pid_t two = fork_client([&] { return launch_rounds(rigd.socket, object, 1000, 40); });
  cr_assert(ended_cleanly(await_client(one, client_end_s)), "the first client's results are exact");
  cr_assert(ended_cleanly(await_client(two, client_end_s)), "the second client's results are exact");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

/* An image SIM:0 refuses answers RIG_EIMAGE with the device's reason, and
 * the client then loads and launches add (PROXY-74); CPU@rigd loads no code
 * (the client runs host code itself), and a rigd whose config does not
 * allow host code loads none of a sim's. */
Test(launches, refused_images_answer_eimage_with_the_reason, .timeout = 120) {
  std::vector<uint8_t> object = add_object();
  RigdProcess trusting = trusting_rigd("SIM:0");
  pid_t client = fork_client([&] {
    connect_service(trusting.socket);
    const char junk[] = "not an ELF object";
    std::string why;
    rig_status_t s = load_status("SIM:0@rigd", junk, sizeof junk, &why);
    require(s == RIG_EIMAGE, "a bad image answers %s, not RIG_EIMAGE", rig_status_name(s));
    require(why.find("rigd") != std::string::npos && why.find("ELF") != std::string::npos,
            "the reason is the device's, through rigd: \"%s\"", why.c_str());
    s = load_status("CPU@rigd", object.data(), static_cast<int64_t>(object.size()), &why);
    require(s == RIG_EIMAGE && why.find("runs host code itself") != std::string::npos,
            "CPU@rigd loads no code: %s \"%s\"", rig_status_name(s), why.c_str());
    AddLaunch add(open_device("SIM:0@rigd"), object, floats);
    add.run(5);
    return 0;
  });
  cr_assert(ended_cleanly(await_client(client, client_end_s)), "the refusals said why, and add ran after them");
  cr_assert(ended_cleanly(stop_rigd(trusting)), "rigd ends cleanly");

  RigdProcess wary = start_rigd({"--devices", "SIM:0"});
  client = fork_client([&] {
    connect_service(wary.socket);
    std::string why;
    rig_status_t s = load_status("SIM:0@rigd", object.data(), static_cast<int64_t>(object.size()), &why);
    require(s == RIG_EIMAGE && why.find("host_code") != std::string::npos,
            "without host_code = allow the load answers %s \"%s\"", rig_status_name(s), why.c_str());
    return 0;
  });
  cr_assert(ended_cleanly(await_client(client, client_end_s)), "rigd loads no host code unless its config allows it");
  cr_assert(ended_cleanly(stop_rigd(wary)), "rigd ends cleanly");
}

/* An image past rigd's payload arena travels as a sealed memfd, and loads
 * and runs as a small one does. */
Test(launches, an_image_past_the_payload_arena_loads_through_a_memfd, .timeout = 120) {
  RigdProcess rigd = trusting_rigd("SIM:0");
  std::vector<uint8_t> object = big_add_object();
  cr_assert(object.size() > (size_t{3} << 19), "the object is %zu bytes", object.size());
  pid_t client = fork_client([&] {
    connect_service(rigd.socket);
    AddLaunch add(open_device("SIM:0@rigd"), object, floats);
    add.run(9);
    return 0;
  });
  cr_assert(ended_cleanly(await_client(client, client_end_s)), "the big image loaded, and add ran exactly");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

/* A launch in one process reads a buffer another process filled and
 * shared: rigd orders it after the fill by the memory's stamps, though the
 * importer waits for nothing and the fill (on a slow sim) is still running
 * as the launch is handed over. */
Test(launches, a_launch_reads_what_another_process_filled, .timeout = 120) {
  setenv("RIG_SIM", "latency_us=200000", 1);
  RigdProcess rigd = trusting_rigd("SIM:0");
  unsetenv("RIG_SIM");
  std::vector<uint8_t> object = add_object();
  constexpr uint8_t fill = 0x40;
  run_linked_pair(
      [&](int link) {
        connect_service(rigd.socket);
        rig_buffer_t *x = create_buffer(open_device("SIM:0@rigd"), floats * 4);
        uint64_t token = 0;
        require(rig_service_share(x, &token) == RIG_OK, "share: %s", rig_last_error());
        rig_point_t filled;
        require(rig_buffer_submit_fill(x, fill, nullptr, 0, &filled) == RIG_OK, "fill: %s", rig_last_error());
        require(send_value(link, token), "sent the token");
        uint64_t done = 0;
        require(receive_value(link, done, client_start_ms * 2), "the importer finished");
        rig_buffer_unref(x);
        return 0;
      },
      "the exporter filled and shared its buffer",
      [&](int link) {
        connect_service(rigd.socket);
        rig_device_t *d = open_device("SIM:0@rigd");
        AddLaunch add(d, object, floats);
        add.launch(0);
        uint64_t token = 0;
        require(receive_value(link, token, client_start_ms), "got the token");
        rig_buffer_t *x = nullptr;
        require(rig_service_import(d, token, &x) == RIG_OK, "import: %s", rig_last_error());
        rig_point_t p;
        require(add.submit_over(x, &p) == RIG_OK, "launch over the import: %s", rig_last_error());
        float xi;
        std::memset(&xi, fill, sizeof xi);
        std::vector<float> z(floats);
        require(rig_buffer_blit_to_bytes(add.z(), 0, z.data(), floats * 4, 0, floats * 4) == RIG_OK, "read z");
        for (int64_t i = 0; i < floats; i++)
          require(z[static_cast<size_t>(i)] == add_result(xi, i), "z[%lld] is %g: the launch ran before the fill",
                  static_cast<long long>(i), static_cast<double>(z[static_cast<size_t>(i)]));
        rig_buffer_unref(x);
        send_value(link, 1);
        return 0;
      },
      "the importer's launch read the filled bytes");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

namespace {

// A client whose SIM:0@rigd instance faults at its value 8: values 1 to 3
// zero its buffers, 4 loads add, then each launch takes one; the fourth
// launch faults, and its wait answers RIG_ELOST with the sim's reason.
int run_faulting_launches(const std::string &socket, const std::vector<uint8_t> &object) {
  connect_service(socket);
  rig_open_options_t faulting{sizeof faulting, "fault_at=8"};
  rig_device_t *d = nullptr;
  require(rig_open("SIM:0@rigd", &faulting, &d) == RIG_OK, "open with fault_at: %s", rig_last_error());
  AddLaunch add(d, object, floats);
  rig_status_t s = RIG_OK;
  int launched = 0;
  for (; launched < 10 && s == RIG_OK; launched++) {
    rig_point_t p{};
    s = add.submit_over(add.x(), &p);
    if (s == RIG_OK) s = rig_point_wait(p);
  }
  require(s == RIG_ELOST && launched == 4, "launch %d answered %s", launched, rig_status_name(s));
  const char *why = rig_lost(d);
  require(why && std::strstr(why, "fault_at"), "lost with the sim's reason, not \"%s\"", why ? why : "");
  return 0;
}

// A client that launches add over and over until the test sends on link:
// it sends 1 once it runs, then the rounds it ran; every result exact.
int run_steady_launches(const std::string &socket, const std::vector<uint8_t> &object, int link) {
  connect_service(socket);
  AddLaunch add(open_device("SIM:0@rigd"), object, floats);
  add.run(1);
  require(send_value(link, 1), "said it runs");
  uint64_t rounds = 1;
  while (!readable(link)) add.run(++rounds);
  require(send_value(link, rounds), "said its rounds");
  return 0;
}

}  // namespace

/* A fault injected in one client's launch loses that client's proxy alone,
 * with the fault's reason, while another client computes on with exact
 * results. */
Test(launches, a_fault_in_one_clients_launch_loses_its_proxy_alone, .timeout = 120) {
  RigdProcess rigd = trusting_rigd("SIM:0");
  std::vector<uint8_t> object = add_object();
  run_beside_steady([&](int link) { return run_steady_launches(rigd.socket, object, link); },
                    [&] { return run_faulting_launches(rigd.socket, object); }, "the faulting client lost its proxy",
                    "every result of the steady client was exact");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

/* A client killed while it streams launches, 20 times: rigd's allocated
 * bytes and loaded images return to their baseline. */
Test(launches, clients_killed_mid_launch_stream_leave_rigd_at_baseline, .timeout = 240) {
  RigdProcess rigd = trusting_rigd("SIM:0");
  std::vector<uint8_t> object = add_object();
  raw::Client observer(rigd.socket);
  raw::Client::Allocated baseline = observer.allocated_of_two();
  cr_assert(observer.loaded(0) == 0, "no image is loaded before any client comes");
  for (int round = 0; round < 20; round++) {
    Channel link;
    pid_t client = fork_client(
        [&]() -> int {
          connect_service(rigd.socket);
          AddLaunch add(open_device("SIM:0@rigd"), object, floats);
          require(send_value(link.ends[1], 1), "said it runs");
          for (uint64_t i = 0;; i++) {
            rig_point_t p = add.launch(i);
            if (i % 8 == 7) rig_point_wait(p);
          }
        },
        {link.ends[1]});
    link.close_end(1);
    uint64_t ready = 0;
    cr_assert(receive_value(link.ends[0], ready, client_start_ms), "client %d runs", round);
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 5 * 7));
    kill(client, SIGKILL);
    await_client(client, client_end_s);
  }
  raw::Client::Allocated after = observer.settle(baseline, 10000);
  cr_assert(after == baseline, "rigd holds %lld and %lld bytes, not %lld and %lld", static_cast<long long>(after.first),
            static_cast<long long>(after.second), static_cast<long long>(baseline.first),
            static_cast<long long>(baseline.second));
  int64_t images = observer.loaded(0);
  for (int i = 0; i < 500 && images != 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    images = observer.loaded(0);
  }
  cr_assert(images == 0, "rigd holds %lld images of gone clients", static_cast<long long>(images));
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

namespace {

// add's parameters over floats floats: refs x, y, z at 0, 8 and 16, n at 24.
std::vector<std::byte> add_params() {
  std::vector<std::byte> params(32);
  int64_t n = floats;
  std::memcpy(params.data() + 24, &n, sizeof n);
  return params;
}

// A raw client's add over its buffers x, y and z.
struct RawAdd {
  uint64_t x, y, z;
  std::vector<rig_proxy_part> launch(uint64_t function, uint64_t groups = floats / 64 + 1, uint64_t threads = 64) const {
    return raw::launch(function, groups, threads,
                       {raw::memory_ref(RIG_REF_READ, x, 0, floats * 4, 0),
                        raw::memory_ref(RIG_REF_READ, y, 0, floats * 4, 8),
                        raw::memory_ref(RIG_REF_WRITE, z, 0, floats * 4, 16)},
                       add_params());
  }
};

RawAdd raw_buffers(raw::Client &c, uint32_t proxy) {
  auto handle = [&] {
    rig_proxy_completion a = c.alloc(proxy, floats * 4);
    cr_assert(a.status == raw::rig_ok, "alloc: %d", a.status);
    return a.value;
  };
  return {handle(), handle(), handle()};
}

uint64_t raw_load(raw::Client &c, uint32_t proxy, const std::vector<uint8_t> &object) {
  rig_proxy_completion a = c.load_image(proxy, std::as_bytes(std::span(object)));
  cr_assert(a.status == raw::rig_ok, "load: %d", a.status);
  return a.value;
}

// Hands over a launch rigd must refuse, as value 1 of a new proxy of c's:
// the hand-over answers RIG_EINVAL and loses that proxy alone.
void expect_refused(raw::Client &c, const std::vector<rig_proxy_part> &parts, const char *what) {
  uint64_t proxy = c.open(0);
  rig_proxy_completion a = c.hand_over(static_cast<uint32_t>(proxy), 1, {}, parts);
  cr_expect(a.status == raw::rig_einval, "%s: the hand-over answers %d, not RIG_EINVAL", what, a.status);
  cr_expect(c.lost(proxy), "%s: the proxy is lost", what);
}

}  // namespace

/* rigd validates every launch before it runs it: a launch naming a
 * function that is not the client's (another client's id), a function of
 * an image the client unloaded, a grid out of range (a zero axis, more
 * than 2^62 threads), a ref outside the parameters or one naming no handle
 * of the client's is refused and loses that proxy only; the client's other
 * proxies and other clients launch on. */
Test(launches, bad_launches_lose_their_proxy_alone, .timeout = 120) {
  RigdProcess rigd = trusting_rigd("SIM:0");
  std::vector<uint8_t> object = add_object();
  raw::Client one(rigd.socket), two(rigd.socket);
  auto p1 = static_cast<uint32_t>(one.open(0)), p2 = static_cast<uint32_t>(two.open(0));
  uint64_t image = raw_load(one, p1, object);
  uint64_t add = one.resolve(p1, image, "add");
  raw_load(two, p2, object);
  uint64_t theirs = two.resolve(p2, raw_load(two, p2, object), "add");
  cr_assert(theirs != add, "the second client's function has an id the first client's has not");
  RawAdd mine = raw_buffers(one, p1), other = raw_buffers(two, p2);
  cr_assert(one.hand_over(p1, 1, {}, mine.launch(add)).status == raw::rig_ok);
  one.wait_for(p1, 1);

  expect_refused(one, mine.launch(theirs), "another client's function");
  expect_refused(one, mine.launch(add, 0), "a zero axis");
  expect_refused(one, mine.launch(add, uint64_t{1} << 40, uint64_t{1} << 30), "more than 2^62 threads");
  std::vector<rig_proxy_part> outside = mine.launch(add);
  rig_proxy_ref past = raw::memory_ref(RIG_REF_WRITE, mine.z, 0, floats * 4, 28);
  std::memcpy(&outside[3], &past, sizeof past);
  expect_refused(one, outside, "a ref past the parameters");
  std::vector<rig_proxy_part> foreign = mine.launch(add);
  rig_proxy_ref theirs_ref = raw::memory_ref(RIG_REF_WRITE, other.z + 100, 0, floats * 4, 16);
  std::memcpy(&foreign[3], &theirs_ref, sizeof theirs_ref);
  expect_refused(one, foreign, "a ref naming no handle of the client's");
  cr_assert(one.unload(image).status == raw::rig_ok);
  expect_refused(one, mine.launch(add), "a function of an unloaded image");

  cr_expect(!two.lost(p2), "the other client's proxy is not lost");
  cr_assert(two.hand_over(p2, 1, {}, other.launch(theirs)).status == raw::rig_ok);
  two.wait_for(p2, 1);
  auto again = static_cast<uint32_t>(one.open(0));
  uint64_t reloaded = one.resolve(again, raw_load(one, again, object), "add");
  cr_assert(one.hand_over(again, 1, {}, mine.launch(reloaded)).status == raw::rig_ok);
  one.wait_for(again, 1);
  cr_expect(!one.lost(p1), "the first client's first proxy is not lost");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}
