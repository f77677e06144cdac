// The remote driver's internals (drivers/remote) against a scripted agent
// in this process (tests/net/test_machine_pair.hpp's listener): what a
// proxy states and sends, and how its link writes its word, where the C
// API cannot see or stall them.  Each test names the PROXY rules it
// asserts.
#include "remote_device.hpp"
#include "remote_link.hpp"
#include "test_machine_pair.hpp"

#include <criterion/criterion.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>

using namespace rig;
using namespace rig::net;
using namespace rig::net::test;
using rig::remote::RemoteDevice;
using rig::remote::RemoteLink;

namespace {

// A link to a scripted agent, and the agent's end of it.
struct Scripted {
  Agent agent;
  std::shared_ptr<RemoteLink> link;
  std::shared_ptr<AgentConnection> at;

  Scripted() {
    link = RemoteLink::connect([this](rig::net::ChannelHandlers handlers) {
      auto made = rig::net::ClientChannel::connect(agent.listener->address(), key("alpha", 'a'), client_options(),
                                                   std::move(handlers));
      if (!made) throw std::runtime_error(made.error().message);
      return std::move(made.value());
    });
    at = agent.take();
  }
  // The proxy of the agent's device id, its values after start.
  std::unique_ptr<RemoteDevice> proxy(uint32_t id, uint64_t start = 0) {
    return std::make_unique<RemoteDevice>(link, *link->account(id), start);
  }
  // The client's next message, of kind M.
  template <class M>
  M next() {
    ReceivedMessage r = next_of(*at);
    cr_assert(std::holds_alternative<M>(r.message), "the agent got a %s", wire::kind_name(r.message.index() + 1));
    held.push_back(std::move(r));
    return std::get<M>(held.back().message);
  }
  // Answers the client's next REQUEST with status and value; the request.
  wire::Request answer(int32_t status, uint64_t value = 0, uint64_t detail = 0) {
    wire::Request r = next<wire::Request>();
    cr_assert(at->send(wire::Answer{r.number, status, value, detail, status == RIG_OK ? "" : "refused"}).ok());
    return r;
  }
  void send(const wire::Message &m) { cr_assert(at->send(m).ok(), "%s", at->failure().c_str()); }
  std::deque<ReceivedMessage> held;  // what next() answered views into
};

// Waits up to kWait for d's word to read value.
bool reads(RemoteDevice &d, uint64_t value) {
  auto until = std::chrono::steady_clock::now() + kWait;
  while (d.signaled() != value && std::chrono::steady_clock::now() < until) d.sleep(d.signaled(), 50);
  return d.signaled() == value;
}

// d's word as a wait names it (rig's work.cpp).
const volatile uint64_t *word_of(const RemoteDevice &d) {
  return reinterpret_cast<const volatile uint64_t *>(d.facts().word);
}

rig_edge_location_t object(uint64_t id, uint64_t offset = 0) { return {nullptr, id, offset}; }
rig_edge_location_t host(void *p) { return {p, 0, 0}; }

rig_edge_part_t copy_part(rig_edge_location_t src, rig_edge_location_t dst, uint64_t width, uint64_t rows = 1,
                          uint64_t src_pitch = 0, uint64_t dst_pitch = 0) {
  rig_edge_part_t p{};
  p.kind = RIG_PART_COPY;
  p.queue = 1;
  p.u.copy = {src, dst, width, rows, src_pitch ? src_pitch : width, dst_pitch ? dst_pitch : width};
  return p;
}

rig_edge_work_t work(uint64_t value, const rig_edge_part_t *parts, uint32_t n, const rig_edge_wait_t *waits = nullptr,
                     uint32_t nwaits = 0) {
  return rig_edge_work_t{value, parts, n, waits, nwaits};
}

}  // namespace

TestSuite(remote_link, .timeout = 30);

