/* Tests of rigd's requests, through the rings and the socket as a client
 * sends them (protocol.h): open, alloc, free, host arenas and hand-overs
 * whose copies the served device runs, peer mappings.
 *
 * Rules: PROXY-03 (rigd runs the work and the proxy's timeline word, in
 * the client's completion segment, advances as values are done; the
 * device segment shows the served device's timeline), PROXY-10
 * (a proxy's values start after its word's: the first hand-over is value
 * 1), PROXY-39 (a hand-over's work follows the proxy's earlier values and
 * the values it waits for), PROXY-80/PROXY-83 (the word holds the last
 * value done and never decreases; a lost word moves no more), PROXY-69 (map_peer of memory maps the
 * object on the proxy's device as a new object, or answers none where the
 * device cannot).  Also the design's trust rules
 * (DESIGN.md "The per-host service"): a hand-over out of order, naming a
 * handle the client does not hold, bytes outside a buffer, or a payload
 * outside the arena, gets RIG_EINVAL and changes nothing; an arena not
 * sealed against shrinking is refused; an alloc past the client's quota
 * answers RIG_ENOMEM with the bytes; a client that goes with work in
 * flight leaves rigd serving others and ending cleanly; a user trying
 * tokens in turn finds no export. */
#include "raw_client.hpp"
#include "rigd_process.hpp"

#include <criterion/criterion.h>

#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

using namespace raw;

namespace {

// A rigd serving SIM:0 whose every part takes latency_us (rigd inherits
// the sim's knob), a client of it, a proxy of SIM:0 and a buffer of 4096
// bytes on it.
struct SlowSim {
  RigdProcess rigd;
  Client client;
  uint32_t sim;
  rig_proxy_completion buffer;

  explicit SlowSim(uint64_t latency_us)
      : rigd(start_with_latency(latency_us)),
        client(rigd.socket),
        sim(static_cast<uint32_t>(client.open(0))),
        buffer(client.alloc(sim, 4096)) {
    cr_assert(buffer.status == rig_ok);
  }

  static RigdProcess start_with_latency(uint64_t latency_us) {
    setenv("RIG_SIM", ("latency_us=" + std::to_string(latency_us)).c_str(), 1);
    RigdProcess started = start_rigd({"--devices", "SIM:0"});
    unsetenv("RIG_SIM");
    return started;
  }
};

}  // namespace

Test(rigd_requests, hand_overs_move_bytes_on_the_served_device, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "SIM:0,MEM:0"});
  Client client(rigd.socket);
  uint64_t sim = client.open(0);
  uint64_t mem = client.open(1);
  cr_assert(sim != mem);
  cr_assert(client.word(sim)->value == 0, "PROXY-10: the word starts at 0");

  rig_proxy_completion a = client.alloc(static_cast<uint32_t>(sim), 4096);
  cr_assert(a.status == rig_ok);
  std::byte *arena;
  uint64_t host = client.arena(&arena);
  cr_assert(host != 0);
  for (int i = 0; i < 4096; ++i) arena[i] = std::byte(i * 7);

  // Value 1 copies the arena into the sim's memory, value 2 back to the
  // arena's second page, after value 1 (PROXY-39).
  cr_assert(client.hand_over(sim, 1, {}, {copy(host, 0, a.value, 0, 4096)}).status == rig_ok);
  cr_assert(client.hand_over(sim, 2, {}, {copy(a.value, 0, host, 8192, 4096)}).status == rig_ok);
  client.wait_for(sim, 2);
  cr_assert(std::memcmp(arena, arena + 8192, 4096) == 0, "PROXY-03: the bytes went there and back");
  cr_assert(client.served_word(0) >= 1, "the device segment shows the sim's timeline moved");

  // The MEM proxy's value 1 waits for the sim's value 2, then copies.
  rig_proxy_wait after_sim{static_cast<uint32_t>(sim), 0, 2};
  cr_assert(client.hand_over(mem, 1, {after_sim}, {copy(host, 8192, host, 16384, 4096)}).status == rig_ok);
  client.wait_for(mem, 1);
  cr_assert(std::memcmp(arena, arena + 16384, 4096) == 0);
  cr_assert(client.word(sim)->value == 2, "PROXY-83: the word holds the last value");
}

