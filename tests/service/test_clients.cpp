/* Tests of rigd with client processes that use librig's public API
 * (rig/service.h, NAME@rigd proxies): each client is a process of its own,
 * forked before it touches librig (client_process.hpp), and rigd is the
 * built program.  The test's process watches rigd through a raw client
 * (raw_client.hpp) and kills what it must with SIGKILL.
 *
 * Each test names the rules it asserts; where no rule of
 * rig-remote-proxy.txt applies, the statement is the design's
 * (DESIGN.md "The per-host service") or service.h's. */
#include "client_process.hpp"
#include "known_work.hpp"
#include "raw_client.hpp"
#include "rigd_process.hpp"
#include "socket_messages.hpp"

#include <rig/service.h>

#include <criterion/criterion.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <thread>

namespace {

bool lost_because_rigd_closed(const char *why) { return std::strstr(why, "rigd closed the connection") != nullptr; }

}  // namespace

/* DESIGN.md "The per-host service" (the shared-buffer table: buffers that
 * processes share, export and import) and service.h's rig_service_share and
 * rig_service_import: another process imports the bytes by the token and
 * sees what the exporter wrote; work of the two processes on the bytes runs
 * in the order of their submits, so each sees the other's write once the
 * writing call returned; a view exports exactly its bytes, and an import of
 * it reaches those alone; an unknown token answers RIG_EINVAL.  PROXY-03:
 * rigd runs the work, its device moves the bytes. */
Test(clients, two_processes_share_a_buffer_and_a_view, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  constexpr int64_t bytes = 64 << 10, view_first = 4096, view_bytes = 8192;
  run_linked_pair(
      [&](int b) {
        connect_service(rigd.socket);
        rig_buffer_t *whole = create_buffer(open_device("MEM:0@rigd"), bytes);
        write_pattern(whole, 1);
        rig_buffer_t *part = nullptr;
        require(rig_buffer_view(whole, view_first, view_bytes, &part) == RIG_OK, "view: %s", rig_last_error());
        uint64_t whole_token = 0, part_token = 0;
        rig_status_t status = rig_service_share(whole, &whole_token);
        require(status == RIG_OK, "share: %s: %s", rig_status_name(status), rig_last_error());
        status = rig_service_share(part, &part_token);
        require(status == RIG_OK, "share of a view: %s: %s", rig_status_name(status), rig_last_error());
        require(send_value(b, whole_token) && send_value(b, part_token), "b is gone");

        uint64_t step;
        require(receive_value(b, step, client_start_ms) && step == 2, "b wrote the whole buffer");
        check_pattern(whole, 2);
        require(send_value(b, 2), "b is gone");
        require(receive_value(b, step, client_start_ms) && step == 3, "b wrote through the view");
        std::vector<uint8_t> seen = read_bytes(whole);
        for (int64_t i = 0; i < bytes; ++i) {
          bool in_view = i >= view_first && i < view_first + view_bytes;
          uint8_t expected = in_view ? pattern_byte(3, i - view_first) : pattern_byte(2, i);
          require(seen[static_cast<size_t>(i)] == expected, "byte %lld is %u, not %u (%s the view)",
                  static_cast<long long>(i), seen[static_cast<size_t>(i)], expected, in_view ? "in" : "outside");
        }
        // The exporter stays connected until b is done with the exports.
        require(send_value(b, 3) && receive_value(b, step, client_start_ms), "b ends");
        rig_buffer_unref(part);
        rig_buffer_unref(whole);
        return 0;
      },
      "the exporting client's checks passed",
      [&](int a_end) {
        connect_service(rigd.socket);
        rig_device_t *d = open_device("MEM:0@rigd");
        uint64_t whole_token, part_token;
        require(receive_value(a_end, whole_token, client_start_ms) && receive_value(a_end, part_token, client_start_ms),
                "a sent its tokens");
        rig_buffer_t *whole = nullptr, *part = nullptr;
        rig_status_t status = rig_service_import(d, whole_token, &whole);
        require(status == RIG_OK, "import: %s: %s", rig_status_name(status), rig_last_error());
        require(rig_buffer_bytes(whole) == bytes, "the import has the export's %lld bytes",
                static_cast<long long>(bytes));
        check_pattern(whole, 1);
        status = rig_service_import(d, part_token, &part);
        require(status == RIG_OK, "import of a view: %s: %s", rig_status_name(status), rig_last_error());
        require(rig_buffer_bytes(part) == view_bytes, "the view's import has the view's bytes");
        check_pattern(part, 1, view_first);

        rig_buffer_t *none = nullptr;
        uint64_t unknown = whole_token ^ part_token ^ 0x5a5a5a5a5a5a5a5aull;
        require(rig_service_import(d, unknown, &none) == RIG_EINVAL && none == nullptr, "an unknown token: EINVAL");
        require(rig_service_import(d, 0, &none) == RIG_EINVAL && none == nullptr, "token 0: EINVAL");

        write_pattern(whole, 2);
        uint64_t step;
        require(send_value(a_end, 2) && receive_value(a_end, step, client_start_ms), "a read the buffer");
        write_pattern(part, 3);
        require(send_value(a_end, 3) && receive_value(a_end, step, client_start_ms), "a read the view's bytes");
        rig_buffer_unref(part);
        rig_buffer_unref(whole);
        require(send_value(a_end, 4), "a is gone");
        return 0;
      },
      "the importing client's checks passed");
}

