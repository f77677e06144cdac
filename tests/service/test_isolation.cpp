/* Isolation between rigd's clients (DESIGN.md "The per-host service"; the
 * issue's isolation: a fault in work one client submitted loses that
 * client's proxy, and other clients' work goes on wherever the device
 * itself survives, with sim devices always).  rigd runs each client's work
 * on instances of the served devices of its own (rig_open's NAME~TAG), which
 * it opens with the configuration the client's rig_open of NAME@rigd
 * passes: here the sim's fault_at knob makes one client's value fault.
 * Each client is a process of its own (client_process.hpp). */
#include "client_process.hpp"
#include "known_work.hpp"
#include "raw_client.hpp"
#include "rigd_process.hpp"

#include <rig/service.h>

#include <criterion/criterion.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace {

constexpr int64_t fill_bytes = 4096;

// A client whose SIM:0@rigd instance faults at its value 3: the instance's
// value 1 is rigd's zeroing of the client's new buffer, so each wait before
// the client's second fill answers RIG_OK, and the one of that fill (the
// proxy's value 2) RIG_ELOST with the sim's reason; then, closed and opened
// anew, the proxy runs on a new instance.
int run_faulting_client(const std::string &socket) {
  connect_service(socket);
  rig_open_options_t faulting{sizeof faulting, "fault_at=3"};
  rig_device_t *d = nullptr;
  require(rig_open("SIM:0@rigd", &faulting, &d) == RIG_OK, "open with fault_at: %s", rig_last_error());
  rig_buffer_t *b = create_buffer(d, fill_bytes);
  rig_status_t waited = RIG_OK;
  for (int i = 0; i < 8 && waited == RIG_OK; ++i) {
    rig_point_t p{};
    rig_status_t submitted = rig_buffer_submit_fill(b, static_cast<uint8_t>(i), nullptr, 0, &p);
    waited = submitted == RIG_OK ? rig_point_wait(p) : submitted;
    uint64_t value = rig_point_value(p);
    require(waited == RIG_OK || value >= 2, "value %llu failed before the fault: %s",
            static_cast<unsigned long long>(value), rig_last_error());
  }
  require(waited == RIG_ELOST, "the faulting value answers RIG_ELOST, not %s", rig_status_name(waited));
  const char *why = rig_lost(d);
  require(why && std::strstr(why, "value 3 faulted (the fault_at knob)"),
          "the proxy is lost with the sim's reason, not \"%s\"", why ? why : "");
  rig_buffer_unref(b);
  require(rig_close(d) == RIG_OK || rig_lost(d), "close");
  KnownWork again(open_device("SIM:0@rigd"), 32 << 10);
  again.run(7);
  return 0;
}

}  // namespace

/* While a steady client computes on MEM:0@rigd and SIM:0@rigd, another
 * client's SIM:0@rigd faults: that client's proxy is lost with the fault's
 * reason, and a new proxy of it runs; the steady client's results stay right
 * through the fault and after it; a new client is served; and once every
 * client is gone rigd holds none of their memory. */
Test(isolation, a_fault_in_one_clients_work_loses_its_proxy_alone, .timeout = 120) {
  // fault_at is a test knob: rigd's policy allows it here.
  RigdProcess rigd = start_rigd_with_config({"--devices", "MEM:0,SIM:0"}, "test_knobs = allow\n");
  raw::Client observer(rigd.socket);
  raw::Client::Allocated baseline = observer.allocated_of_two();
  run_beside_steady([&](int link) { return run_steady_client(rigd.socket, link); },
                    [&] { return run_faulting_client(rigd.socket); },
                    "the faulting client lost its proxy alone, and a new one ran",
                    "every result of the steady client was right");

  pid_t next = fork_client([&] {
    connect_service(rigd.socket);
    KnownWork work(open_device("SIM:0@rigd"), 32 << 10);
    work.run(11);
    return 0;
  });
  cr_assert(ended_cleanly(await_client(next, client_end_s)), "a new client is served on SIM:0@rigd");
  raw::Client::Allocated after = observer.settle(baseline, 5000);
  cr_assert(after == baseline, "with every client gone rigd holds %lld and %lld bytes, not %lld and %lld",
            static_cast<long long>(after.first), static_cast<long long>(after.second),
            static_cast<long long>(baseline.first), static_cast<long long>(baseline.second));
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

/* A buffer one client shares stays the importer's after the exporter goes
 * (service.h's rig_service_import: it lasts while the import lives,
 * whatever the exporter does), though the exporter's instance held it: the
 * instance stays open for the import. */
Test(isolation, an_import_outlives_its_exporter, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "SIM:0"});
  run_linked_pair(
      [&](int exporter_link) {
        connect_service(rigd.socket);
        rig_buffer_t *b = create_buffer(open_device("SIM:0@rigd"), 64 << 10);
        write_pattern(b, 5);
        uint64_t token = 0;
        require(rig_service_share(b, &token) == RIG_OK, "share: %s", rig_last_error());
        uint64_t imported = 0;
        require(send_value(exporter_link, token) && receive_value(exporter_link, imported, client_start_ms),
                "the importer is gone");
        return 0;  // goes, its memory shared
      },
      "the exporter ended",
      [&](int importer_link) {
        connect_service(rigd.socket);
        rig_device_t *d = open_device("SIM:0@rigd");
        rig_buffer_t *b = import_until_the_exporter_goes(importer_link, d);
        check_pattern(b, 5);
        write_pattern(b, 6);
        check_pattern(b, 6);
        return 0;
      },
      "the import outlived its exporter");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

