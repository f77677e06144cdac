// libFuzzer target of two clients sharing one rigd, one of them hostile
// (DESIGN.md "The per-host service": rigd never crashes, hangs or corrupts
// another client for anything a client writes).  The hostile client runs
// the input's steps (rigd_steps.hpp: raw and built requests, arenas of its
// payload, allocs, frees, hand-overs, exports, imports), with host arenas
// of its own beside them, the innocent client's token among those it
// imports, and now and then it leaves and comes back as a new client.  The
// innocent one runs a fixed script, its steps among the hostile's where the
// input says: it opens MEM:0, allocates three buffers, fills the first,
// copies it into the second, shares the third and fills it.  Each of the
// innocent's answers is checked as it comes (protocol.h), the hostile's
// against its model; once the input is done, the innocent's private bytes
// are what its script wrote, whatever the hostile wrote into the shared
// buffer, and its proxy's word holds its last value (PROXY-80).
#include "arenas.hpp"
#include "exports.hpp"
#include "rigd_fuzz.hpp"
#include "rigd_steps.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace rigd_fuzz;

namespace {

constexpr int64_t buffer_bytes = 4096;
constexpr uint8_t first_byte = 0xa5, head_byte = 0x3c, shared_byte = 0x77;
// The copy's span: the first buffer's first half, into the second's middle.
constexpr int64_t copied_from = 0, copied_to = 1024, copied_bytes = 2048;

// The innocent client's script, a step at a time; each answer is checked.
class Innocent {
 public:
  explicit Innocent(rigd::Exports &exports) : client_(exports, 1) {}

  bool done() const noexcept { return next_ == steps; }
  // Runs the script's next step.
  void step();
  // The token of its shared buffer, once shared; and its length.
  std::optional<uint64_t> token() const { return token_; }
  // Checks its private buffers' bytes and its proxy's word, once every
  // step ran, and ends the client.
  void check();

 private:
  static constexpr int steps = 8;
  // Runs e; checks that rigd answers it RIG_OK (or, for a hand-over,
  // takes it) and answers the completion's value.
  uint64_t run(rig_proxy_entry e, bool hand_over = false);
  void hand_over(const std::vector<rig_proxy_part> &parts);
  std::vector<uint8_t> bytes_of(uint64_t handle);

  Client client_;
  int next_ = 0;
  uint64_t handed_ = 0;
  std::array<uint64_t, 3> buffers_{};  // first, second, shared
  std::optional<uint64_t> token_;
};

uint64_t Innocent::run(rig_proxy_entry e, bool hand_over) {
  rig_proxy_completion c;
  bool answered = client_.handle(e, c);
  RIGD_FUZZ_CHECK(answered != hand_over);
  if (hand_over) return 0;
  RIGD_FUZZ_CHECK(c.tag == e.tag && c.status == RIG_OK && c.flags == 0);
  return c.value;
}

void Innocent::hand_over(const std::vector<rig_proxy_part> &parts) {
  rig_proxy_handover header{0, static_cast<uint32_t>(parts.size())};
  std::vector<std::byte> payload(sizeof header);
  std::memcpy(payload.data(), &header, sizeof header);
  auto p = std::as_bytes(std::span(parts));
  payload.insert(payload.end(), p.begin(), p.end());
  client_.arena().copy_in(0, payload);
  rig_proxy_entry e{};
  e.opcode = RIG_PROXY_OP_HANDOVER;
  e.args[0] = ++handed_;
  e.payload_bytes = static_cast<uint32_t>(payload.size());
  run(e, true);
}

rig_proxy_part fill(uint64_t handle, int64_t offset, int64_t bytes, uint8_t value) {
  rig_proxy_part p{};
  p.kind = RIG_PROXY_PART_FILL;
  p.dst = handle;
  p.dst_offset = static_cast<uint64_t>(offset);
  p.width = p.dst_pitch = static_cast<uint64_t>(bytes);
  p.rows = 1;
  p.value = value;
  return p;
}

void Innocent::step() {
  rig_proxy_entry e{};
  switch (next_++) {
    case 0:
      e.opcode = RIG_PROXY_OP_OPEN;
      RIGD_FUZZ_CHECK(run(e) == 0);  // its first proxy
      break;
    case 1:
    case 2:
    case 3:
      e.opcode = RIG_PROXY_OP_ALLOC;
      e.args[0] = RIG_MEMORY_DEVICE;
      e.args[1] = buffer_bytes;
      buffers_[static_cast<size_t>(next_ - 2)] = run(e);
      RIGD_FUZZ_CHECK(buffers_[static_cast<size_t>(next_ - 2)] != 0);
      break;
    case 4:
      hand_over({fill(buffers_[0], 0, buffer_bytes, first_byte)});
      break;
    case 5: {
      rig_proxy_part copy{};
      copy.kind = RIG_PROXY_PART_COPY;
      copy.src = buffers_[0];
      copy.src_offset = copied_from;
      copy.dst = buffers_[1];
      copy.dst_offset = copied_to;
      copy.width = copy.src_pitch = copy.dst_pitch = copied_bytes;
      copy.rows = 1;
      hand_over({fill(buffers_[1], 0, copied_to, head_byte), copy});
      break;
    }
    case 6:
      e.opcode = RIG_PROXY_OP_EXPORT;
      e.args[0] = buffers_[2];
      e.args[2] = buffer_bytes;
      token_ = run(e);
      RIGD_FUZZ_CHECK(*token_ != 0);
      break;
    case 7:
      hand_over({fill(buffers_[2], 0, buffer_bytes, shared_byte)});
      break;
  }
}

std::vector<uint8_t> Innocent::bytes_of(uint64_t handle) {
  rig_buffer_t *b = client_.objects().get(handle);
  RIGD_FUZZ_CHECK(b != nullptr);
  std::vector<uint8_t> bytes(buffer_bytes);
  RIGD_FUZZ_CHECK(rig_buffer_blit_to_bytes(b, 0, bytes.data(), buffer_bytes, 0, buffer_bytes) == RIG_OK);
  rig_buffer_unref(b);
  return bytes;
}

void Innocent::check() {
  std::vector<uint8_t> first = bytes_of(buffers_[0]), second = bytes_of(buffers_[1]);
  for (int64_t i = 0; i < buffer_bytes; ++i) {
    auto at = static_cast<size_t>(i);
    RIGD_FUZZ_CHECK(first[at] == first_byte);
    // The second: the head's fill, the copy, and the zeroes of a new buffer.
    uint8_t expected = i < copied_to ? head_byte : i < copied_to + copied_bytes ? first_byte : 0;
    RIGD_FUZZ_CHECK(second[at] == expected);
  }
  rig_proxy_word w;
  std::memcpy(&w, client_.end(), sizeof w);
  RIGD_FUZZ_CHECK(w.lost == 0 && w.value == handed_);
}

// The hostile client: the input's steps, host arenas of its own, and
// imports of the innocent's token.
class Hostile {
 public:
  Hostile(rigd::Exports &exports, uint64_t number, FuzzedDataProvider &input)
      : client_(std::make_unique<Client>(exports, number)), steps_(input, model_, client_->arena()), in_(input) {}