/* service.h's rig_service_share_fd and rig_service_import_fd: the exporter
 * passes the descriptor over a Unix socket (SCM_RIGHTS), and the importer
 * imports through it the bytes the exporter wrote, without a token; a
 * descriptor that names no export (a memfd of the importer's own), one
 * that is not open, and a negative one answer RIG_EINVAL, and the proxy
 * serves on. */
Test(clients, a_process_imports_through_a_descriptor_passed_to_it, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  constexpr int64_t bytes = 8192;
  run_linked_pair(
      [&](int importer) {
        connect_service(rigd.socket);
        rig_buffer_t *b = create_buffer(open_device("MEM:0@rigd"), bytes);
        write_pattern(b, 5);
        int fd = -1;
        rig_status_t status = rig_service_share_fd(b, &fd);
        require(status == RIG_OK && fd >= 0, "share_fd: %s: %s", rig_status_name(status), rig_last_error());
        uint64_t tag = 1, step = 0;
        require(rig::proxy::send_message(importer, std::as_bytes(std::span(&tag, 1)), std::span(&fd, 1)),
                "the importer is gone");
        close(fd);
        // The export lasts while this process stays connected.
        require(receive_value(importer, step, client_start_ms), "the importer is gone");
        rig_buffer_unref(b);
        return 0;
      },
      "the exporter's checks passed",
      [&](int exporter_end) {
        connect_service(rigd.socket);
        rig_device_t *d = open_device("MEM:0@rigd");
        uint64_t tag = 0;
        int fd = -1;
        size_t received = 0;
        require(rig::proxy::receive_message(exporter_end, std::as_writable_bytes(std::span(&tag, 1)),
                                            std::span(&fd, 1), &received) &&
                    received == 1,
                "the exporter passed a descriptor");
        rig_buffer_t *b = nullptr;
        rig_status_t status = rig_service_import_fd(d, fd, &b);
        require(status == RIG_OK, "import_fd: %s: %s", rig_status_name(status), rig_last_error());
        require(rig_buffer_bytes(b) == bytes, "the import has the export's bytes");
        check_pattern(b, 5);
        rig_buffer_unref(b);
        close(fd);

        rig_buffer_t *none = nullptr;
        int own = memfd_create("not-an-export", MFD_CLOEXEC);
        require(own >= 0, "memfd_create");
        require(rig_service_import_fd(d, own, &none) == RIG_EINVAL && none == nullptr,
                "a descriptor rigd did not make: EINVAL");
        close(own);
        require(rig_service_import_fd(d, own, &none) == RIG_EINVAL && none == nullptr,
                "a descriptor that is not open: EINVAL");
        require(rig_service_import_fd(d, -1, &none) == RIG_EINVAL && none == nullptr, "fd -1: EINVAL");
        rig_buffer_t *after = create_buffer(d, 64);
        require(!rig_lost(d), "the refused descriptors left the proxy serving");
        rig_buffer_unref(after);
        require(send_value(exporter_end, 1), "the exporter is gone");
        return 0;
      },
      "the importer read the exporter's bytes through the descriptor");
}