/* Memory rigd hands a client holds no byte that another client's work
 * wrote: rig_buffer_create's contents are unspecified, and the memory of a
 * served device comes back from its driver and from rig's cache to later
 * clients, so rigd sets every byte of a client's new memory to zero before
 * any of the client's work on it.  Here each client allocates, writes and
 * frees memory of every size in turn, then the next looks at new memory of
 * the same sizes, on the same served devices. */
Test(isolation, new_memory_holds_nothing_another_client_wrote, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0,SIM:0"});
  constexpr int64_t sizes[] = {4096, 64 << 10, 1 << 20};
  for (int client = 0; client < 3; client++) {
    pid_t pid = fork_client([&] {
      connect_service(rigd.socket);
      for (const char *name : {"MEM:0@rigd", "SIM:0@rigd"}) {
        rig_device_t *d = open_device(name);
        for (int64_t n : sizes) {
          rig_buffer_t *b = create_buffer(d, n);
          std::vector<uint8_t> bytes = read_bytes(b);
          size_t written = static_cast<size_t>(std::count_if(bytes.begin(), bytes.end(), [](uint8_t x) { return x; }));
          require(written == 0, "client %d: %zu bytes of a new buffer of %lld on %s are not zero", client, written,
                  static_cast<long long>(n), name);
          write_pattern(b, static_cast<uint64_t>(client + 1));
          rig_buffer_unref(b);
        }
      }
      return 0;
    });
    cr_assert(ended_cleanly(await_client(pid, client_end_s)), "client %d found its new memory zeroed", client);
  }
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

/* LOSS-11, LMEM-10: a fault in the exporter's work loses the exporter's
 * proxy alone (service.h), though the importer's import maps memory the
 * exporter allocated: its last write (the exporter's, done before the
 * fault) was reached, so the importer reads and writes it, and its proxy
 * stays live and runs more work. */
Test(isolation, a_fault_in_the_exporter_leaves_the_importer_live, .timeout = 60) {
  // fault_at is a test knob: rigd's policy allows it here.
  RigdProcess rigd = start_rigd_with_config({"--devices", "SIM:0"}, "test_knobs = allow\n");
  constexpr int64_t shared_bytes = 64 << 10;
  run_linked_pair(
      [&](int exporter_link) {
        connect_service(rigd.socket);
        rig_open_options_t faulting{sizeof faulting, "fault_at=6"};
        rig_device_t *d = nullptr;
        require(rig_open("SIM:0@rigd", &faulting, &d) == RIG_OK, "open with fault_at: %s", rig_last_error());
        rig_buffer_t *shared = create_buffer(d, shared_bytes);
        rig_buffer_t *other = create_buffer(d, shared_bytes);
        write_pattern(shared, 5);
        uint64_t token = 0;
        require(rig_service_share(shared, &token) == RIG_OK, "share: %s", rig_last_error());
        exchange(exporter_link, token, "the importer is gone");
        // Work on other memory of the exporter's faults, shared never again written.
        rig_status_t waited = RIG_OK;
        for (int i = 0; i < 8 && waited == RIG_OK; ++i) {
          rig_point_t p{};
          rig_status_t submitted = rig_buffer_submit_fill(other, static_cast<uint8_t>(i), nullptr, 0, &p);
          waited = submitted == RIG_OK ? rig_point_wait(p) : submitted;
        }
        require(waited == RIG_ELOST && rig_lost(d), "the exporter's work faults: %s", rig_status_name(waited));
        exchange(exporter_link, 1, "the importer is gone");
        return 0;
      },
      "the exporter's work faulted",
      [&](int importer_link) {
        connect_service(rigd.socket);
        rig_device_t *d = open_device("SIM:0@rigd");
        rig_buffer_t *b = import_sent_token(importer_link, d);
        exchange(importer_link, 1, "the exporter is gone");
        check_pattern(b, 5);
        write_pattern(b, 6);
        check_pattern(b, 6);
        require(!rig_lost(d), "the importer's proxy is lost: %s", rig_lost(d));
        KnownWork(d, 32 << 10).run(3);
        require(send_value(importer_link, 1), "the exporter is gone");
        return 0;
      },
      "the importer read and wrote its import after the exporter's fault, its proxy live");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}