/* protocol.h: a hand-over rigd cannot run is answered RIG_EINVAL and loses
 * its proxy, whose word is marked lost at the value it held; the client's
 * other proxies run on. */
Test(rigd_requests, bad_hand_overs_answer_einval_and_lose_their_proxy, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "SIM:0"});
  Client client(rigd.socket);
  uint64_t sim = client.open(0);
  rig_proxy_completion a = client.alloc(static_cast<uint32_t>(sim), 4096);
  std::byte *arena;
  uint64_t host = client.arena(&arena);
  auto lost_at_start = [&](uint64_t proxy) {
    const rig_proxy_word *w = client.word(proxy);
    return std::atomic_ref<uint32_t>(const_cast<uint32_t &>(w->lost)).load() != 0 &&
           std::atomic_ref<uint64_t>(const_cast<uint64_t &>(w->value)).load() == 0;
  };
  auto refused = [&](const char *what, auto hand_over) {
    uint64_t proxy = client.open(0);
    cr_assert(hand_over(proxy).status == rig_einval, "RIG_EINVAL for %s", what);
    cr_assert(lost_at_start(proxy), "the proxy is lost after %s", what);
    cr_assert(client.hand_over(proxy, 1, {}, {copy(host, 0, a.value, 0, 16)}).status == rig_einval,
              "no later hand-over of the proxy runs after %s", what);
  };
  refused("value 2 before value 1", [&](uint64_t p) { return client.hand_over(p, 2, {}, {}); });
  refused("no such handle", [&](uint64_t p) { return client.hand_over(p, 1, {}, {copy(999, 0, a.value, 0, 16)}); });
  refused("bytes past the arena's end",
          [&](uint64_t p) { return client.hand_over(p, 1, {}, {copy(host, arena_bytes - 8, a.value, 0, 16)}); });
  refused("a wait for a value never handed over",
          [&](uint64_t p) { return client.hand_over(p, 1, {{static_cast<uint32_t>(sim), 0, 5}}, {}); });
  refused("a payload outside the arena", [&](uint64_t p) {
    rig_proxy_entry outside{};
    outside.opcode = RIG_PROXY_OP_HANDOVER;
    outside.device = static_cast<uint32_t>(p);
    outside.args[0] = 1;
    outside.payload_offset = static_cast<uint32_t>(client.layout.payload_bytes - 4);
    outside.payload_bytes = 8;
    return client.request(outside);
  });
  cr_assert(client.hand_over(sim, 1, {}, {copy(host, 0, a.value, 0, 16)}).status == rig_ok,
            "the first proxy runs on");
  client.wait_for(sim, 1);
  rig_proxy_entry unknown_free{};
  unknown_free.opcode = RIG_PROXY_OP_FREE;
  unknown_free.args[0] = 12345;
  cr_assert(client.request(unknown_free).status == rig_einval);
  rig_proxy_entry free_a = unknown_free;
  free_a.args[0] = a.value;
  cr_assert(client.request(free_a).status == rig_ok);
  cr_assert(client.hand_over(sim, 2, {}, {copy(host, 0, a.value, 0, 16)}).status == rig_einval,
            "a freed handle names nothing");
}

/* protocol.h and PROXY-83: once rigd marks a proxy's word lost, the word
 * moves no more, even where a value handed over before the loss finishes
 * later: its completion does not raise the word (rigd keeps each word's
 * lost in its own memory and reads that, not the client's line). */