/* DESIGN.md "The per-host service", the shared-buffer table: a host access
 * in any sharing process waits for the work other processes submitted on
 * the shared memory by reading words, with no round trip.  The exporter
 * shares a buffer of SIM:0@rigd and submits a fill of it that takes 300 ms;
 * once that submit returned, the importer's rig_buffer_reached answers
 * false, its rig_buffer_wait returns only once the exporter's fill is done
 * (the exporter's rig_point_reached says so at that moment), and then it
 * reads the fill's bytes.  With through_mapping, the exporter fills the
 * buffer through its borrow on SIM:1@rigd, made before the export: the
 * table counts work per allocation, through any handle of it. */
namespace {

void importer_waits_for_the_exporters_fill(bool through_mapping) {
  // latency_us is a test knob: rigd's policy allows it here.
  RigdProcess rigd = start_rigd_with_config({"--devices", "SIM:0,SIM:1"}, "test_knobs = allow\n");
  constexpr int64_t bytes = 4096;
  run_linked_pair(
      [&](int importer) {
        connect_service(rigd.socket);
        rig_open_options_t slow{sizeof slow, "latency_us=300000"};
        rig_device_t *d = nullptr, *mapper = nullptr;
        require(rig_open("SIM:0@rigd", &slow, &d) == RIG_OK, "open: %s", rig_last_error());
        require(rig_open("SIM:1@rigd", &slow, &mapper) == RIG_OK, "open: %s", rig_last_error());
        rig_buffer_t *b = create_buffer(d, bytes), *filled_through = rig_buffer_ref(b);
        require(rig_buffer_fill(b, 1) == RIG_OK, "fill: %s", rig_last_error());
        if (through_mapping) {
          rig_buffer_unref(filled_through);
          require(rig_buffer_borrow(mapper, b, &filled_through) == RIG_OK && filled_through,
                  "SIM:1@rigd maps SIM:0@rigd's memory: %s", rig_last_error());
        }
        uint64_t token = 0, step = 0;
        require(rig_service_share(b, &token) == RIG_OK, "share: %s", rig_last_error());
        exchange(importer, token, "the importer is gone");
        rig_point_t filled{};
        require(rig_buffer_submit_fill(filled_through, 2, nullptr, 0, &filled) == RIG_OK, "submit: %s",
                rig_last_error());
        require(send_value(importer, 1), "the importer is gone");
        // The importer asks once its wait returned.
        require(receive_value(importer, step, client_start_ms), "the importer is gone");
        bool reached = false;
        require(rig_point_reached(filled, &reached) == RIG_OK, "reached: %s", rig_last_error());
        exchange(importer, reached ? 1 : 0, "the importer is gone");
        rig_buffer_unref(filled_through);
        rig_buffer_unref(b);
        return 0;
      },
      "the exporter's checks passed",
      [&](int exporter_end) {
        connect_service(rigd.socket);
        rig_device_t *d = open_device("SIM:0@rigd");
        rig_buffer_t *b = import_sent_token(exporter_end, d);
        exchange(exporter_end, 1, "the exporter did not submit");
        bool reached = true;
        require(rig_buffer_reached(b, RIG_ACCESS_READ, &reached) == RIG_OK && !reached,
                "the exporter's fill in flight: the import's writes are not all reached");
        require(rig_buffer_wait(b, RIG_ACCESS_READ) == RIG_OK, "wait: %s", rig_last_error());
        uint64_t exporter_saw = 0;
        require(send_value(exporter_end, 1) && receive_value(exporter_end, exporter_saw, client_start_ms) &&
                    exporter_saw == 1,
                "the wait returned before the exporter's fill was done");
        std::vector<uint8_t> seen = read_bytes(b);
        for (uint8_t byte : seen) require(byte == 2, "the importer reads the exporter's fill");
        rig_buffer_unref(b);
        require(send_value(exporter_end, 2), "the exporter is gone");
        return 0;
      },
      "the importer waited for the exporter's fill");
}

}  // namespace

Test(clients, a_wait_in_the_importer_follows_the_exporters_work, .timeout = 60) {
  importer_waits_for_the_exporters_fill(false);
}

Test(clients, a_wait_in_the_importer_follows_work_through_a_mapping_made_before_the_export, .timeout = 60) {
  importer_waits_for_the_exporters_fill(true);
}

