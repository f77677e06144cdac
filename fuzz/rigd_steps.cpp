// The model and steps of the rigd fuzz targets (rigd_steps.hpp).
#include "rigd_steps.hpp"

#include "rigd_fuzz.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>
#include <string>

namespace rigd_fuzz {

Client::Client(rigd::Exports &exports, uint64_t number) : exports_(exports), number_(number) {
  counters_.emplace(number_, getpid(), getuid(), "fuzz", served().size());
  completions_.emplace(words_, proxy_limit, &sleepers_, served(), *counters_, "client " + std::to_string(number_));
  requests_.emplace(served(), exports_, number_, getuid(), objects_, *completions_, arena_, proxy_limit, policy_,
                    *counters_);
}

Client::~Client() {
  end();
  exports_.remove_owner(number_);
}

bool Client::handle(rig_proxy_entry &e, rig_proxy_completion &answer) {
  if (e.tag == 0) e.tag = ++tag_;
  bool answered = requests_->handle(e, answer);
  // An allocation that waits for room (Requests::waiting) is answered as
  // the poller answers it.
  while (!answered && requests_->waiting()) answered = requests_->finish_waiting(std::chrono::milliseconds(10), answer);
  return answered;
}

const std::byte *Client::end() {
  requests_.reset();
  completions_.reset();
  return words_;
}

void Model::observe(const rig_proxy_entry &e, bool answered, const rig_proxy_completion &c) {
  bool on_proxy = e.device < proxies.size();
  bool hand_over = e.opcode == RIG_PROXY_OP_HANDOVER || e.opcode == RIG_PROXY_OP_FILL;
  // Only a hand-over rigd takes goes unanswered: the proxy's next value.
  if (!answered) {
    bool flags_known = e.opcode == RIG_PROXY_OP_FILL ? e.flags <= UINT8_MAX : e.flags == 0;
    RIGD_FUZZ_CHECK(hand_over && flags_known && e.reserved == 0 && on_proxy &&
                    proxies[e.device].failed == 0 && e.args[0] == proxies[e.device].handed + 1);
    proxies[e.device].handed = e.args[0];
    return;
  }
  RIGD_FUZZ_CHECK(c.tag == e.tag && (c.flags == 0 || (e.opcode == RIG_PROXY_OP_IMAGE_ENTRY && c.status == RIG_OK &&
                                                       c.flags == RIG_PROXY_ENTRY_ADDRESS)));
  RIGD_FUZZ_CHECK(c.status == RIG_OK || c.status == RIG_EINVAL || c.status == RIG_ENOMEM || c.status == RIG_EOPEN ||
                  c.status == RIG_ELOST || (c.status == RIG_EIMAGE && e.opcode == RIG_PROXY_OP_IMAGE_LOAD));
  // An image request on a proxy with room for why in its payload says why
  // it refuses.
  bool code_request = e.opcode >= RIG_PROXY_OP_IMAGE_LOAD && e.opcode <= RIG_PROXY_OP_IMAGE_ENTRY;
  // A failed request answers no value; detail is zero but for an ENOMEM's
  // bytes and an import's length.
  if (c.status != RIG_OK) RIGD_FUZZ_CHECK(c.value == 0);
  // An image load past the quota answers its bytes: the payload's after
  // its rig_proxy_code, or those of the memory it names.
  uint64_t image_bytes = e.args[0] ? e.args[1] : e.payload_bytes - std::min<uint64_t>(e.payload_bytes, sizeof(rig_proxy_code));
  if (c.detail != 0)
    RIGD_FUZZ_CHECK((c.status == RIG_ENOMEM && e.opcode == RIG_PROXY_OP_ALLOC && c.detail == e.args[1]) ||
                    (c.status == RIG_ENOMEM && e.opcode == RIG_PROXY_OP_IMAGE_LOAD && c.detail == image_bytes) ||
                    (c.status == RIG_ENOMEM && e.opcode == RIG_PROXY_OP_IMPORT) ||
                    (c.status == RIG_OK && e.opcode == RIG_PROXY_OP_IMPORT) ||
                    (c.status == RIG_OK && e.opcode == RIG_PROXY_OP_IMAGE_ENTRY) ||
                    (c.status == RIG_OK && e.opcode == RIG_PROXY_OP_LOADED));
  if (code_request && on_proxy && e.payload_bytes < sizeof(rig_proxy_code)) RIGD_FUZZ_CHECK(c.status == RIG_EINVAL);
  // An OPEN's payload may start with a rig_proxy_code (RIG_PROXY_OPEN_WHY).
  bool open_why = e.opcode == RIG_PROXY_OP_OPEN && e.flags == RIG_PROXY_OPEN_WHY;
  uint64_t code_bytes = open_why ? sizeof(rig_proxy_code) : 0;
  uint64_t config_bytes = e.payload_bytes >= code_bytes ? e.payload_bytes - code_bytes : 0;
  bool fill_byte = e.opcode == RIG_PROXY_OP_FILL && e.flags <= UINT8_MAX;
  if ((e.flags != 0 && !open_why && !fill_byte) || e.reserved != 0 || e.opcode > RIG_PROXY_OP_FILL) {
    RIGD_FUZZ_CHECK(c.status == RIG_EINVAL);
    return;
  }
  // An open at the limit answers RIG_EOPEN.  So may an open whose
  // configuration (its payload) the driver refuses, or that differs from
  // the configuration of the client's instance of the device; no other.
  bool opening = e.opcode == RIG_PROXY_OP_OPEN && e.device < served().size();
  if (opening && proxies.size() == proxy_limit)
    RIGD_FUZZ_CHECK(c.status == RIG_EOPEN);
  else if (!opening || (config_bytes == 0 && !configured.count(e.device)))
    RIGD_FUZZ_CHECK(c.status != RIG_EOPEN);
  if (hand_over) RIGD_FUZZ_CHECK(c.status != RIG_OK);
  // A failed proxy runs no more hand-overs.
  if (hand_over && on_proxy && proxies[e.device].failed != 0)
    RIGD_FUZZ_CHECK(c.status == RIG_EINVAL);
  if (c.status != RIG_OK) {
    // A hand-over rigd cannot run loses its proxy.  One that got past its
    // checks is the proxy's value, even though its work failed to start;
    // with RIG_EINVAL the proxy's values stop before it.
    if (hand_over && on_proxy) {
      Proxy &p = proxies[e.device];
      if (c.status != RIG_EINVAL) p.handed = e.args[0];
      if (p.failed == 0) p.failed = c.status == RIG_EINVAL ? p.handed + 1 : p.handed;
    }
    if (e.opcode == RIG_PROXY_OP_FREE) RIGD_FUZZ_CHECK(!held.count(e.args[0]));
    return;
  }
  // rigd's handles are new and never 0.
  auto take_handle = [&](uint64_t handle, int64_t counted_bytes) {
    RIGD_FUZZ_CHECK(handle != 0 && !held.count(handle));
    held[handle] = counted_bytes;
    counted += counted_bytes;
    RIGD_FUZZ_CHECK(counted <= quota_bytes);
  };
  switch (e.opcode) {
    case RIG_PROXY_OP_NOP:
      RIGD_FUZZ_CHECK(c.value == e.args[0]);
      break;
    case RIG_PROXY_OP_OPEN:
      RIGD_FUZZ_CHECK(e.device < served().size() && c.value == proxies.size());
      proxies.push_back({e.args[0]});
      if (config_bytes != 0) configured.insert(e.device);
      break;
    case RIG_PROXY_OP_ALLOC:
      RIGD_FUZZ_CHECK(on_proxy);
      take_handle(c.value, static_cast<int64_t>(e.args[1]));
      break;
    case RIG_PROXY_OP_FREE:
      RIGD_FUZZ_CHECK(held.count(e.args[0]) == 1);
      counted -= held[e.args[0]];
      held.erase(e.args[0]);
      break;
    case RIG_PROXY_OP_MAP_PEER:
      RIGD_FUZZ_CHECK(on_proxy && held.count(e.args[0]) == 1);
      if (c.value != 0) take_handle(c.value, 0);
      break;
    case RIG_PROXY_OP_EXPORT:
      RIGD_FUZZ_CHECK(on_proxy && held.count(e.args[0]) == 1 && c.value != 0);
      tokens[c.value] = e.args[2];
      break;
    case RIG_PROXY_OP_IMPORT:
      RIGD_FUZZ_CHECK(on_proxy && tokens.count(e.args[0]) == 1 && c.detail == tokens[e.args[0]]);
      // An import counts in the importer's quota.
      take_handle(c.value, static_cast<int64_t>(c.detail));
      break;
    case RIG_PROXY_OP_ALLOCATED:
    case RIG_PROXY_OP_LOADED:
      RIGD_FUZZ_CHECK(e.device < served().size());
      break;
    case RIG_PROXY_OP_IMAGE_LOAD:
      RIGD_FUZZ_CHECK(on_proxy && c.value != 0 && !images.count(c.value));
      images.insert(c.value);
      break;
    case RIG_PROXY_OP_IMAGE_PREPARE:
    case RIG_PROXY_OP_IMAGE_ENTRY:
      RIGD_FUZZ_CHECK(on_proxy && images.count(e.args[0]) == 1);
      break;
    case RIG_PROXY_OP_IMAGE_UNLOAD:
      RIGD_FUZZ_CHECK(images.erase(e.args[0]) == 1);
      break;
  }
}

void Model::check_words(const std::byte *words) const {
  for (size_t i = 0; i < proxies.size(); ++i) {
    rig_proxy_word w;
    std::memcpy(&w, words + i * RIG_PROXY_WORD_BYTES, sizeof w);
    const Proxy &p = proxies[i];
    RIGD_FUZZ_CHECK(p.failed == 0 ? w.lost == 0 && w.value == p.handed : w.lost != 0 && w.value < p.failed);
  }
}

bool Steps::next(rig_proxy_entry &e) {
  e = {};
  switch (in_.ConsumeIntegralInRange<int>(0, 13)) {
    case 0: {
      auto raw = in_.ConsumeBytes<uint8_t>(sizeof e);
      if (!raw.empty()) std::memcpy(&e, raw.data(), raw.size());
      return true;
    }
    case 1: {
      uint64_t offset = in_.ConsumeIntegralInRange<uint64_t>(0, arena_bytes);
      auto bytes = in_.ConsumeBytes<std::byte>(in_.ConsumeIntegralInRange<size_t>(0, 128));
      arena_.copy_in(offset, bytes);
      return false;
    }
    case 2:
      e.opcode = RIG_PROXY_OP_OPEN;
      e.device = in_.ConsumeIntegralInRange<uint32_t>(0, static_cast<uint32_t>(served().size()));
      e.args[0] = in_.ConsumeBool() ? in_.ConsumeIntegralInRange<uint64_t>(0, 3) : in_.ConsumeIntegral<uint64_t>();
      // As librig opens: room for why rigd refuses, perhaps too little.
      if (in_.ConsumeBool()) {
        e.flags = RIG_PROXY_OPEN_WHY;
        e.payload_bytes = static_cast<uint32_t>(sizeof(rig_proxy_code)) - in_.ConsumeIntegralInRange<uint32_t>(0, 1);
        e.payload_offset = in_.ConsumeIntegralInRange<uint32_t>(0, static_cast<uint32_t>(arena_bytes - e.payload_bytes));
      }
      break;
    case 3:
      e.opcode = RIG_PROXY_OP_ALLOC;
      e.device = proxy();
      e.args[0] = in_.ConsumeIntegralInRange<uint64_t>(0, 3);
      e.args[1] = in_.ConsumeIntegralInRange<uint64_t>(0, quota_bytes / 2);
      break;
    case 4:
      e.opcode = RIG_PROXY_OP_FREE;
      e.args[0] = pick(model_.held);
      break;
    case 5:
      hand_over(e);
      break;
    case 6:
      e.opcode = RIG_PROXY_OP_MAP_PEER;
      e.device = proxy();
      e.args[0] = pick(model_.held);
      break;
    case 7:
      e.opcode = RIG_PROXY_OP_EXPORT;
      e.device = proxy();
      e.args[0] = pick(model_.held);
      e.args[1] = small();
      e.args[2] = small();
      break;
    case 8:
      e.opcode = RIG_PROXY_OP_IMPORT;
      e.device = proxy();
      e.args[0] = pick(model_.tokens);
      break;
    case 9:
      e.opcode = in_.ConsumeBool() ? RIG_PROXY_OP_ALLOCATED : RIG_PROXY_OP_LOADED;
      e.device = in_.ConsumeIntegralInRange<uint32_t>(0, static_cast<uint32_t>(served().size()));
      break;
    case 10:
      image_request(e);
      break;
    case 11:
      e.opcode = RIG_PROXY_OP_IMAGE_UNLOAD;
      e.args[0] = pick(model_.images);
      break;
    default:
      e.opcode = RIG_PROXY_OP_NOP;
      e.args[0] = in_.ConsumeIntegral<uint64_t>();
      break;
  }
  return true;
}

// An image load, prepare or entry on a proxy: its payload a rig_proxy_code
// (now and then cut short) then the input's bytes; a load names memory of
// the client's now and then instead.
void Steps::image_request(rig_proxy_entry &e) {
  e.opcode = static_cast<uint16_t>(in_.ConsumeIntegralInRange<int>(RIG_PROXY_OP_IMAGE_LOAD, RIG_PROXY_OP_IMAGE_ENTRY));
  e.device = proxy();
  if (e.opcode != RIG_PROXY_OP_IMAGE_LOAD) e.args[0] = pick(model_.images);
  std::vector<std::byte> payload(sizeof(rig_proxy_code) - (in_.ConsumeIntegralInRange<int>(0, 7) == 0 ? 1 : 0));
  if (e.opcode == RIG_PROXY_OP_IMAGE_LOAD && in_.ConsumeIntegralInRange<int>(0, 3) == 0) {
    e.args[0] = pick(model_.held);
    e.args[1] = small();
  } else {
    auto tail = in_.ConsumeBytes<std::byte>(in_.ConsumeIntegralInRange<size_t>(0, 256));
    payload.insert(payload.end(), tail.begin(), tail.end());
  }
  e.payload_offset = in_.ConsumeIntegralInRange<uint32_t>(0, static_cast<uint32_t>(arena_bytes - payload.size()));
  e.payload_bytes = static_cast<uint32_t>(payload.size());
  arena_.copy_in(e.payload_offset, payload);
}

size_t Steps::launch(std::vector<rig_proxy_part> &parts, size_t i) {
  rig_proxy_launch l{};
  l.kind = RIG_PROXY_PART_LAUNCH;
  l.function = in_.ConsumeIntegralInRange<uint64_t>(0, 4);
  for (int a = 0; a < 3; a++) {
    l.groups[a] = in_.ConsumeIntegralInRange<uint64_t>(0, 2);
    l.threads[a] = in_.ConsumeIntegralInRange<uint64_t>(0, 2);
  }
  l.param_bytes = static_cast<uint32_t>(in_.ConsumeIntegralInRange<uint64_t>(0, 100));
  l.ref_count = in_.ConsumeIntegralInRange<uint32_t>(0, 2);
  std::memcpy(&parts[i], &l, sizeof l);
  size_t j = i + 1;
  for (uint32_t r = 0; r < l.ref_count && j < parts.size(); r++, j++) {
    rig_proxy_ref ref{};
    ref.kind = RIG_PROXY_PART_REF;
    ref.ref_kind = in_.ConsumeIntegralInRange<uint32_t>(0, RIG_REF_ENTRY + 1);
    ref.handle = pick(model_.held);
    ref.offset = small();
    ref.bytes = small();
    ref.at = in_.ConsumeIntegralInRange<uint64_t>(0, l.param_bytes);
    std::memcpy(&parts[j], &ref, sizeof ref);
  }
  return j - i;
}

// A hand-over of the proxy's next value (or one near it), its payload
// written into the arena: a few waits, a few copies, fills and words parts
// among the client's handles at small offsets, and now and then a size
// that does not match its counts.
void Steps::hand_over(rig_proxy_entry &e) {
  e.opcode = RIG_PROXY_OP_HANDOVER;
  e.device = proxy();
  uint64_t handed = e.device < model_.proxies.size() ? model_.proxies[e.device].handed : 0;
  e.args[0] = handed + in_.ConsumeIntegralInRange<uint64_t>(0, 2);
  std::vector<rig_proxy_wait> waits(in_.ConsumeIntegralInRange<size_t>(0, 2));
  for (rig_proxy_wait &w : waits) {
    w.proxy = proxy();
    uint64_t last = w.proxy < model_.proxies.size() ? model_.proxies[w.proxy].handed : 0;
    w.value = last - std::min(last, in_.ConsumeIntegralInRange<uint64_t>(0, 2)) + in_.ConsumeBool();
  }
  std::vector<rig_proxy_part> parts(in_.ConsumeIntegralInRange<size_t>(0, 5));
  for (size_t i = 0; i < parts.size(); i++) {
    rig_proxy_part &p = parts[i];
    // A words part is followed by up to its count of writes (fewer where
    // the parts end first), each 8 bytes at a multiple of 8 most often.
    if (in_.ConsumeIntegralInRange<int>(0, 3) == 0) {
      p.kind = RIG_PROXY_PART_WORDS;
      p.rows = in_.ConsumeIntegralInRange<uint64_t>(0, 2);
      for (size_t j = i + 1; j < parts.size() && j <= i + p.rows; j++) {
        parts[j].kind = RIG_PROXY_PART_WORD;
        parts[j].dst = pick(model_.held);
        parts[j].dst_offset = small() & (in_.ConsumeBool() ? ~uint64_t{7} : ~uint64_t{0});
        parts[j].word = in_.ConsumeIntegral<uint64_t>();
      }
      i += p.rows;
      continue;
    }
    if (in_.ConsumeIntegralInRange<int>(0, 4) == 0) {
      i += launch(parts, i) - 1;
      continue;
    }
    p.kind = in_.ConsumeBool() ? RIG_PROXY_PART_COPY : RIG_PROXY_PART_FILL;
    p.dst = pick(model_.held);
    p.dst_offset = small();
    p.width = 1 + small();
    p.rows = in_.ConsumeIntegralInRange<uint64_t>(1, 4);
    p.dst_pitch = p.width + (p.rows > 1 ? small() : 0);
    if (p.kind == RIG_PROXY_PART_COPY) {
      p.src = pick(model_.held);
      p.src_offset = small();
      p.src_pitch = p.width + (p.rows > 1 ? small() : 0);
    } else {
      p.value = in_.ConsumeIntegral<uint8_t>();
      p.dst_pitch = p.width;
    }
  }
  rig_proxy_handover header{static_cast<uint32_t>(waits.size()), static_cast<uint32_t>(parts.size())};
  std::vector<std::byte> payload(sizeof header);
  std::memcpy(payload.data(), &header, sizeof header);
  auto w = std::as_bytes(std::span(waits));
  auto p = std::as_bytes(std::span(parts));
  payload.insert(payload.end(), w.begin(), w.end());
  payload.insert(payload.end(), p.begin(), p.end());
  e.payload_offset = in_.ConsumeIntegralInRange<uint32_t>(0, arena_bytes - payload.size());
  e.payload_bytes = static_cast<uint32_t>(payload.size()) + in_.ConsumeIntegralInRange<uint32_t>(0, 2) -
                    in_.ConsumeIntegralInRange<uint32_t>(0, 1);
  arena_.copy_in(e.payload_offset, payload);
}

}  // namespace rigd_fuzz