Test(rigd_requests, a_value_done_after_its_proxy_was_lost_raises_no_word, .timeout = 60) {
  SlowSim slow(300000);  // each sim part takes 300 ms
  Client &client = slow.client;
  const uint32_t sim = slow.sim;
  const rig_proxy_completion &a = slow.buffer;
  const rig_proxy_part fill = {RIG_PROXY_PART_FILL, 7, {0}, 0, a.value, 0, 4096, 1, 0, 4096};
  cr_assert(client.hand_over(sim, 1, {}, {fill}).status == rig_ok, "value 1 runs on the slow sim");
  const rig_proxy_part bad = {RIG_PROXY_PART_FILL, 7, {0}, 0, 999, 0, 16, 1, 0, 16};
  cr_assert(client.hand_over(sim, 2, {}, {bad}).status == rig_einval, "value 2 names no handle: the proxy is lost");
  const rig_proxy_word *w = client.word(sim);
  auto value = [&] { return std::atomic_ref<uint64_t>(const_cast<uint64_t &>(w->value)).load(); };
  cr_assert(std::atomic_ref<uint32_t>(const_cast<uint32_t &>(w->lost)).load() != 0);
  cr_assert(value() == 0, "value 1 was still running as the proxy was lost");
  // Value 1's fill ends within its 300 ms; a raise would show by then.
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  cr_assert(value() == 0, "the lost word moved to %llu when value 1 finished", (unsigned long long)value());
}

/* A client's values of one served device that are not done are at most
 * RIG_PROXY_VALUES_IN_FLIGHT (protocol.h): while its first value runs on a
 * slow device, rigd takes no more of its hand-overs than that from the
 * ring, however fast it hands over values that cost rigd nothing to run,
 * and the rest wait in the ring.  Once the device is done, every value is
 * raised, in order, and no hand-over was refused (PROXY-39, PROXY-80). */
