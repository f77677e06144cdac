// The UCX transport's registered memory and RMA (net/ucx_memory.hpp): the
// server registers 64 MiB and sends its key in a message; the client puts
// 64 MiB by pattern and gets them back, and a put or get outside the
// region is refused with its numbers, moving no byte.  The transport's
// side of PROXY-38 (a copy's bytes cross the link once, by RMA).
#include <criterion/criterion.h>

#include <cstring>
#include <vector>

#include "test_ucx_pair.hpp"
#include "ucx_memory.hpp"

using namespace rig::net;
using namespace std::chrono_literals;

namespace {

constexpr size_t kRegion = size_t{64} << 20;
constexpr uint16_t kKey = 3;

std::byte pattern(size_t offset, unsigned seed) { return std::byte((offset * 13 + seed + (offset >> 16)) & 0xff); }

// The client's side of a region the server sent the key of.
struct KeyInbox {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<UcxRegionKey> key;

  UcxHandler handler() {
    UcxHandler handler;
    handler.deliver = [this](const UcxMessage &message) {
      UcxRegionKey received;
      if (message.header.size() == 2 * sizeof(uint64_t)) {
        std::memcpy(&received.address, message.header.data(), sizeof(uint64_t));
        std::memcpy(&received.length, message.header.data() + sizeof(uint64_t), sizeof(uint64_t));
      }
      received.rkey.assign(message.data.begin(), message.data.end());
      std::lock_guard lock(mutex);
      key = std::move(received);
      changed.notify_all();
    };
    return handler;
  }
  std::optional<UcxRegionKey> wait() {
    std::unique_lock lock(mutex);
    changed.wait_for(lock, 10s, [&] { return key.has_value(); });
    return key;
  }
};

struct Fixture {
  KeyInbox inbox;  // first: its handler outlives the links
  test::LinkPair pair;
  std::vector<std::byte> memory = std::vector<std::byte>(kRegion);
  std::unique_ptr<UcxMemory> registered;
  std::unique_ptr<UcxRemoteRegion> region;

  void open() {
    pair.create();
    pair.client->on_message(kKey, inbox.handler());
    pair.connect();
    auto mapped = pair.server->map(memory.data(), memory.size());
    cr_assert(mapped.ok(), "%s", mapped.message().c_str());
    registered = std::move(mapped.value());
    const UcxRegionKey &key = registered->key();
    uint64_t header[2] = {key.address, key.length};
    UcxStatus sent = pair.to_client->send(kKey, std::as_bytes(std::span(header)), key.rkey);
    cr_assert(sent.ok(), "%s", sent.message().c_str());
    std::optional<UcxRegionKey> received = inbox.wait();
    cr_assert(received.has_value(), "the key came in 10 s");
    cr_assert_eq(received->length, kRegion);
    auto opened = pair.to_server->open_region(*received);
    cr_assert(opened.ok(), "%s", opened.message().c_str());
    region = std::move(opened.value());
  }
};

}  // namespace

Test(ucx_rma, put_and_get_64_mib_by_pattern) {
  Fixture fixture;
  fixture.open();
  std::vector<std::byte> source(kRegion);
  for (size_t i = 0; i < kRegion; ++i) source[i] = pattern(i, 1);
  UcxStatus put = fixture.region->put(0, source);
  cr_assert(put.ok(), "%s", put.message().c_str());
  // Remote completion: the bytes are in the server's memory when put returns.
  cr_assert(std::memcmp(fixture.memory.data(), source.data(), kRegion) == 0, "the put's bytes are in the region");

  for (size_t i = 0; i < kRegion; ++i) fixture.memory[i] = pattern(i, 2);
  std::vector<std::byte> read(kRegion);
  UcxStatus got = fixture.region->get(0, read);
  cr_assert(got.ok(), "%s", got.message().c_str());
  for (size_t i = 0; i < kRegion; ++i)
    if (read[i] != pattern(i, 2)) cr_assert_fail("the get differs at byte %zu", i);

  // A range inside, at an offset.
  std::vector<std::byte> middle(4096, std::byte{0x5a});
  put = fixture.region->put(kRegion / 2 + 3, middle);
  cr_assert(put.ok(), "%s", put.message().c_str());
  cr_assert(std::memcmp(fixture.memory.data() + kRegion / 2 + 3, middle.data(), middle.size()) == 0);
}

Test(ucx_rma, ranges_outside_the_region_are_refused_with_their_numbers) {
  Fixture fixture;
  fixture.open();
  std::fill(fixture.memory.begin(), fixture.memory.end(), std::byte{0x11});
  std::vector<std::byte> bytes(20, std::byte{0x77});
  UcxStatus put = fixture.region->put(kRegion - 10, bytes);
  cr_assert_not(put.ok(), "a put past the region's end");
  const std::string expected =
      "a put of 20 bytes at offset " + std::to_string(kRegion - 10) + " is outside the region of " +
      std::to_string(kRegion) + " bytes";
  cr_assert(put.message().find(expected) == 0, "%s", put.message().c_str());
  for (size_t i = kRegion - 10; i < kRegion; ++i)
    cr_assert_eq(fixture.memory[i], std::byte{0x11}, "the refused put wrote byte %zu", i);

  UcxStatus got = fixture.region->get(UINT64_MAX - 5, bytes);
  cr_assert_not(got.ok(), "an offset whose end wraps around");
  cr_assert(got.message().find("a get of 20 bytes at offset " + std::to_string(UINT64_MAX - 5)) == 0, "%s",
            got.message().c_str());
  got = fixture.region->get(kRegion + 1, std::span<std::byte>());
  cr_assert(got.message().find("a get of 0 bytes at offset " + std::to_string(kRegion + 1)) == 0, "%s",
            got.message().c_str());

  // The endpoint still works after the refusals.
  put = fixture.region->put(kRegion - 20, bytes);
  cr_assert(put.ok(), "%s", put.message().c_str());
  cr_assert_eq(fixture.memory[kRegion - 1], std::byte{0x77});
}