/* service.h's order of shared bytes: a submit that rig made after another
 * process's submit returned follows that submit's work where they share
 * memory, although a hand-over returns before rigd runs it (PROXY-47: a
 * submit naming shared bytes returns once rigd, the peer, took them).  200 times,
 * the exporter submits a fill of the round's byte and, once the submit
 * returned, tells the importer, whose copy out of the bytes (a blit, which
 * it submits then) must see that byte. */
Test(clients, a_submit_follows_another_process_submit_that_returned, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  constexpr int64_t bytes = 4096;
  constexpr uint64_t rounds = 200;
  run_linked_pair(
      [&](int importer) {
        connect_service(rigd.socket);
        rig_buffer_t *b = create_buffer(open_device("MEM:0@rigd"), bytes);
        uint64_t token = 0, step = 0;
        require(rig_service_share(b, &token) == RIG_OK, "share: %s", rig_last_error());
        require(send_value(importer, token), "the importer is gone");
        for (uint64_t round = 1; round <= rounds; ++round) {
          require(receive_value(importer, step, client_start_ms) && step == round - 1, "the importer is gone");
          rig_point_t filled{};
          require(rig_buffer_submit_fill(b, static_cast<uint8_t>(round), nullptr, 0, &filled) == RIG_OK,
                  "submit: %s", rig_last_error());
          require(send_value(importer, round), "the importer is gone");
        }
        require(receive_value(importer, step, client_start_ms), "the importer is gone");
        rig_buffer_unref(b);
        return 0;
      },
      "the exporter's checks passed",
      [&](int exporter_end) {
        connect_service(rigd.socket);
        rig_device_t *d = open_device("MEM:0@rigd");
        uint64_t round = 0;
        rig_buffer_t *b = import_sent_token(exporter_end, d);
        require(send_value(exporter_end, 0), "the exporter is gone");
        for (uint64_t expected = 1; expected <= rounds; ++expected) {
          require(receive_value(exporter_end, round, client_start_ms) && round == expected, "the exporter is gone");
          uint8_t byte = 0;
          require(rig_buffer_blit_to_bytes(b, 0, &byte, 1, 0, 1) == RIG_OK, "blit: %s", rig_last_error());
          require(byte == static_cast<uint8_t>(round), "round %llu: the importer read %u, before the fill of the "
                  "exporter's submit that returned", static_cast<unsigned long long>(round), byte);
          require(send_value(exporter_end, round), "the exporter is gone");
        }
        rig_buffer_unref(b);
        return 0;
      },
      "each copy followed the fill that came first");
}

namespace {

// A client that rigd sees die in the middle of its work: it opens both of
// rigd's devices, allocates, sends 1 on channel once its submits stream,
// and submits copies and fills until it is killed.
int run_victim(const std::string &socket, int channel) {
  connect_service(socket);
  constexpr int64_t bytes = 256 << 10;
  std::vector<rig_buffer_t *> buffers;
  for (const char *name : {"MEM:0@rigd", "SIM:0@rigd"}) {
    rig_device_t *d = open_device(name);
    for (int i = 0; i < 4; ++i) buffers.push_back(create_buffer(d, bytes));
  }
  rig_box_t all = rig_row(0, 0, bytes);
  for (uint64_t round = 0;; ++round) {
    for (size_t i = 0; i < buffers.size(); i += 4) {
      rig_point_t done;
      require(rig_buffer_submit_copy(buffers[i], buffers[i + 1], &all, 1, nullptr, 0, &done) == RIG_OK, "copy: %s",
              rig_last_error());
      require(rig_buffer_submit_fill(buffers[i + 2], static_cast<uint8_t>(round), nullptr, 0, &done) == RIG_OK,
              "fill: %s", rig_last_error());
      require(rig_buffer_submit_copy(buffers[i + 2], buffers[i + 3], &all, 1, nullptr, 0, &done) == RIG_OK, "copy: %s",
              rig_last_error());
    }
    if (round == 2) require(send_value(channel, 1), "the test is gone");
  }
}

}  // namespace

/* DESIGN.md "The per-host service", client death: when a client's socket
 * closes, rigd releases every object the client held once the work using it
 * is done, and other clients see nothing.  20 clients in a row are killed
 * (SIGKILL) in the middle of a stream of copies and fills on MEM:0@rigd and
 * SIM:0@rigd; meanwhile another client's known computation on both devices
 * stays correct, and after each kill rigd's allocated bytes of each device
 * (RIG_PROXY_OP_ALLOCATED) come back to what they were before the first. */