  // The innocent's token, length bytes, is one the hostile knows of.
  void knows(uint64_t token, uint64_t length) { model_.tokens[token] = length; }
  // Runs one step of the input's.
  void step();
  // Ends the client, its values done, and checks its words.
  void leave() { model_.check_words(client_->end()); }

 private:
  // Maps a sealed memfd of the input's size as a host arena, as a
  // session's socket request does.
  void add_arena();

  Model model_;
  std::unique_ptr<Client> client_;
  Steps steps_;
  FuzzedDataProvider &in_;
};

void Hostile::add_arena() {
  auto bytes = in_.ConsumeIntegralInRange<uint64_t>(1, 1 << 16);
  int fd = memfd_create("fuzz-hostile-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  RIGD_FUZZ_CHECK(fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0);
  if (in_.ConsumeBool()) fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
  rig_buffer_t *arena = nullptr;
  std::string why;
  if (rigd::map_arena(fd, bytes + in_.ConsumeIntegralInRange<uint64_t>(0, 1), &arena, &why) == RIG_OK)
    model_.held[client_->objects().add(arena, 0)] = 0;
  close(fd);
}

void Hostile::step() {
  if (in_.ConsumeIntegralInRange<int>(0, 15) == 0) return add_arena();
  rig_proxy_entry e;
  if (!steps_.next(e)) return;
  rig_proxy_completion answer;
  bool answered = client_->handle(e, answer);
  model_.observe(e, answered, answer);
}

// One input's clients, which end with it.
void run(FuzzedDataProvider &input) {
  rigd::Exports exports(served());
  Innocent innocent(exports);
  uint64_t hostile_number = 2;
  auto hostile = std::make_unique<Hostile>(exports, hostile_number, input);
  auto tell_token = [&] {
    if (innocent.token()) hostile->knows(*innocent.token(), buffer_bytes);
  };
  while (input.remaining_bytes() > 0) {
    switch (input.ConsumeIntegralInRange<int>(0, 31)) {
      case 0:
        if (!innocent.done()) innocent.step();
        tell_token();
        break;
      case 1:
        // The hostile client leaves, its imports with it, and comes back.
        hostile->leave();
        hostile = std::make_unique<Hostile>(exports, ++hostile_number, input);
        tell_token();
        break;
      default:
        hostile->step();
        break;
    }
  }
  while (!innocent.done()) innocent.step();
  hostile->leave();
  hostile.reset();
  innocent.check();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider input(data, size);
  run(input);
  settle();
  return 0;
}
