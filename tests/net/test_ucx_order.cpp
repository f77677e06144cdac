// The UCX transport's order (net/ucx_endpoint.hpp): 10,000 messages of
// mixed sizes on one endpoint, eager ones and rendezvous ones of 1 MiB and
// 16 MiB, reach their handlers in the order of sending, each one's data
// landed (and verified byte by byte) before the next one's handler runs;
// from one sending thread, and from four at once (each thread's order kept,
// and messages then arrive while a rendezvous lands).  The transport's
// side of PROXY-46 (messages in order, never interleaved) and PROXY-81
// (a message's bytes land before what follows it is handled).
#include <criterion/criterion.h>

#include <array>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "test_ucx_pair.hpp"

using namespace rig::net;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kMessages = 10000;
constexpr uint16_t kPlaced = 1;    // data lands where the handler says
constexpr uint16_t kUnplaced = 2;  // data lands where the link says

size_t size_of(uint32_t index) {
  if (index % 1000 == 999) return size_t{16} << 20;
  if (index % 100 == 37) return size_t{1} << 20;
  return (index * 7919u) % 4097;  // 0 to 4 KiB
}

// Message index's bytes: the slice of one pattern at an offset of its own
// (memcpy and memcmp, fast under the sanitizers too).
const std::vector<std::byte> &pattern() {
  static const std::vector<std::byte> bytes = [] {
    std::vector<std::byte> made((size_t{16} << 20) + 256);
    for (size_t i = 0; i < made.size(); ++i) made[i] = std::byte((i * 7 + (i >> 12)) & 0xff);
    return made;
  }();
  return bytes;
}
const std::byte *bytes_of(uint32_t index) { return pattern().data() + index % 251; }

// A message's header: its sending thread and its index there.
struct Header {
  uint32_t thread;
  uint32_t index;
};

// The receiving side: checks each message as its handler runs.
struct Checker {
  std::array<std::atomic<uint32_t>, 4> next{};  // per sending thread
  std::atomic<uint32_t> received{0};
  std::atomic<uint32_t> errors{0};
  std::atomic<bool> placing{false};  // a placed message whose data lands
  std::string first_error;
  std::vector<std::byte> buffer = std::vector<std::byte>(size_t{16} << 20);
  std::mutex mutex;
  std::condition_variable changed;

  void error(std::string what) {
    if (errors.fetch_add(1) == 0) first_error = std::move(what);
  }
  static Header header_of(std::span<const std::byte> bytes) {
    Header header{UINT32_MAX, UINT32_MAX};
    if (bytes.size() == sizeof header) std::memcpy(&header, bytes.data(), sizeof header);
    return header;
  }
  static std::string name(Header header) {
    return "message " + std::to_string(header.index) + " of thread " + std::to_string(header.thread);
  }
  bool due(Header header) { return header.thread < next.size() && header.index == next[header.thread].load(); }
  void check(Header header, std::span<const std::byte> data) {
    if (!due(header)) error(name(header) + " came out of its order");
    if (data.size() != size_of(header.index)) error(name(header) + " has " + std::to_string(data.size()) + " bytes");
    if (data.size() == size_of(header.index) && std::memcmp(data.data(), bytes_of(header.index), data.size()) != 0)
      error(name(header) + "'s bytes differ");
    std::lock_guard lock(mutex);
    if (header.thread < next.size()) next[header.thread].store(header.index + 1);
    received.fetch_add(1);
    changed.notify_all();
  }
  UcxHandler placed() {
    UcxHandler handler;
    handler.place = [this](UcxEndpoint &, std::span<const std::byte> bytes, size_t length) {
      const Header header = header_of(bytes);
      // The one before has been delivered, data and all.
      if (placing.exchange(true)) error(name(header) + " placed while another landed");
      if (!due(header)) error(name(header) + " placed out of its order");
      return std::span<std::byte>(buffer).first(length);
    };
    handler.deliver = [this](const UcxMessage &message) {
      if (message.data.size() > 0 && message.data.data() != buffer.data()) error("placed data elsewhere");
      placing.store(false);
      check(header_of(message.header), message.data);
    };
    return handler;
  }
  UcxHandler unplaced() {
    UcxHandler handler;
    handler.deliver = [this](const UcxMessage &message) {
      if (placing.load()) error("a message delivered while a placed one landed");
      check(header_of(message.header), message.data);
    };
    return handler;
  }
  bool wait_all() {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 60s, [&] { return received.load() == kMessages || errors.load() > 0; });
  }
};

// Sends messages [0, count) of thread; empty, or the first failure.
std::string send_all(UcxEndpoint &endpoint, uint32_t thread, uint32_t count) {
  std::vector<std::byte> data;
  for (uint32_t index = 0; index < count; ++index) {
    data.resize(size_of(index));
    if (!data.empty()) std::memcpy(data.data(), bytes_of(index), data.size());
    const Header header{thread, index};
    UcxStatus sent = endpoint.send(index % 2 == 0 ? kPlaced : kUnplaced, std::as_bytes(std::span(&header, 1)), data);
    if (!sent.ok()) return "message " + std::to_string(index) + ": " + sent.message();
  }
  return "";
}

void run(uint32_t threads) {
  test::LinkPair pair;
  pair.create();
  Checker checker;
  pair.server->on_message(kPlaced, checker.placed());
  pair.server->on_message(kUnplaced, checker.unplaced());
  pair.connect();

  std::vector<std::string> results(threads);
  std::vector<std::thread> senders;
  for (uint32_t thread = 0; thread < threads; ++thread)
    senders.emplace_back([&, thread] { results[thread] = send_all(*pair.to_server, thread, kMessages / threads); });
  for (auto &sender : senders) sender.join();
  for (const std::string &result : results) cr_assert(result.empty(), "%s", result.c_str());
  cr_assert(checker.wait_all(), "%u of %u messages arrived", checker.received.load(), kMessages);
  cr_assert_eq(checker.errors.load(), 0, "%u errors, the first: %s", checker.errors.load(), checker.first_error.c_str());
  const UcxEndpointStats stats = pair.to_client->stats();
  cr_assert_eq(stats.delivered, kMessages);
  cr_log_info("%u sending threads; UCX's arrivals: %llu out of sending order, %llu while an earlier rendezvous landed",
              threads, static_cast<unsigned long long>(stats.out_of_order),
              static_cast<unsigned long long>(stats.behind_landing));
}

}  // namespace

Test(ucx_order, one_thread_mixed_sizes_in_order_and_landed) { run(1); }

Test(ucx_order, four_threads_mixed_sizes_in_order_and_landed) { run(4); }