Test(clients, clients_killed_mid_stream_leave_no_memory_and_others_unharmed, .timeout = 120) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0,SIM:0"});
  Channel steady_link;
  pid_t steady =
      fork_client([&] { return run_steady_client(rigd.socket, steady_link.ends[1]); }, {steady_link.ends[1]});
  steady_link.close_end(1);
  uint64_t ready;
  cr_assert(receive_value(steady_link.ends[0], ready, client_start_ms), "the steady client started");

  raw::Client observer(rigd.socket);
  raw::Client::Allocated before = observer.allocated_of_two();
  cr_assert(before.first > 0 && before.second > 0, "the steady client's buffers count");
  unsigned seed = std::random_device{}();
  std::mt19937 random(seed);
  for (int round = 0; round < 20; ++round) {
    Channel victim_link;
    pid_t victim = fork_client([&] { return run_victim(rigd.socket, victim_link.ends[1]); }, {victim_link.ends[1]});
    victim_link.close_end(1);
    uint64_t streaming;
    bool streams = receive_value(victim_link.ends[0], streaming, client_start_ms);
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 20000));
    kill(victim, SIGKILL);
    int status = await_client(victim, client_end_s);
    cr_assert(streams && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "victim %d streamed its work until it was killed (status %#x)", round, status);
    raw::Client::Allocated after = observer.settle(before, 5000);
    cr_assert(after == before,
              "after victim %d (delay seed %u) rigd holds %lld bytes of MEM:0 and %lld of SIM:0, not %lld and %lld",
              round, seed, static_cast<long long>(after.first), static_cast<long long>(after.second),
              static_cast<long long>(before.first), static_cast<long long>(before.second));
    cr_assert(!readable(steady_link.ends[0]), "the steady client runs on");
  }
  cr_assert(send_value(steady_link.ends[0], 0), "the steady client runs on");
  uint64_t rounds = 0;
  cr_assert(receive_value(steady_link.ends[0], rounds, client_start_ms) && rounds > 0, "the steady client ran");
  cr_assert(ended_cleanly(await_client(steady, client_end_s)), "every result of the steady client was right");
}

namespace {

// Each value of rigd's SIM:0 takes this long: work the kill interrupts.
constexpr const char *slow_sim = "latency_us=4000000";

// A client with two waits on SIM:0@rigd points whose work runs in rigd when
// it is killed: one waits from well before, the other starts as the client
// sends 1 on channel.  Once the waits end it reads the kill's time from
// channel and checks their outcome, then that its own MEM:0 works.
int run_waiting_client(const std::string &socket, int channel) {
  connect_service(socket);
  rig_device_t *sim = open_device("SIM:0@rigd");
  rig_buffer_t *early_buffer = create_buffer(sim, 4096), *late_buffer = create_buffer(sim, 4096);
  struct Outcome {
    rig_status_t status;
    int64_t at;
    std::string why;
  };
  auto wait = [](rig_point_t p) {
    rig_status_t status = rig_point_wait(p);
    return Outcome{status, monotonic_ns(), rig_last_error()};
  };
  rig_point_t early_point, late_point;
  require(rig_buffer_submit_fill(early_buffer, 1, nullptr, 0, &early_point) == RIG_OK, "fill: %s", rig_last_error());
  Outcome early{};
  std::thread early_waiter([&] { early = wait(early_point); });
  require(rig_buffer_submit_fill(late_buffer, 2, nullptr, 0, &late_point) == RIG_OK, "fill: %s", rig_last_error());
  bool reached = true;
  require(rig_point_reached(late_point, &reached) == RIG_OK && !reached, "the work runs in rigd");
  require(send_value(channel, 1), "the test is gone");
  Outcome late = wait(late_point);
  early_waiter.join();

  uint64_t killed = 0;
  require(receive_value(channel, killed, client_start_ms), "the test sent the kill's time");
  for (const Outcome *o : {&early, &late}) {
    const char *which = o == &early ? "a wait in progress" : "a wait started before the kill";
    require(o->status == RIG_ELOST, "%s answers %s, not RIG_ELOST", which, rig_status_name(o->status));
    require(o->at - static_cast<int64_t>(killed) <= 1000000000, "%s ended %lld ms after the kill", which,
            static_cast<long long>((o->at - static_cast<int64_t>(killed)) / 1000000));
    require(lost_because_rigd_closed(o->why.c_str()), "%s: the error is \"%s\"", which, o->why.c_str());
  }
  require(rig_lost(sim) != nullptr && lost_because_rigd_closed(rig_lost(sim)), "the proxy is lost: %s",
          rig_lost(sim) ? rig_lost(sim) : "(live)");
  require(rig_point_wait(early_point) == RIG_ELOST, "a later wait answers RIG_ELOST at once");
  // MACH-03: a lost machine stays lost; an open on it answers its reason.
  rig_device_t *again = nullptr;
  require(rig_open("MEM:0@rigd", nullptr, &again) == RIG_EOPEN && lost_because_rigd_closed(rig_last_error()),
          "an open on the lost machine rigd answers RIG_EOPEN: %s", rig_last_error());
  rig_buffer_unref(early_buffer);
  rig_buffer_unref(late_buffer);
  // The rest of the process works on.
  KnownWork own(open_device("MEM:0"), 64 << 10);
  own.run(7);
  return 0;
}

}  // namespace