Test(remote_link, the_facts_table) {
  Scripted s;
  auto d = s.proxy(1, 7);
  const Facts &f = d->facts();
  cr_expect_eq(f.arch, "sm_90", "PROXY-18");
  cr_expect_eq(f.budget, int64_t{80} << 30, "PROXY-19");
  cr_expect(f.queues == std::vector<std::string>({"COMPUTE:0", "COPY:0"}), "PROXY-20");
  cr_expect_eq(f.copy_engine, 1, "PROXY-21: COPY:0");
  cr_expect(f.own_word && f.word, "PROXY-22: completion is the host's, a word of the driver's own");
  cr_expect(!f.queue_waits, "PROXY-23: waits go by the hosts' words (queue_waits_on), none on other words");
  cr_expect(f.may_block, "PROXY-24");
  cr_expect(!f.hang_ms, "PROXY-25");
  cr_expect(!f.maps_host, "PROXY-26");
  cr_expect(!f.host_addresses, "PROXY-27");
  cr_expect(f.cache_bytes && *f.cache_bytes == 50 << 20, "PROXY-28");
  cr_expect_eq(f.word->load(), 7u, "PROXY-10: the word reads the value its values start after");
  // make is given its word by the link's enroll, which registers it.
  std::shared_ptr<remote::Timeline> t = s.link->timeline_of(word_of(*d));
  cr_assert_not_null(t, "PROXY-30: the word is one the link registered");
  cr_expect(f.word == &t->word && t->account == 1 && t->start == 7, "PROXY-30: the very word of this make");
  cr_expect(!f.bus, "PROXY-31");
}

// A proxy's word is no region rig frees (no word_region): the link
// forgets it as the stopped proxy goes, sending nothing, so that the
// agent's next message is another proxy's ALLOC (PROXY-62).
Test(remote_link, the_words_end_sends_nothing) {
  Scripted s;
  auto d = s.proxy(1), other = s.proxy(2);
  cr_expect_null(d->facts().word_region, "PROXY-62: no word region for rig to free");
  d->stop(std::nullopt, 0);
  d.reset();
  auto alloc = std::async(std::launch::async, [&] { return other->alloc(Memory::Device, 64); });
  ReceivedMessage first = next_of(*s.at);
  const auto *asked = std::get_if<wire::Request>(&first.message);
  cr_assert(asked && std::holds_alternative<wire::Alloc>(asked->op), "PROXY-62: the agent got a %s before the ALLOC",
            wire::kind_name(first.message.index() + 1));
  s.send(wire::Answer{asked->number, RIG_OK, 1, 0, ""});
  other->free(alloc.get());
}