Test(rigd_requests, hand_overs_past_the_values_in_flight_wait_in_the_ring, .timeout = 90) {
  SlowSim slow(4000000);  // the fill takes 4 s, far longer than the pushes
  Client &client = slow.client;
  const uint32_t sim = slow.sim;
  const rig_proxy_completion &a = slow.buffer;
  cr_assert(client.fill(sim, 1, a.value, 0, 16, 7).status == rig_ok, "value 1 runs on the slow sim");
  uint32_t next = 0, released_before = 0;
  client.submissions.look(next, released_before);
  cr_assert(released_before == next, "rigd took every entry before the empty values");

  // Values of no parts, all from the one payload at 0.
  const rig_proxy_handover none{0, 0};
  cr_assert(client.payload.copy_in(0, std::as_bytes(std::span(&none, 1))));
  const uint64_t wanted = 4 * uint64_t{RIG_PROXY_VALUES_IN_FLIGHT};
  uint64_t pushed = 0;
  uint32_t released = released_before;
  // Pushes until the ring is full and rigd has taken as many as fit beside
  // the slow value, or 20 s passed; then a while longer for any past them.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (pushed < wanted) {
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_HANDOVER;
    e.device = sim;
    e.args[0] = 2 + pushed;
    e.payload_bytes = sizeof none;
    e.tag = ++client.tag;
    if (client.submissions.push(e) == rig::proxy::RingStatus::ok) {
      pushed++;
      continue;
    }
    client.submissions.look(next, released);
    if (released - released_before >= RIG_PROXY_VALUES_IN_FLIGHT - 1 ||
        std::chrono::steady_clock::now() > deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  client.submissions.look(next, released);
  const rig_proxy_word *w = client.word(sim);
  auto value = [&] { return std::atomic_ref<uint64_t>(const_cast<uint64_t &>(w->value)).load(); };
  cr_assert(value() == 0, "the slow fill was still running as rigd's hand-overs were counted");
  const uint32_t taken = released - released_before;
  cr_assert(taken == RIG_PROXY_VALUES_IN_FLIGHT - 1,
            "rigd took %u of %llu hand-overs behind the slow value; %u fit beside it", taken,
            (unsigned long long)pushed, RIG_PROXY_VALUES_IN_FLIGHT - 1);
  cr_assert(pushed < wanted, "the ring filled up behind the waiting hand-over");

  // The fill ends: every value queued behind it is done, in order.
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (value() < 1 + pushed && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  cr_assert(value() == 1 + pushed, "the word shows %llu of %llu values", (unsigned long long)value(),
            (unsigned long long)(1 + pushed));
  cr_assert(std::atomic_ref<uint32_t>(const_cast<uint32_t &>(w->lost)).load() == 0);
  rig_proxy_entry nop{};
  nop.opcode = RIG_PROXY_OP_NOP;
  nop.args[0] = 5;
  rig_proxy_completion c = client.request(nop);
  cr_assert(c.status == rig_ok && c.value == 5, "no hand-over was answered: rigd refused none");
}

/* A FILL entry (protocol.h) is a hand-over of one fill carried in the
 * entry: rigd runs it on the served device as the proxy's next value
 * (PROXY-03, PROXY-39: a later value follows it), and refuses, losing the
 * proxy, one that names a payload, a handle the client does not hold,
 * bytes outside its buffer or none, or a value out of order; one whose
 * byte is past 255 is malformed, answered RIG_EINVAL and changes nothing
 * (the design's trust rules). */
Test(rigd_requests, fill_entries_set_bytes_as_their_proxys_value, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  Client client(rigd.socket);
  uint64_t mem = client.open(0);
  rig_proxy_completion a = client.alloc(static_cast<uint32_t>(mem), 4096);
  cr_assert(a.status == rig_ok);
  std::byte *arena;
  uint64_t host = client.arena(&arena);
  std::memset(arena, 0xee, 4096);
  cr_assert(client.fill(static_cast<uint32_t>(mem), 1, a.value, 16, 100, 0x5a).status == rig_ok);
  cr_assert(client.hand_over(mem, 2, {}, {copy(a.value, 0, host, 0, 4096)}).status == rig_ok);
  client.wait_for(mem, 2);
  for (int i = 0; i < 4096; ++i)
    cr_assert(arena[i] == std::byte(i >= 16 && i < 116 ? 0x5a : 0), "byte %d: the fill set its bytes alone", i);

  auto refused = [&](const char *what, auto fill) {
    auto proxy = static_cast<uint32_t>(client.open(0));
    cr_assert(fill(proxy).status == rig_einval, "RIG_EINVAL for %s", what);
    const rig_proxy_word *w = client.word(proxy);
    cr_assert(std::atomic_ref<uint32_t>(const_cast<uint32_t &>(w->lost)).load() != 0, "the proxy is lost after %s",
              what);
    cr_assert(client.fill(proxy, 1, a.value, 0, 16, 1).status == rig_einval,
              "no later hand-over of the proxy runs after %s", what);
  };
  refused("a fill naming a payload", [&](uint32_t p) {
    rig_proxy_entry e{};
    e.opcode = RIG_PROXY_OP_FILL;
    e.device = p;
    e.args[0] = 1;
    e.args[1] = a.value;
    e.args[3] = 16;
    e.payload_bytes = 8;
    return client.send_hand_over(e);
  });
  refused("no such handle", [&](uint32_t p) { return client.fill(p, 1, 999, 0, 16, 1); });
  refused("bytes past the buffer's end", [&](uint32_t p) { return client.fill(p, 1, a.value, 4000, 200, 1); });
  refused("no bytes", [&](uint32_t p) { return client.fill(p, 1, a.value, 0, 0, 1); });
  refused("value 2 before value 1", [&](uint32_t p) { return client.fill(p, 2, a.value, 0, 16, 1); });
  // An entry whose flags no request knows changes nothing, as any such.
  cr_assert(client.fill(static_cast<uint32_t>(mem), 3, a.value, 0, 16, 256).status == rig_einval,
            "RIG_EINVAL for a byte past 255");
  cr_assert(client.fill(static_cast<uint32_t>(mem), 3, a.value, 0, 16, 1).status == rig_ok, "the first proxy runs on");
  client.wait_for(mem, 3);
}

/* PROXY-41 (words run only on a proxy of the machine's host: rigd serves
 * its host as CPU, last, and refuses words on any other proxy), and rig's
 * order of a words part (its writes in order, after every earlier part,
 * and every later part after it).  The trust rules for words: a words part
 * whose writes do not follow it, a write outside its buffer or off a
 * multiple of 8, or a write outside a words part, is refused. */
Test(rigd_requests, words_run_on_the_machines_host_only, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  Client client(rigd.socket);
  uint32_t cpu_device = 1;
  uint64_t cpu = client.open(cpu_device);
  rig_proxy_completion a = client.alloc(static_cast<uint32_t>(cpu), 64);
  cr_assert(a.status == rig_ok);
  std::byte *arena;
  uint64_t host = client.arena(&arena);
  std::memset(arena, 0xee, 64);
  // Value 1 fills a, writes two words over the fill (the second write of
  // the 8 bytes at 8 wins), then copies a to the arena after the words.
  rig_proxy_part fill{RIG_PROXY_PART_FILL, 0x11, {0}, 0, a.value, 0, 64, 1, 0, 64};
  cr_assert(client
                .hand_over(cpu, 1, {},
                           {fill, words(3), word(a.value, 0, 0x0102030405060708), word(a.value, 8, 1),
                            word(a.value, 8, 2), copy(a.value, 0, host, 0, 64)})
                .status == rig_ok);
  client.wait_for(cpu, 1);
  uint64_t first, second;
  std::memcpy(&first, arena, 8);
  std::memcpy(&second, arena + 8, 8);
  cr_assert(first == 0x0102030405060708 && second == 2, "the words after the fill, in order: %#lx %#lx",
            static_cast<unsigned long>(first), static_cast<unsigned long>(second));
  cr_assert(arena[16] == std::byte{0x11} && arena[63] == std::byte{0x11}, "the fill ran first");

  auto refused = [&](const char *what, uint32_t device, const std::vector<rig_proxy_part> &parts) {
    uint64_t proxy = client.open(device);
    rig_proxy_completion b = client.alloc(static_cast<uint32_t>(proxy), 64);
    std::vector<rig_proxy_part> named = parts;
    for (rig_proxy_part &p : named)
      if (p.kind == RIG_PROXY_PART_WORD) p.dst = b.value;
    cr_assert(client.hand_over(proxy, 1, {}, named).status == rig_einval, "RIG_EINVAL for %s", what);
  };
  refused("words on a proxy of MEM:0 (PROXY-41)", 0, {words(1), word(0, 0, 1)});
  refused("a words part whose writes do not follow it", cpu_device, {words(2), word(0, 0, 1)});
  refused("a write off a multiple of 8", cpu_device, {words(1), word(0, 4, 1)});
  refused("a write past its buffer's end", cpu_device, {words(1), word(0, 64, 1)});
  refused("a write outside a words part", cpu_device, {word(0, 0, 1)});
  cr_assert(client.hand_over(cpu, 2, {}, {words(1), word(a.value, 0, 9), copy(a.value, 0, host, 0, 8)}).status ==
                rig_ok,
            "the host's first proxy runs on");
  client.wait_for(cpu, 2);
  std::memcpy(&first, arena, 8);
  cr_assert(first == 9);
}

namespace {

// The token of a new 4 KiB buffer that exporter allocates on a new proxy
// of served device 0 and exports whole.
uint64_t export_new_buffer(Client &exporter) {
  uint64_t proxy = exporter.open(0);
  rig_proxy_completion a = exporter.alloc(static_cast<uint32_t>(proxy), 4096);
  rig_proxy_entry e{};
  e.opcode = RIG_PROXY_OP_EXPORT;
  e.device = static_cast<uint32_t>(proxy);
  e.args[0] = a.value;
  e.args[2] = 4096;
  rig_proxy_completion exported = exporter.request(e);
  cr_assert(exported.status == rig_ok);
  return exported.value;
}

}  // namespace

/* protocol.h, exports as descriptors: rigd makes a descriptor only for an
 * export of the asking client's own, names the export's token to any client
 * that passes that descriptor back, and answers RIG_EINVAL for another
 * client's token, a descriptor it did not make, or an unknown op; the
 * session goes on after each. */
Test(rigd_requests, an_export_descriptor_names_the_export_to_its_holder_alone, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  Client exporter(rigd.socket), other(rigd.socket);
  uint64_t token = export_new_buffer(exporter);

  int fd = -1;
  cr_assert(other.ask_fd(RIG_PROXY_FD_OF_EXPORT, token, -1, &fd).status == rig_einval && fd < 0,
            "no descriptor for another client's export");
  cr_assert(exporter.ask_fd(RIG_PROXY_FD_OF_EXPORT, token + 1, -1, &fd).status == rig_einval && fd < 0,
            "no descriptor for a token that names no export");
  cr_assert(exporter.ask_fd(RIG_PROXY_FD_OF_EXPORT, token, -1, &fd).status == rig_ok && fd >= 0);
  int ignored = -1;
  rig_proxy_fd_reply named = other.ask_fd(RIG_PROXY_EXPORT_OF_FD, 0, fd, &ignored);
  cr_assert(named.status == rig_ok && named.token == token, "the holder of the descriptor learns the token");
  int own = memfd_create("not-an-export", MFD_CLOEXEC);
  cr_assert(other.ask_fd(RIG_PROXY_EXPORT_OF_FD, 0, own, &ignored).status == rig_einval,
            "a descriptor rigd did not make names nothing");
  cr_assert(other.ask_fd(3, 0, -1, &ignored).status == rig_einval, "an unknown op");
  close(own);
  close(fd);
  std::byte *arena;
  cr_assert(other.arena(&arena) != 0, "the session goes on");
}

/* exports.hpp, rigd(8): tries of tokens that name no export are bounded
 * for the connection first (16 at once), then for its user over all of its
 * clients (64 at once, then one a second), and every token answers RIG_EINVAL to a
 * client past either meanwhile, so that no client finds another's export
 * by trying tokens in turn, and one guessing client leaves its user's
 * others their imports; the tries come back with time. */
Test(rigd_requests, trying_tokens_in_turn_finds_no_export, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  Client exporter(rigd.socket), later(rigd.socket);
  uint64_t token = export_new_buffer(exporter);

  auto import = [&](Client &c, uint32_t on, uint64_t t) {
    rig_proxy_entry i{};
    i.opcode = RIG_PROXY_OP_IMPORT;
    i.device = on;
    i.args[0] = t;
    return c.request(i).status;
  };
  auto later_proxy = static_cast<uint32_t>(later.open(0));
  // rigd(8)'s bounds (exports.hpp's most_wrong_tokens_per_client and
  // most_wrong_tokens).
  constexpr uint64_t per_client = 16, per_user = 64;
  // Guessers that each spend their own tries, on tokens that differ from
  // the export's in their random bits alone, until the user has spent its.
  std::vector<std::unique_ptr<Client>> guessers;
  for (uint64_t k = 1; k <= per_user; k++) {
    if (k % per_client == 1) guessers.push_back(std::make_unique<Client>(rigd.socket));
    Client &guesser = *guessers.back();
    auto proxy = static_cast<uint32_t>(guesser.open(0));
    cr_assert(import(guesser, proxy, token ^ (k << RIG_PROXY_TOKEN_ROW_BITS)) == rig_einval,
              "wrong token %llu names nothing", static_cast<unsigned long long>(k));
    if (k != per_client) continue;
    cr_assert(import(guesser, proxy, token) == rig_einval, "past its own tries a client finds no export");
    cr_assert(import(later, later_proxy, token) == rig_ok,
              "another client of the user imports meanwhile: the guessing client is bounded first");
  }
  cr_assert(import(later, later_proxy, token) == rig_einval,
            "past the user's tries over its clients no client of the user finds an export");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  cr_assert(import(later, later_proxy, token) == rig_ok, "a second later the user may try again");
}

Test(rigd_requests, an_unsealed_arena_is_refused, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  Client client(rigd.socket);
  std::byte *arena;
  cr_assert(client.arena(&arena, false) == 0);
}

Test(rigd_requests, alloc_past_the_quota_answers_enomem, .timeout = 60) {
  RigdProcess rigd = start_rigd_with_config({"--devices", "MEM:0"}, "quota_bytes = 1048576\n");
  Client client(rigd.socket);
  uint32_t mem = static_cast<uint32_t>(client.open(0));
  cr_assert(client.alloc(mem, 1 << 19).status == rig_ok);
  rig_proxy_completion over = client.alloc(mem, 1 << 20);
  cr_assert(over.status == rig_enomem && over.detail == 1 << 20, "status %d, detail %lu", over.status,
            static_cast<unsigned long>(over.detail));
  cr_assert(client.alloc(mem, 1 << 19).status == rig_ok, "the quota's last bytes");
}

Test(rigd_requests, a_client_gone_with_work_in_flight_leaves_rigd_serving, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "SIM:0"});
  {
    Client gone(rigd.socket);
    uint32_t sim = static_cast<uint32_t>(gone.open(0));
    uint64_t a = gone.alloc(sim, 1 << 20).value;
    uint64_t b = gone.alloc(sim, 1 << 20).value;
    for (uint64_t v = 1; v <= 8; ++v)
      cr_assert(gone.hand_over(sim, v, {}, {copy(v % 2 ? a : b, 0, v % 2 ? b : a, 0, 1 << 20)}).status == rig_ok);
  }  // the socket closes with the copies queued
  Client next(rigd.socket);
  uint32_t sim = static_cast<uint32_t>(next.open(0));
  cr_assert(next.alloc(sim, 4096).status == rig_ok, "rigd serves the next client");
  int status = stop_rigd(rigd);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rigd ends cleanly once the gone client's work is done");
}