/* DESIGN.md "The per-host service", service death: clients' proxies become
 * lost ("rigd closed the connection"), waits return RIG_ELOST instead of
 * hanging, and nothing else in the client breaks (service.h: "If rigd goes,
 * every proxy is lost").  PROXY-07 (a proxy fails with its link) and
 * PROXY-88 (sleep raises once the link failed, before the call or during
 * it): in two clients, a wait in progress on work rigd runs and a wait
 * started just before the kill both answer RIG_ELOST within 1 s of rigd's
 * SIGKILL, with rig_last_error naming rigd's close; MACH-03: an open on the
 * lost machine answers RIG_EOPEN; each client's own MEM:0 works after. */
Test(clients, rigd_killed_makes_every_wait_answer_elost_within_a_second, .timeout = 60) {
  setenv("RIG_SIM", slow_sim, 1);
  RigdProcess rigd = start_rigd({"--devices", "SIM:0"});
  unsetenv("RIG_SIM");
  constexpr int count = 2;
  Channel links[count];
  pid_t clients[count];
  for (int i = 0; i < count; ++i) {
    clients[i] = fork_client([&] { return run_waiting_client(rigd.socket, links[i].ends[1]); }, {links[i].ends[1]});
    links[i].close_end(1);
  }
  for (int i = 0; i < count; ++i) {
    uint64_t waiting;
    cr_assert(receive_value(links[i].ends[0], waiting, client_start_ms), "client %d waits", i);
  }
  cr_assert(kill(rigd.pid, SIGKILL) == 0);
  auto killed = static_cast<uint64_t>(monotonic_ns());
  for (int i = 0; i < count; ++i) send_value(links[i].ends[0], killed);
  for (int i = 0; i < count; ++i)
    cr_assert(ended_cleanly(await_client(clients[i], client_end_s)), "client %d's checks", i);
}

/* The design's quotas (DESIGN.md "The per-host service": rigd's policy;
 * config quota_bytes) through the public API, and PROXY-59 (alloc answers
 * none where the agent refuses): past the quota rig_buffer_create on
 * MEM:0@rigd answers RIG_ENOMEM, within it it succeeds, and the bytes of a
 * buffer that went count no more once rig reclaims them. */
Test(clients, creates_past_the_quota_answer_enomem, .timeout = 60) {
  constexpr int64_t quota = 1 << 20;
  RigdProcess rigd = start_rigd_with_config({"--devices", "MEM:0"}, "quota_bytes = " + std::to_string(quota) + "\n");
  pid_t client = fork_client([&] {
    connect_service(rigd.socket);
    rig_device_t *d = open_device("MEM:0@rigd");
    rig_buffer_t *b = nullptr;
    rig_status_t status = rig_buffer_create(d, 2 * quota, RIG_MEMORY_DEVICE, &b);
    require(status == RIG_ENOMEM && b == nullptr, "twice the quota: %s", rig_status_name(status));
    require(rig_error_device() == d, "RIG_ENOMEM names the proxy");
    rig_buffer_t *all = create_buffer(d, quota);
    write_pattern(all, 4);
    check_pattern(all, 4);
    status = rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b);
    require(status == RIG_ENOMEM, "a byte past the full quota: %s", rig_status_name(status));
    rig_buffer_unref(all);
    rig_buffer_t *half = create_buffer(d, quota / 2);
    rig_buffer_unref(half);
    return 0;
  });
  cr_assert(ended_cleanly(await_client(client, client_end_s)), "the client's checks passed");
}