// A proxy of the link waits in the hand-over, by the agent's numbering of
// its values (PROXY-10, PROXY-33, PROXY-45); copies name objects by id
// (PROXY-57, PROXY-63), PUT in place or packed (PROXY-51) and GET.
Test(remote_link, a_handover_carries_its_waits_and_parts) {
  Scripted s;
  auto a = s.proxy(1, 100), b = s.proxy(2, 40);
  auto alloc = std::async(std::launch::async, [&] { return a->alloc(Memory::Device, 4096); });
  wire::Request asked = s.answer(RIG_OK, 1);
  Region r = alloc.get();
  cr_assert_not_null(r);
  cr_expect(std::holds_alternative<wire::Alloc>(asked.op), "PROXY-58: alloc asks the agent");
  cr_expect_eq(asked.object, a->locate(r).handle, "PROXY-57, PROXY-63: the region is the object named");
  cr_expect_null(a->locate(r).address, "PROXY-63: no address");

  uint8_t rows[4][16];
  for (int i = 0; i < 4; i++) memset(rows[i], 'a' + i, sizeof rows[i]);
  uint8_t into[64] = {};
  rig_edge_part_t parts[] = {copy_part(host(rows), object(asked.object, 8), 8, 4, 16, 8),
                             copy_part(object(asked.object), host(into), 64),
                             copy_part(object(asked.object), object(asked.object, 512), 32)};
  rig_edge_wait_t waits[] = {{reinterpret_cast<const volatile uint64_t *>(b->facts().word), 42}};
  // The PUT waits for b's word here first (PROXY-48): b hands its values
  // 41 and 42 over, and the agent reports them.
  rig_edge_part_t fill{};
  fill.kind = RIG_PART_FILL;
  fill.u.fill = {object(asked.object), 64, 0};
  b->submit(work(41, &fill, 1));
  b->submit(work(42, &fill, 1));
  (void)s.next<wire::Handover>();
  cr_expect(s.next<wire::Handover>().value == 2u, "PROXY-10: b's value 42 is the agent's 2");
  s.send(wire::Report{2, 2});
  cr_assert_eq(a->room(work(101, parts, 1, waits, 1)), RIG_ROOM);
  a->submit(work(101, parts, 1, waits, 1));
  auto h = s.next<wire::Handover>();
  cr_expect_eq(h.device, 1u);
  cr_expect_eq(h.value, 1u, "PROXY-10: the proxy's value 101 is the agent's 1");
  cr_assert_eq(h.waits.size(), 1u, "PROXY-33: the wait goes to the agent");
  cr_expect(h.waits[0] == (wire::Wait{2, 2}), "PROXY-45: b's value 42 is the agent's 2");
  cr_assert_eq(h.parts.size(), 1u);
  const auto &put = std::get<wire::Put>(h.parts[0]);
  cr_expect(put.target == (wire::Place{asked.object, 8}));
  cr_expect_eq(put.data.size(), 32u, "PROXY-51: the rows apart, packed");
  for (int i = 0; i < 4; i++)
    cr_expect_eq(put.data.bytes[8 * i], 'a' + i, "PROXY-50: the source's bytes at the submit");

  cr_assert_eq(a->room(work(102, parts + 1, 2)), RIG_ROOM);
  a->submit(work(102, parts + 1, 2));
  h = s.next<wire::Handover>();
  cr_assert_eq(h.parts.size(), 2u, "PROXY-02: one hand-over for the value's work");
  cr_expect(std::get<wire::Get>(h.parts[0]) == (wire::Get{{asked.object, 0}, 64}));
  cr_expect(std::get<wire::Copy>(h.parts[1]) == (wire::Copy{{asked.object, 0}, {asked.object, 512}, 32}));
  uint8_t sent[64];
  memset(sent, 0x5e, sizeof sent);
  s.send(wire::Bytes{1, 2, 0, 0, {{sent, sizeof sent}}});
  s.send(wire::Report{1, 2});
  cr_assert(reads(*a, 102), "PROXY-03: the word follows the REPORT");
  cr_expect_eq(memcmp(into, sent, sizeof into), 0, "PROXY-37, PROXY-81: the bytes landed before the word moved");

  a->free(r);
  auto released = s.next<wire::Release>();
  cr_expect(released == (wire::Release{wire::Released::Object, asked.object}), "PROXY-61");
}

// stop with a GET's bytes still to land writes the last value only as they
// land (PROXY-97), waits for nothing (PROXY-98), ignores its fault
// (PROXY-99); from then on a REPORT writes nothing (PROXY-100).
Test(remote_link, stop_waits_for_the_bytes_in_flight) {
  Scripted s;
  auto d = s.proxy(1), other = s.proxy(2);
  uint8_t into[16] = {};
  rig_edge_part_t get = copy_part(object(5), host(into), 16);
  d->submit(work(1, &get, 1));
  d->submit(work(2, &get, 1));
  (void)s.next<wire::Handover>();
  (void)s.next<wire::Handover>();
  uint8_t half[8];
  memset(half, 1, sizeof half);
  s.send(wire::Bytes{1, 1, 0, 0, {{half, 8}}});
  d->stop(std::string("a fault it ignores"), 2);
  cr_expect_lt(d->signaled(), 2u, "PROXY-97, PROXY-98: stop returned with bytes to land, its last value unwritten");
  s.send(wire::Bytes{1, 1, 0, 8, {{half, 8}}});
  s.send(wire::Report{1, 1});
  cr_assert(reads(*d, 1), "the REPORT of value 1");
  s.send(wire::Bytes{1, 2, 0, 0, {{half, 8}}});
  s.send(wire::Bytes{1, 2, 0, 8, {{half, 8}}});
  cr_assert(reads(*d, 2), "PROXY-95, PROXY-97: the last value once the last bytes landed");
  rig_edge_part_t copy = copy_part(object(5), object(6), 16);
  other->submit(work(1, &copy, 1));
  (void)s.next<wire::Handover>();
  s.send(wire::Report{1, 2});
  s.send(wire::Report{1, 1});
  // The receiving side hears in order: once other's word moved, it heard both.
  s.send(wire::Report{2, 1});
  cr_assert(reads(*other, 1), "the REPORT after them");
  cr_expect_eq(d->signaled(), 2u, "PROXY-83, PROXY-100: a REPORT the word passed writes nothing");
}

