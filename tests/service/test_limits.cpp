/* Tests of rigd's limits on what a client makes it hold (rigd(8), LIMITS):
 * attacks on its address space, its descriptors and its tables, each
 * against the built rigd, by a client of the protocol in the test's
 * process (raw_client.hpp) or of librig in a process of its own.
 *
 * No rule ID: the limits are the design's (DESIGN.md "The per-host
 * service") and rigd(8)'s.  Each attack test asserts that rigd refuses what
 * passes a limit with RIG_ENOMEM, the limit's key and its numbers; that rigd
 * stays up; that a client connected before the attack gets its round trips
 * within round_trip_bound_ms (their median) while it lasts; and that rigd's
 * counts (ALLOCATED's, protocol.h), descriptors and memory return to what
 * they were once the attacker goes. */
#include "client_process.hpp"
#include "known_work.hpp"
#include "raw_client.hpp"
#include "rigd_process.hpp"
#include "rigd_watch.hpp"

#include <rig/rig.h>
#include <rig/service.h>

#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace watch;

namespace {

// A round trip of a connected client while rigd is under attack: generous,
// the host is loaded, but far below what a starved rigd takes.
constexpr double round_trip_bound_ms = 100;
// What a new client may take to be welcomed during an attack.
constexpr double welcome_bound_ms = 2000;

constexpr int64_t kib = 1024, mib = kib * kib, gib = mib * kib;
// rigd(8)'s defaults.
constexpr int64_t arena_limit = 16 * gib;
constexpr int64_t exports_limit = 4096, export_fds_limit = 256;

std::vector<std::string> served = {"--devices", "MEM:0"};

bool says(const std::string &why, const std::string &what) { return why.find(what) != std::string::npos; }

// A sealed memfd of bytes bytes, none of them touched.
int sparse_memfd(uint64_t bytes) {
  int fd = memfd_create("sparse-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  cr_assert(fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0, "a sparse memfd of %llu bytes",
            static_cast<unsigned long long>(bytes));
  cr_assert(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
  return fd;
}

// Request opcode on proxy with args, the payload a rig_proxy_code for
// rigd's reason: rigd's answer, its reason in *why.
rig_proxy_completion asked(raw::Client &client, uint16_t opcode, uint32_t proxy, std::array<uint64_t, 3> args,
                           std::string *why) {
  rig_proxy_entry e{};
  e.opcode = opcode;
  e.device = proxy;
  std::copy(args.begin(), args.end(), e.args);
  return client.with_code(e, {}, why);
}

// Export of the length bytes of handle on proxy.
rig_proxy_completion export_of(raw::Client &client, uint32_t proxy, uint64_t handle, uint64_t length,
                               std::string *why = nullptr) {
  return asked(client, RIG_PROXY_OP_EXPORT, proxy, {handle, 0, length}, why);
}

rig_proxy_completion import_of(raw::Client &client, uint32_t proxy, uint64_t token, std::string *why = nullptr) {
  return asked(client, RIG_PROXY_OP_IMPORT, proxy, {token, 0, 0}, why);
}

rig_proxy_completion map_peer_of(raw::Client &client, uint32_t proxy, uint64_t handle, std::string *why) {
  return asked(client, RIG_PROXY_OP_MAP_PEER, proxy, {handle, 0, 0}, why);
}

// An image load whose bytes are the first bytes of handle's memory.
rig_proxy_completion image_of_memory(raw::Client &client, uint32_t proxy, uint64_t handle, uint64_t bytes,
                                     std::string *why) {
  return asked(client, RIG_PROXY_OP_IMAGE_LOAD, proxy, {handle, bytes, 0}, why);
}

// A proxy of MEM:0 and a buffer of bytes on it: the buffer's handle.
uint64_t buffer_of(raw::Client &client, uint32_t *proxy, uint64_t bytes) {
  *proxy = static_cast<uint32_t>(client.open(0));
  rig_proxy_completion c = client.alloc(*proxy, bytes);
  cr_assert(c.status == raw::rig_ok, "alloc: %d", c.status);
  return c.value;
}

// How long a new client takes to be welcomed, in milliseconds.
double welcome_ms(const std::string &socket) {
  auto start = std::chrono::steady_clock::now();
  raw::Client newcomer(socket);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// What a test compares before and after an attack.
struct Baseline {
  long descriptors;
  std::vector<int64_t> counts;  // RIG_PROXY_COUNT_DEVICE_BYTES ... _HANDLES
  int64_t allocated;
};

Baseline baseline_of(const RigdProcess &rigd, raw::Client &steady) {
  Baseline b{descriptors_of(rigd.pid), {}, steady.allocated(0)};
  for (uint64_t what = RIG_PROXY_COUNT_DEVICE_BYTES; what <= RIG_PROXY_COUNT_HANDLES; ++what)
    b.counts.push_back(steady.count(what));
  return b;
}

// Asserts that rigd is up and that its counts, descriptors and allocated
// bytes return to before's, once the attackers went.
void returns_to(const Baseline &before, const RigdProcess &rigd, raw::Client &steady) {
  cr_assert(alive(rigd.pid), "rigd stays up");
  for (uint64_t what = RIG_PROXY_COUNT_DEVICE_BYTES; what <= RIG_PROXY_COUNT_HANDLES; ++what) {
    int64_t expected = before.counts[what - RIG_PROXY_COUNT_DEVICE_BYTES];
    long seen = settles_at(static_cast<long>(expected), [&] { return static_cast<long>(steady.count(what)); });
    cr_assert(seen == expected, "rigd's count %llu is %ld after the attack, %lld before",
              static_cast<unsigned long long>(what), seen, static_cast<long long>(expected));
  }
  long descriptors = settles_at(before.descriptors, [&] { return descriptors_of(rigd.pid); });
  cr_assert(descriptors == before.descriptors, "rigd holds %ld descriptors after the attack, %ld before",
            descriptors, before.descriptors);
  long allocated =
      settles_at(static_cast<long>(before.allocated), [&] { return static_cast<long>(steady.allocated(0)); });
  cr_assert(allocated == before.allocated, "rigd holds %ld bytes of MEM:0 after the attack, %lld before", allocated,
            static_cast<long long>(before.allocated));
}

// A rigd under attack: a client connected before it, and rigd's counts
// then.
struct Attacked {
  RigdProcess rigd;
  raw::Client steady;
  Baseline before;
  explicit Attacked(const std::string &config = "")
      : rigd(start_rigd_with_config(served, config)), steady(rigd.socket), before(baseline_of(rigd, steady)) {}
};

void responsive_during_attack(const RigdProcess &rigd, raw::Client &steady) {
  cr_assert(alive(rigd.pid), "rigd stays up");
  double round_trip = round_trip_ms(steady);
  cr_assert(round_trip < round_trip_bound_ms, "a round trip took %.1f ms during the attack", round_trip);
  double welcome = welcome_ms(rigd.socket);
  cr_assert(welcome < welcome_bound_ms, "a new client took %.0f ms to be welcomed during the attack", welcome);
}

}  // namespace

/* rigd(8), arena_bytes (address space): a client hands rigd sealed sparse
 * memfds as host arenas, 32 TiB halving down to 1 MiB.  rigd counts the
 * bytes it maps, not the memfd's size, and refuses each arena past the
 * client's limit (16 GiB by default) before it maps a byte of it, the 32 TiB
 * and 2 GiB ones included: rigd's address space grows by at most the
 * limit.  Before, rigd mapped each whole, 64 TiB outside any bound. */
Test(limits, sparse_arenas_past_the_clients_limit_are_refused_unmapped, .timeout = 60) {
  Attacked a;
  long address_space_kib = status_of(a.rigd.pid, "VmSize:");
  {
    raw::Client attacker(a.rigd.socket);
    int64_t mapped = 0;
    for (int shift = 45; shift >= 20; --shift) {
      int64_t bytes = int64_t{1} << shift;
      int fd = sparse_memfd(static_cast<uint64_t>(bytes));
      rig_proxy_arena_reply reply = attacker.share_arena(fd, static_cast<uint64_t>(bytes));
      close(fd);
      std::string why(reply.why, strnlen(reply.why, sizeof reply.why));
      if (bytes > arena_limit - mapped) {
        cr_assert(reply.status == raw::rig_enomem && says(why, "arena_bytes is 17179869184 bytes") &&
                      says(why, "holds " + std::to_string(mapped) + " bytes") &&
                      says(why, "asks " + std::to_string(bytes)),
                  "an arena of %lld bytes past the limit is refused with the numbers: %d \"%s\"",
                  static_cast<long long>(bytes), reply.status, why.c_str());
      } else {
        cr_assert(reply.status == raw::rig_ok, "an arena of %lld bytes within the limit: %d \"%s\"",
                  static_cast<long long>(bytes), reply.status, why.c_str());
        mapped += bytes;
      }
    }
    cr_assert(a.steady.count(RIG_PROXY_COUNT_ARENA_BYTES) == mapped, "rigd counts the bytes it maps");
    long grown_kib = status_of(a.rigd.pid, "VmSize:") - address_space_kib;
    cr_assert(grown_kib <= (arena_limit + gib) / kib, "rigd's address space grew by %ld KiB, past the limit",
              grown_kib);
    responsive_during_attack(a.rigd, a.steady);
  }
  returns_to(a.before, a.rigd, a.steady);
  long address_space_after = settles_at(address_space_kib, [&] { return status_of(a.rigd.pid, "VmSize:"); });
  // Within 1 GiB: threads rigd made meanwhile (its release workers) keep
  // their stacks and malloc's arenas of 64 MiB each; the 16 GiB the
  // client's arenas mapped must be gone.
  cr_assert(address_space_after <= address_space_kib + 1024 * 1024, "rigd's address space, %ld KiB, stays grown",
            address_space_after);
}

/* rigd(8), export_fds (descriptors): a client asks a descriptor for each of
 * 2,000 exports.  rigd makes 256 (the default limit) and refuses the rest
 * with the limit's numbers; its descriptors stay within the limit, new
 * clients are welcomed meanwhile, and the descriptors close as the client
 * goes.  Before, rigd held one memfd an export, 2,000. */
Test(limits, export_descriptors_past_the_limit_are_refused_and_close_as_the_client_goes, .timeout = 60) {
  Attacked a;
  {
    raw::Client attacker(a.rigd.socket);
    uint32_t proxy;
    uint64_t handle = buffer_of(attacker, &proxy, 4096);
    long attacker_descriptors = descriptors_of(a.rigd.pid) - a.before.descriptors;
    for (int i = 0; i < 2000; ++i) {
      rig_proxy_completion exported = export_of(attacker, proxy, handle, 4096);
      cr_assert(exported.status == raw::rig_ok, "export %d: %d", i, exported.status);
      int fd = -1;
      rig_proxy_fd_reply reply = attacker.ask_fd(RIG_PROXY_FD_OF_EXPORT, exported.value, -1, &fd);
      if (fd >= 0) close(fd);
      std::string why(reply.why, strnlen(reply.why, sizeof reply.why));
      if (i < export_fds_limit)
        cr_assert(reply.status == raw::rig_ok && fd >= 0, "descriptor %d within the limit: %d", i, reply.status);
      else
        cr_assert(reply.status == raw::rig_enomem && fd < 0 && says(why, "export_fds is 256") &&
                      says(why, "holds 256 and asks 1"),
                  "descriptor %d past the limit is refused with the numbers: %d \"%s\"", i, reply.status,
                  why.c_str());
    }
    long held = descriptors_of(a.rigd.pid) - a.before.descriptors - attacker_descriptors;
    cr_assert(held == export_fds_limit, "rigd holds %ld descriptors for the exports", held);
    cr_assert(a.steady.count(RIG_PROXY_COUNT_EXPORT_FDS) == export_fds_limit);
    responsive_during_attack(a.rigd, a.steady);
  }
  returns_to(a.before, a.rigd, a.steady);
}

/* rigd(8), exports (unbounded tables): one client exports a buffer again
 * and again, up to a million times.  rigd makes 4,096 (the default limit)
 * and refuses every one past it with the numbers; once the client goes its
 * exports, their table's memory included, go with it: rigd's resident
 * memory returns to within 64 MiB of before.  Before, a million exports
 * grew rigd by 215 MB, still held after the client left. */
Test(limits, a_clients_exports_are_bounded_and_go_with_it, .timeout = 90) {
  Attacked a;
  long resident_kib = status_of(a.rigd.pid, "VmRSS:");
  {
    raw::Client attacker(a.rigd.socket);
    uint32_t proxy;
    uint64_t handle = buffer_of(attacker, &proxy, 4096);
    int64_t made = 0, refused = 0;
    std::string why;
    for (int i = 0; i < 1000000 && refused < 1000; ++i) {
      rig_proxy_completion c = export_of(attacker, proxy, handle, 4096, &why);
      if (c.status == raw::rig_ok) {
        cr_assert(refused == 0, "no export succeeds once one is refused");
        ++made;
      } else {
        cr_assert(c.status == raw::rig_enomem && says(why, "exports is 4096: the client holds 4096 and asks 1"),
                  "an export past the limit is refused with the numbers: %d \"%s\"", c.status, why.c_str());
        ++refused;
      }
    }
    cr_assert(made == exports_limit, "rigd made %lld exports of one client", static_cast<long long>(made));
    cr_assert(a.steady.count(RIG_PROXY_COUNT_EXPORTS) == exports_limit);
    responsive_during_attack(a.rigd, a.steady);
  }
  returns_to(a.before, a.rigd, a.steady);
  // Generous: a sanitizer's shadow and allocator caches grow rigd by tens
  // of MiB; a million exports held grew it by 215 MB.
  long resident_after = status_of(a.rigd.pid, "VmRSS:");
  cr_assert(resident_after <= resident_kib + 64 * 1024, "rigd's resident memory, %ld KiB, stays grown (%ld before)",
            resident_after, resident_kib);
}

/* rigd(8), quota_bytes (unbounded tables): imports count in the importer's
 * quota.  Under a quota of 1 MiB, an importer imports 512 KiB from each of
 * 64 short-lived exporters: two imports fit, every later one is refused
 * with the quota's numbers, and once the exporters went rigd holds the
 * importer's 1 MiB alone.  Before, imports counted in no quota: the
 * importer held 32 MiB. */
Test(limits, imports_count_in_the_importers_quota, .timeout = 60) {
  Attacked a("quota_bytes = 1048576\n");
  {
    raw::Client importer(a.rigd.socket);
    auto proxy = static_cast<uint32_t>(importer.open(0));
    for (int i = 0; i < 64; ++i) {
      raw::Client exporter(a.rigd.socket);
      uint32_t exporter_proxy;
      uint64_t handle = buffer_of(exporter, &exporter_proxy, 512 * kib);
      rig_proxy_completion exported = export_of(exporter, exporter_proxy, handle, 512 * kib);
      cr_assert(exported.status == raw::rig_ok);
      std::string why;
      rig_proxy_completion imported = import_of(importer, proxy, exported.value, &why);
      if (i < 2)
        cr_assert(imported.status == raw::rig_ok, "import %d within the quota: %d", i, imported.status);
      else
        cr_assert(imported.status == raw::rig_enomem && says(why, "quota_bytes is 1048576 bytes") &&
                      says(why, "holds 1048576 bytes and asks 524288"),
                  "import %d past the quota is refused with the numbers: %d \"%s\"", i, imported.status,
                  why.c_str());
    }
    long held = settles_at(mib, [&] { return static_cast<long>(a.steady.count(RIG_PROXY_COUNT_DEVICE_BYTES)); });
    cr_assert(held == mib, "with the exporters gone, rigd counts %ld bytes of the importer's", held);
    responsive_during_attack(a.rigd, a.steady);
  }
  returns_to(a.before, a.rigd, a.steady);
}

/* rigd(8), exports_per_user: a user's clients share the user's limit.  With
 * exports = 64 and exports_per_user = 100, one client makes 64, then is
 * refused naming exports; a second of the same user makes 36, then is
 * refused naming exports_per_user; once the first goes the second makes
 * more, up to its own 64. */
Test(limits, a_users_clients_share_its_limits, .timeout = 60) {
  Attacked a("exports = 64\nexports_per_user = 100\n");
  auto first = std::make_unique<raw::Client>(a.rigd.socket);
  raw::Client second(a.rigd.socket);
  uint32_t first_proxy, second_proxy;
  uint64_t first_handle = buffer_of(*first, &first_proxy, 4096);
  uint64_t second_handle = buffer_of(second, &second_proxy, 4096);
  // Exports until rigd refuses one: how many it made, and its reason.
  auto exports_until_refused = [](raw::Client &client, uint32_t proxy, uint64_t handle, std::string *why) {
    int made = 0;
    while (made < 1000 && export_of(client, proxy, handle, 4096, why).status == raw::rig_ok) ++made;
    return made;
  };
  std::string why;
  cr_assert(exports_until_refused(*first, first_proxy, first_handle, &why) == 64);
  cr_assert(says(why, "exports is 64: the client holds 64 and asks 1"), "\"%s\"", why.c_str());
  cr_assert(exports_until_refused(second, second_proxy, second_handle, &why) == 36);
  cr_assert(says(why, "exports_per_user is 100: the user's clients hold 100 and the client asks 1"), "\"%s\"",
            why.c_str());
  first.reset();
  long counted = settles_at(36, [&] { return static_cast<long>(a.steady.count(RIG_PROXY_COUNT_EXPORTS)); });
  cr_assert(counted == 36, "rigd counts %ld exports once the first client went", counted);
  cr_assert(exports_until_refused(second, second_proxy, second_handle, &why) == 28, "up to the client's 64");
  cr_assert(says(why, "exports is 64"), "\"%s\"", why.c_str());
}

/* rigd(8), proxies: with proxies = 2, a client's third open answers
 * RIG_EOPEN; rigd counts the two, and none once the client goes. */
Test(limits, a_clients_proxies_are_bounded, .timeout = 60) {
  Attacked a("proxies = 2\n");
  {
    raw::Client client(a.rigd.socket);
    client.open(0);
    client.open(0);
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_OPEN;
    cr_assert(client.request(e).status == RIG_EOPEN, "a third proxy is refused");
    cr_assert(a.steady.count(RIG_PROXY_COUNT_PROXIES) == 2);
  }
  returns_to(a.before, a.rigd, a.steady);
}

/* rigd(8), LIMITS, through librig: a refusal of rigd's reaches the client
 * as RIG_ENOMEM, rig_last_error saying the limit's key and numbers.  Under
 * quota_bytes = 1 MiB a client imports 1 MiB another exported, then
 * rig_buffer_create of 4 KiB answers RIG_ENOMEM naming quota_bytes (the
 * client's own budget, which counts no import, had room); past exports = 2
 * rig_service_share answers it naming exports, past arena_bytes = 1 MiB
 * a Pinned buffer of 2 MiB naming arena_bytes, and past proxies = 1 an open
 * of a second proxy (CPU@rigd) answers RIG_EOPEN naming proxies. */
Test(limits, a_refusal_reaches_rig_last_error_with_the_limit_and_numbers, .timeout = 60) {
  RigdProcess rigd =
      start_rigd_with_config(served, "quota_bytes = 1048576\nexports = 2\narena_bytes = 1048576\nproxies = 1\n");
  raw::Client exporter(rigd.socket);
  uint32_t proxy;
  uint64_t handle = buffer_of(exporter, &proxy, mib);
  rig_proxy_completion exported = export_of(exporter, proxy, handle, mib);
  cr_assert(exported.status == raw::rig_ok);
  uint64_t token = exported.value;
  pid_t client = fork_client([&] {
    connect_service(rigd.socket);
    rig_device_t *d = open_device("MEM:0@rigd");
    rig_buffer_t *imported = nullptr;
    require(rig_service_import(d, token, &imported) == RIG_OK, "import: %s", rig_last_error());
    rig_buffer_t *b = nullptr;
    rig_status_t status = rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b);
    require(status == RIG_ENOMEM && std::strstr(rig_last_error(), "quota_bytes is 1048576 bytes: the client holds "
                                                                  "1048576 bytes and asks 4096 more"),
            "a create past the quota with imports: %s \"%s\"", rig_status_name(status), rig_last_error());
    rig_buffer_unref(imported);
    rig_buffer_t *small = create_buffer(d, 4096);
    uint64_t shared;
    for (int i = 0; i < 2; ++i) require(rig_service_share(small, &shared) == RIG_OK, "share: %s", rig_last_error());
    status = rig_service_share(small, &shared);
    require(status == RIG_ENOMEM && std::strstr(rig_last_error(), "exports is 2: the client holds 2 and asks 1"),
            "a share past exports: %s \"%s\"", rig_status_name(status), rig_last_error());
    status = rig_buffer_create(d, 2 * mib, RIG_MEMORY_PINNED, &b);
    require(status == RIG_ENOMEM && std::strstr(rig_last_error(), "arena_bytes is 1048576 bytes"),
            "a Pinned buffer past arena_bytes: %s \"%s\"", rig_status_name(status), rig_last_error());
    rig_device_t *second = nullptr;
    status = rig_open("CPU@rigd", nullptr, &second);
    require(status == RIG_EOPEN && std::strstr(rig_last_error(), "proxies is 1: the client holds 1 and asks 1"),
            "a proxy past proxies: %s \"%s\"", rig_status_name(status), rig_last_error());
    rig_buffer_unref(small);
    return 0;
  });
  cr_assert(ended_cleanly(await_client(client, client_end_s)), "the client's checks passed");
}

/* rigd(8), exports (the shared-buffer table): an export the limit refuses
 * takes no row of the table.  With exports = 2 and a table of 8 rows, a
 * client exports 20 buffers of its own: rigd makes 2 and refuses 18 naming
 * exports; another client then exports a buffer of its own.  Before, each
 * refused export kept a row while its buffer lived, and the second
 * client's export found the table full. */
Test(limits, a_refused_export_holds_no_row_of_the_shared_table, .timeout = 60) {
  Attacked a("exports = 2\nshared_rows = 8\n");
  {
    raw::Client attacker(a.rigd.socket);
    auto proxy = static_cast<uint32_t>(attacker.open(0));
    int made = 0;
    std::string why;
    for (int i = 0; i < 20; ++i) {
      rig_proxy_completion buffer = attacker.alloc(proxy, 4096);
      cr_assert(buffer.status == raw::rig_ok);
      made += export_of(attacker, proxy, buffer.value, 4096, &why).status == raw::rig_ok;
    }
    cr_assert(made == 2 && says(why, "exports is 2: the client holds 2 and asks 1"), "%d made, then \"%s\"", made,
              why.c_str());
    raw::Client other(a.rigd.socket);
    uint32_t other_proxy;
    uint64_t handle = buffer_of(other, &other_proxy, 4096);
    rig_proxy_completion exported = export_of(other, other_proxy, handle, 4096, &why);
    cr_assert(exported.status == raw::rig_ok, "another client's export: %d \"%s\"", exported.status, why.c_str());
  }
  returns_to(a.before, a.rigd, a.steady);
}

/* rigd(8), shared_rows: an export that finds every row of the table held
 * answers RIG_ENOMEM saying so, and the rows return as their exports go.
 * With a table of 4 rows a client exports 4 buffers, and its fifth export
 * is refused naming the table and its size; once the client goes, another
 * exports 4 buffers. */
Test(limits, a_full_shared_table_refuses_an_export_with_the_reason, .timeout = 60) {
  Attacked a("shared_rows = 4\n");
  auto exports_of_new_buffers = [](raw::Client &client, int count, std::string *why) {
    auto proxy = static_cast<uint32_t>(client.open(0));
    int made = 0;
    for (int i = 0; i < count; ++i) {
      rig_proxy_completion buffer = client.alloc(proxy, 4096);
      cr_assert(buffer.status == raw::rig_ok);
      made += export_of(client, proxy, buffer.value, 4096, why).status == raw::rig_ok;
    }
    return made;
  };
  std::string why;
  {
    raw::Client first(a.rigd.socket);
    cr_assert(exports_of_new_buffers(first, 5, &why) == 4);
    cr_assert(says(why, "shared-buffer table is full: its 4 rows (shared_rows)"), "\"%s\"", why.c_str());
  }
  returns_to(a.before, a.rigd, a.steady);
  raw::Client second(a.rigd.socket);
  cr_assert(exports_of_new_buffers(second, 4, &why) == 4, "the rows came back: \"%s\"", why.c_str());
}

/* rigd(8), handles: every entry of a client's table counts, a mapping too,
 * which costs no device memory.  With handles = 100 a client allocates a
 * buffer and maps it again and again: rigd makes 99 mappings and refuses
 * the rest naming handles with the numbers; it counts 100, and none once
 * the client goes.  Before, mappings were bounded by nothing, and a loop
 * of them grew rigd's table until the machine's memory ran out. */
Test(limits, a_clients_handles_are_bounded, .timeout = 60) {
  Attacked a("handles = 100\n");
  {
    raw::Client attacker(a.rigd.socket);
    uint32_t proxy;
    uint64_t handle = buffer_of(attacker, &proxy, 4096);
    int made = 0, refused = 0;
    std::string why;
    for (int i = 0; i < 1000; ++i) {
      rig_proxy_completion mapped = map_peer_of(attacker, proxy, handle, &why);
      if (mapped.status == raw::rig_ok) {
        cr_assert(refused == 0 && mapped.value != 0, "a mapping within the limit, none past it");
        ++made;
      } else {
        cr_assert(mapped.status == raw::rig_enomem && says(why, "handles is 100: the client holds 100 and asks 1"),
                  "a mapping past the limit is refused with the numbers: %d \"%s\"", mapped.status, why.c_str());
        ++refused;
      }
    }
    cr_assert(made == 99, "rigd made %d mappings besides the buffer", made);
    cr_assert(a.steady.count(RIG_PROXY_COUNT_HANDLES) == a.before.counts.back() + 100);
    responsive_during_attack(a.rigd, a.steady);
  }
  returns_to(a.before, a.rigd, a.steady);
}

/* rigd(8), image_bytes: an image is counted before rigd copies a byte of
 * it.  With image_bytes = 1 MiB a client asks rigd to load an image of the
 * first 256 MiB of a buffer of its: refused with RIG_ENOMEM naming
 * image_bytes with the numbers, and rigd's peak resident memory grows by
 * far less than the image.  Before, rigd copied the 256 MiB into its own
 * memory first (any size, from any client: a loop of them took rigd's
 * host out of memory) and counted it only once loaded. */
Test(limits, an_image_past_image_bytes_is_refused_before_rigd_copies_it, .timeout = 60) {
  Attacked a("image_bytes = 1048576\n");
  long peak_kib = status_of(a.rigd.pid, "VmHWM:");
  {
    raw::Client attacker(a.rigd.socket);
    uint32_t proxy;
    uint64_t handle = buffer_of(attacker, &proxy, 256 * mib);
    std::string why;
    rig_proxy_completion loaded = image_of_memory(attacker, proxy, handle, 256 * mib, &why);
    cr_assert(loaded.status == raw::rig_enomem &&
                  says(why, "image_bytes is 1048576 bytes: the client holds 0 bytes and asks 268435456"),
              "an image past the limit is refused with the numbers: %d \"%s\"", loaded.status, why.c_str());
    long grown_kib = status_of(a.rigd.pid, "VmHWM:") - peak_kib;
    cr_assert(grown_kib < 64 * 1024, "rigd's peak resident memory grew by %ld KiB", grown_kib);
  }
  returns_to(a.before, a.rigd, a.steady);
}