/* HACC-13 (an exclusive hold refuses every other use) for
 * rig_service_share: memory held exclusive cannot be shared, and can once
 * the hold ends. */
Test(clients, memory_held_exclusive_is_not_shared, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  pid_t client = fork_client([&] {
    connect_service(rigd.socket);
    rig_device_t *d = open_device("MEM:0@rigd");
    rig_buffer_t *b = create_buffer(d, 4096);
    bool exclusive = false;
    require(rig_claim_begin(b, &exclusive) == RIG_OK && exclusive, "the hold: %s", rig_last_error());
    uint64_t token = 0;
    rig_status_t status = rig_service_share(b, &token);
    require(status == RIG_EINVAL, "a share of memory held exclusive: %s", rig_status_name(status));
    require(std::strstr(rig_last_error(), "exclusive") != nullptr, "the refusal: %s", rig_last_error());
    int fd = 0;
    status = rig_service_share_fd(b, &fd);
    require(status == RIG_EINVAL && fd == -1, "a descriptor of memory held exclusive: %s", rig_status_name(status));
    require(rig_claim_end(b) == RIG_OK, "the hold's end: %s", rig_last_error());
    require(rig_service_share(b, &token) == RIG_OK, "a share once the hold ended: %s", rig_last_error());
    rig_buffer_unref(b);
    return 0;
  });
  cr_assert(ended_cleanly(await_client(client, client_end_s)), "the client's checks passed");
}

/* PROXY-07 (a proxy fails with its link: when the link fails, every proxy
 * of it reports the failure) and MACH-03's open on a lost machine: a client
 * holds MEM:0@rigd and SIM:0@rigd, and uses neither; once rigd is killed
 * both report lost within a second, with rig_last_error naming rigd's
 * close, the machine is lost, and rig_open of either name answers RIG_EOPEN
 * instead of the lost proxy. */
Test(clients, a_lost_machines_unused_proxies_all_report_lost, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0,SIM:0"});
  Channel link;
  pid_t client = fork_client(
      [&] {
        rig_machine_t *machine = nullptr;
        rig_service_options_t options{sizeof options, rigd.socket.c_str()};
        require(rig_service_connect(&options, &machine) == RIG_OK, "connect: %s", rig_last_error());
        rig_device_t *mem = open_device("MEM:0@rigd"), *sim = open_device("SIM:0@rigd");
        require(rig_lost(mem) == nullptr && rig_lost(sim) == nullptr, "live while rigd runs");
        require(send_value(link.ends[1], 1), "the test is gone");
        uint64_t killed;
        require(receive_value(link.ends[1], killed, client_start_ms), "the test killed rigd");
        while (!rig_lost(mem) && monotonic_ns() - static_cast<int64_t>(killed) < 1000000000)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        for (rig_device_t *d : {mem, sim}) {
          const char *why = rig_lost(d);
          require(why != nullptr && lost_because_rigd_closed(why), "%s is lost within a second: %s", rig_device_name(d),
                  why ? why : "(live)");
        }
        require(rig_machine_lost(machine) != nullptr, "the machine is lost");
        for (const char *name : {"MEM:0@rigd", "SIM:0@rigd"}) {
          rig_device_t *again = nullptr;
          rig_status_t status = rig_open(name, nullptr, &again);
          require(status == RIG_EOPEN && again == nullptr && lost_because_rigd_closed(rig_last_error()),
                  "rig_open of %s answers %s: %s", name, rig_status_name(status), rig_last_error());
        }
        return 0;
      },
      {link.ends[1]});
  link.close_end(1);
  uint64_t ready;
  cr_assert(receive_value(link.ends[0], ready, client_start_ms), "the client opened its proxies");
  cr_assert(kill(rigd.pid, SIGKILL) == 0);
  send_value(link.ends[0], static_cast<uint64_t>(monotonic_ns()));
  cr_assert(ended_cleanly(await_client(client, client_end_s)), "the client's checks passed");
}

/* rigd(8), test_knobs: an open of SIM:0@rigd that sets a device knob that
 * exists for tests (latency_us, hang_ms, fault_at, budget) answers
 * RIG_EOPEN where rigd's policy does not allow them, as by default, with
 * rig_last_error naming the knob and the policy's key, and an open without
 * one succeeds; with test_knobs = allow the open with the
 * knob succeeds. */