Test(remote_link, stop_with_nothing_in_flight_writes_at_once) {
  Scripted s;
  auto d = s.proxy(1, 9), faulted = s.proxy(2, 9);
  d->stop(std::nullopt, 12);
  cr_expect_eq(d->signaled(), 12u, "PROXY-82, PROXY-95, PROXY-96");
  faulted->stop(std::string("a fault"), 12);
  cr_expect_eq(faulted->signaled(), d->signaled(), "PROXY-99: a stop with a fault writes as one without");
}

// The job's failure: the root cause is every fault's message (PROXY-89),
// the calls that ask the agent and sleep fault (PROXY-60, PROXY-88,
// PROXY-91), and the others behave as before (PROXY-93).
Test(remote_link, the_root_cause_is_every_faults_message) {
  Scripted s;
  auto d = s.proxy(1, 0);
  s.send(wire::Failure{"the device of the agent faulted"});
  auto lost = [&] {
    auto until = std::chrono::steady_clock::now() + kWait;
    while (!d->lost_outside_calls() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    return d->lost_outside_calls();
  };
  cr_assert(lost(), "PROXY-07: the proxy is lost with its link");
  cr_expect_eq(*d->lost_outside_calls(), "the device of the agent faulted", "PROXY-89");
  try {
    d->sleep(0, 1000);
    cr_expect_fail("PROXY-88: sleep returned");
  } catch (const Fault &f) {
    cr_expect_str_eq(f.what(), "the device of the agent faulted", "PROXY-88, PROXY-89");
  }
  try {
    d->alloc(Memory::Device, 64);
    cr_expect_fail("PROXY-60: alloc returned");
  } catch (const Fault &f) {
    cr_expect_str_eq(f.what(), "the device of the agent faulted", "PROXY-60, PROXY-91");
  }
  rig_edge_part_t fill{};
  fill.kind = RIG_PART_FILL;
  fill.u.fill = {object(3), 64, 0};
  cr_expect_eq(d->room(work(1, &fill, 1)), RIG_ROOM, "PROXY-93: room as before");
  try {
    d->submit(work(1, &fill, 1));
    cr_expect_fail("PROXY-53: submit returned");
  } catch (const Fault &f) {
    cr_expect_str_eq(f.what(), "the device of the agent faulted", "PROXY-53");
  }
}

// A REPORT past the last value handed over fails the job rather than
// raise the word past what rig submitted (PROXY-83's guard).
Test(remote_link, a_report_past_the_handed_over_fails_the_job) {
  Scripted s;
  auto d = s.proxy(1);
  s.send(wire::Report{1, 5});
  auto until = std::chrono::steady_clock::now() + kWait;
  while (!d->lost_outside_calls() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  cr_assert(d->lost_outside_calls());
  cr_expect(d->lost_outside_calls()->find("past the last handed over") != std::string::npos, "%s",
            d->lost_outside_calls()->c_str());
  cr_expect_eq(d->signaled(), 0u, "the word did not move");
}

// sleep returns at once where the word differs from seen (PROXY-86), and
// returns, not faults, once still_ms pass with the word at seen
// (PROXY-87).  A bound of 5 s, far from either time, tells returning
// from sleeping on.
Test(remote_link, sleep_returns_for_a_word_moved_or_still) {
  Scripted s;
  auto d = s.proxy(1, 4);
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
  };
  Clock::time_point start = Clock::now();
  d->sleep(3, 20000);
  long long slept = ms_since(start);
  cr_expect_lt(slept, 5000, "PROXY-86: the word differed from seen, yet sleep took %lld ms", slept);
  start = Clock::now();
  d->sleep(4, 300);
  slept = ms_since(start);
  cr_expect(slept >= 300 && slept < 5000, "PROXY-87: the word at seen, sleep took %lld ms of 300", slept);
}

// Making a proxy sends nothing (PROXY-09), nor does its commit (PROXY-56):
// the agent's first message is the ALLOC that follows both.  A PUT whose
// rows lie end to end goes in place, its bytes taken by the agent's end
// once submit returns (PROXY-47, PROXY-51, PROXY-52).
Test(remote_link, make_and_commit_send_nothing_and_a_put_goes_in_place) {
  Scripted s;
  auto d = s.proxy(1);
  d->commit(1);
  auto alloc = std::async(std::launch::async, [&] { return d->alloc(Memory::Device, 64); });
  wire::Request first = s.answer(RIG_OK, 1);
  cr_expect(std::holds_alternative<wire::Alloc>(first.op), "PROXY-09, PROXY-56: the first message is the ALLOC");
  Region r = alloc.get();
  std::vector<uint8_t> source(1 << 20, 0x61);
  rig_edge_part_t put = copy_part(host(source.data()), object(d->locate(r).handle), source.size());
  d->submit(work(1, &put, 1));
  std::fill(source.begin(), source.end(), 0x7a);
  auto h = s.next<wire::Handover>();
  const auto &data = std::get<wire::Put>(h.parts[0]).data;
  cr_assert_eq(data.size(), source.size());
  size_t changed = 0;
  for (uint8_t b : data.bytes) changed += b != 0x61;
  cr_expect_eq(changed, 0u, "PROXY-47, PROXY-50, PROXY-52: the HANDOVER was sent, its bytes, as submit returned");
  d->free(r);
}

// Two threads' hand-overs on two proxies of the link arrive whole, each
// after the other (PROXY-05, PROXY-46).
Test(remote_link, hand_overs_of_two_threads_never_interleave) {
  Scripted s;
  auto a = s.proxy(1), b = s.proxy(2);
  constexpr int kValues = 50;
  auto run = [&](RemoteDevice &d, uint8_t byte) {
    std::vector<uint8_t> source(64 << 10, byte);
    rig_edge_part_t put = copy_part(host(source.data()), object(1), source.size());
    for (int v = 1; v <= kValues; v++) d.submit(work(static_cast<uint64_t>(v), &put, 1));
  };
  std::thread first(run, std::ref(*a), uint8_t{1}), second(run, std::ref(*b), uint8_t{2});
  uint64_t next_value[3] = {0, 1, 1};
  for (int i = 0; i < 2 * kValues; i++) {
    auto h = s.next<wire::Handover>();
    cr_assert(h.device == 1 || h.device == 2);
    cr_expect_eq(h.value, next_value[h.device]++, "PROXY-46: device %u's values in order", h.device);
    const auto &data = std::get<wire::Put>(h.parts[0]).data;
    size_t foreign = 0;
    for (uint8_t byte : data.bytes) foreign += byte != h.device;
    cr_expect_eq(foreign, 0u, "PROXY-46: a hand-over of device %u holds another's bytes", h.device);
  }
  first.join();
  second.join();
}

// room answers RIG_NEVER for parts the agent cannot run: a copy between
// two places of this process's memory, a fill of it, and a launch whose
// ref is a function's entry, which the wire cannot carry (PROXY-40, as
// rigd's proxies extend it with fills and launches).
Test(remote_link, room_refuses_the_parts_the_agent_cannot_run) {
  Scripted s;
  auto d = s.proxy(1);
  uint8_t a[8], b[8];
  rig_edge_part_t host_to_host = copy_part(host(a), host(b), 8);
  cr_expect_eq(d->room(work(1, &host_to_host, 1)), RIG_NEVER, "PROXY-40: a copy the host makes");
  rig_edge_part_t fill{};
  fill.kind = RIG_PART_FILL;
  fill.u.fill = {host(a), 8, 0};
  cr_expect_eq(d->room(work(1, &fill, 1)), RIG_NEVER, "PROXY-40: a fill of host memory");
  rig_edge_ref_t entry_ref{};
  entry_ref.kind = RIG_REF_ENTRY;
  rig_edge_part_t launch{};
  launch.kind = RIG_PART_LAUNCH;
  launch.u.launch.groups[0] = launch.u.launch.groups[1] = launch.u.launch.groups[2] = 1;
  launch.u.launch.threads[0] = launch.u.launch.threads[1] = launch.u.launch.threads[2] = 1;
  launch.u.launch.refs = &entry_ref;
  launch.u.launch.ref_count = 1;
  launch.u.launch.param_bytes = 8;
  cr_expect_eq(d->room(work(1, &launch, 1)), RIG_NEVER, "PROXY-40: an entry ref");
}

// Once the job failed, free and unload send nothing (PROXY-92): the next
// message the agent gets is the CLOSE of the link's end.
Test(remote_link, free_after_the_failure_sends_nothing) {
  Scripted s;
  auto d = s.proxy(1);
  auto alloc = std::async(std::launch::async, [&] { return d->alloc(Memory::Device, 64); });
  (void)s.answer(RIG_OK, 1);
  Region r = alloc.get();
  // A REPORT of a value never handed over fails the job on this side,
  // while the connection still carries messages.
  s.send(wire::Report{1, 9});
  auto until = std::chrono::steady_clock::now() + kWait;
  while (!d->lost_outside_calls() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  cr_assert(d->lost_outside_calls());
  d->free(r);
  d.reset();
  auto closing = std::async(std::launch::async, [&] { s.link.reset(); });
  ReceivedMessage next = next_of(*s.at);
  cr_expect(std::holds_alternative<wire::Close>(next.message), "PROXY-92: after the failure the agent got a %s, not CLOSE",
            wire::kind_name(next.message.index() + 1));
  s.at->close();
  closing.get();
}

// A make of an account the link has a proxy of is refused (PROXY-13), and
// the refused make leaves nothing registered: once the first proxy goes
// (having handed nothing over), a make of the account succeeds and its
// word is the link's (PROXY-16).
Test(remote_link, a_refused_make_leaves_no_proxy_registered) {
  Scripted s;
  auto first = s.proxy(1, 5);
  try {
    s.proxy(1, 9);
    cr_expect_fail("PROXY-13: a second proxy of CUDA:0 on the link was made");
  } catch (const std::invalid_argument &e) {
    cr_expect(std::string(e.what()).find("a proxy of that device already") != std::string::npos, "PROXY-13: %s",
              e.what());
  }
  cr_expect_not_null(s.link->timeline_of(word_of(*first)), "the first proxy stays registered");
  first.reset();
  auto again = s.proxy(1, 9);
  cr_expect_not_null(s.link->timeline_of(word_of(*again)),
                     "PROXY-16: the make after the refused one succeeded and registered its word");
  cr_expect_eq(again->signaled(), 9u, "PROXY-16: the proxy's values start where its make said, not the refused one's");
}

namespace {

// Whether call raises Fault with the close's message.
template <class Call>
bool faults_closed(Call call) {
  try {
    call();
  } catch (const Fault &f) {
    return std::string(f.what()) == RemoteLink::closed_reason;
  }
  return false;
}

}  // namespace

// The job's close (RemoteLink::close, rig_machine_close's): CLOSE goes to
// the agent after what was sent before; a request waiting for its answer
// faults at once rather than wait for one the closing agent never sends;
// from then each call that asks the agent raises Fault "the job is
// closed" (PROXY-90, PROXY-94), as submit does, which rig answers as
// RIG_FAILED's loss (PROXY-54), and sleep likewise.
Test(remote_link, the_jobs_close_faults_every_call_that_asks_the_agent) {
  Scripted s;
  auto host = s.proxy(0), d = s.proxy(1);
  auto alloc = std::async(std::launch::async, [&] { return d->alloc(Memory::Device, 64); });
  (void)s.answer(RIG_OK, 1);
  Region r = alloc.get();
  static const uint8_t code[16] = {0x7f, 'E', 'L', 'F'};
  auto load = std::async(std::launch::async, [&] { return host->image(code, sizeof code); });
  (void)s.answer(RIG_OK, 1);
  auto loaded = load.get();
  cr_assert(std::holds_alternative<DriverDevice::Image>(loaded));
  DriverDevice::Image image = std::get<DriverDevice::Image>(loaded);

  auto unanswered = std::async(std::launch::async, [&] { return faults_closed([&] { d->alloc(Memory::Device, 64); }); });
  (void)s.next<wire::Request>();
  s.link->close();
  cr_expect(unanswered.get(), "PROXY-94: the request in flight faults with the close");
  (void)s.next<wire::Close>();
  s.at->close();

  cr_expect_eq(s.link->failure().value_or(""), RemoteLink::closed_reason, "PROXY-90: the job's reason");
  cr_expect(faults_closed([&] { d->alloc(Memory::Device, 64); }), "PROXY-94: alloc");
  cr_expect(faults_closed([&] { d->map_peer(*d, r); }), "PROXY-94: map_peer of memory");
  cr_expect(faults_closed([&] { host->image(code, sizeof code); }), "PROXY-94: image");
  cr_expect(faults_closed([&] { host->entry(image, "main"); }), "PROXY-94: entry");
  cr_expect(faults_closed([&] { d->sleep(0, 1000); }), "PROXY-90: sleep");
  rig_edge_part_t fill{};
  fill.kind = RIG_PART_FILL;
  fill.u.fill = {object(1), 64, 0};
  cr_expect(faults_closed([&] { d->submit(work(1, &fill, 1)); }), "PROXY-54: submit");
  cr_expect_eq(d->lost_outside_calls().value_or(""), RemoteLink::closed_reason, "PROXY-90: the proxy is lost with it");
  s.link->close();
  cr_expect_eq(s.link->failure().value_or(""), RemoteLink::closed_reason, "a second close changes nothing");
  d->free(r);
  host->unload(image);
}

// The word rig's state of the proxy holds (its facts' word, which rig
// inspects) is the timeline word of the link's, the one a REPORT raises
// (PROXY-84).
Test(remote_link, the_facts_hold_the_links_timeline_word) {
  Scripted s;
  auto d = s.proxy(2, 20);
  std::shared_ptr<remote::Timeline> t = s.link->timeline_of(word_of(*d));
  cr_assert_not_null(t, "PROXY-84: the facts' word is a timeline's of the link");
  cr_expect(d->facts().word == &t->word, "PROXY-84: the very word the link keeps");
  cr_expect_eq(t->account, 2u, "PROXY-84: the timeline of the proxy's account");
  rig_edge_part_t fill{};
  fill.kind = RIG_PART_FILL;
  fill.u.fill = {object(1), 64, 0};
  d->submit(work(21, &fill, 1));
  (void)s.next<wire::Handover>();
  s.send(wire::Report{2, 1});
  cr_expect(reads(*d, 21), "PROXY-84: the REPORT raised the word the facts hold: %lu", d->facts().word->load());
}