Test(rigd_requests, map_peer_maps_memory_where_the_device_reaches_it, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "SIM:0,SIM:1,MEM:0"});
  Client client(rigd.socket);
  uint32_t sim0 = static_cast<uint32_t>(client.open(0));
  uint32_t sim1 = static_cast<uint32_t>(client.open(1));
  uint32_t mem = static_cast<uint32_t>(client.open(2));
  uint64_t theirs = client.alloc(sim1, 4096).value;
  rig_proxy_entry e{};
  e.opcode = RIG_PROXY_OP_MAP_PEER;
  e.device = sim0;
  e.args[0] = theirs;
  rig_proxy_completion mapped = client.request(e);
  cr_assert(mapped.status == rig_ok && mapped.value != 0,
            "PROXY-69: a sim maps another sim's memory as a new object");
  e.device = mem;
  rig_proxy_completion unmapped = client.request(e);
  cr_assert(unmapped.status == rig_ok && unmapped.value == 0, "PROXY-69: None where the device cannot map it");
  e.args[0] = 4242;
  cr_assert(client.request(e).status == rig_einval, "no such handle");

  // SIM:0 writes through its mapping; SIM:1 reads its own memory after.
  std::byte *arena;
  uint64_t host = client.arena(&arena);
  for (int i = 0; i < 4096; ++i) arena[i] = std::byte(i * 13);
  cr_assert(client.hand_over(sim0, 1, {}, {copy(host, 0, mapped.value, 0, 4096)}).status == rig_ok);
  cr_assert(client.hand_over(sim1, 1, {{sim0, 0, 1}}, {copy(theirs, 0, host, 4096, 4096)}).status == rig_ok);
  client.wait_for(sim1, 1);
  cr_assert(std::memcmp(arena, arena + 4096, 4096) == 0, "the mapping is the same memory");
}