Test(clients, test_knobs_are_refused_unless_the_policy_allows_them, .timeout = 60) {
  // A client a configuration: a client's instance of a device has one.
  auto open_answers = [](const std::string &socket, const char *config, rig_status_t expected) {
    pid_t client = fork_client([&] {
      connect_service(socket);
      rig_open_options_t options{sizeof options, config};
      rig_device_t *d = nullptr;
      rig_status_t status = rig_open("SIM:0@rigd", &options, &d);
      require(status == expected, "an open with %s answers %s", config, rig_status_name(status));
      // A refusal says why: the policy's key and the test knob refused.
      require(status == RIG_OK ||
                  (std::strstr(rig_last_error(), "test_knobs") && std::strstr(rig_last_error(), "the test knob")),
              "the refusal of %s: %s", config, rig_last_error());
      return 0;
    });
    return ended_cleanly(await_client(client, client_end_s));
  };
  const char *knobs[] = {"latency_us=1000", "hang_ms=100000", "fault_at=1", "budget=64G", "count=1,hang_ms=9"};
  {
    RigdProcess rigd = start_rigd({"--devices", "SIM:0"});
    for (const char *knob : knobs) cr_assert(open_answers(rigd.socket, knob, RIG_EOPEN), "%s is refused", knob);
    cr_assert(open_answers(rigd.socket, "copy_gbps=100", RIG_OK), "an open with no test knob succeeds");
  }
  RigdProcess rigd = start_rigd_with_config({"--devices", "SIM:0"}, "test_knobs = allow\n");
  for (const char *knob : knobs) cr_assert(open_answers(rigd.socket, knob, RIG_OK), "%s is allowed", knob);
}

/* DESIGN.md "The per-host service", connection: rigd admits the users its
 * policy allows; service.h: rig_service_connect answers RIG_EOPEN with the
 * reason when rigd refuses the process. */
Test(clients, a_user_outside_the_policy_is_refused, .timeout = 60) {
  RigdProcess rigd =
      start_rigd_with_config({"--devices", "MEM:0"}, "allow_users = " + std::to_string(getuid() + 1) + "\n");
  pid_t client = fork_client([&] {
    rig_service_options_t options{sizeof options, rigd.socket.c_str()};
    rig_status_t status = rig_service_connect(&options, NULL);
    require(status == RIG_EOPEN, "connect answers %s, not RIG_EOPEN", rig_status_name(status));
    require(std::strstr(rig_last_error(), "not admitted by rigd's policy") != nullptr, "the reason is \"%s\"",
            rig_last_error());
    return 0;
  });
  cr_assert(ended_cleanly(await_client(client, client_end_s)), "the client's checks passed");
}

/* rigd(8), max_clients_per_user: a user's clients connected at once are
 * bounded; one past the bound is refused with the reason (rig_service_connect
 * answers RIG_EOPEN), and once one goes another is admitted. */
Test(clients, a_user_past_its_clients_is_refused_until_one_goes, .timeout = 60) {
  RigdProcess rigd = start_rigd_with_config({"--devices", "MEM:0"}, "max_clients_per_user = 2\n");
  auto first = std::make_unique<raw::Client>(rigd.socket);
  raw::Client second(rigd.socket);
  auto connect_answers = [&](rig_status_t expected) {
    pid_t client = fork_client([&] {
      rig_service_options_t options{sizeof options, rigd.socket.c_str()};
      rig_status_t status = rig_service_connect(&options, NULL);
      require(status == expected, "connect answers %s", rig_status_name(status));
      if (status == RIG_EOPEN)
        require(std::strstr(rig_last_error(), "max_clients_per_user") != nullptr, "the reason is \"%s\"",
                rig_last_error());
      return 0;
    });
    return ended_cleanly(await_client(client, client_end_s));
  };
  cr_assert(connect_answers(RIG_EOPEN), "a third client of the user is refused");
  first.reset();
  // rigd counts the first client out as its session ends, a moment later.
  bool admitted = false;
  for (int tries = 0; tries < 50 && !admitted; tries++) {
    admitted = connect_answers(RIG_OK);
    if (!admitted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  cr_assert(admitted, "with the first gone, another is admitted");
}
