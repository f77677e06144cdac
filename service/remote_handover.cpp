// A remote client's hand-overs (remote_client.hpp): each wire part as the
// parts of a local client's hand-over, so that hold_parts validates them
// and submit_parts runs them, in the hand-over's order (PROXY-39).
#include "remote_client.hpp"

#include <cstring>
#include <span>
#include <variant>

namespace rigd {

namespace wire = rig::net::wire;

namespace {

// Rows of one: a copy of bytes from src to dst.
rig_proxy_part copy_part(uint64_t src, uint64_t src_offset, uint64_t dst, uint64_t dst_offset, uint64_t bytes) {
  return {.kind = RIG_PROXY_PART_COPY, .value = 0, .src = src, .src_offset = src_offset, .dst = dst,
          .dst_offset = dst_offset, .width = bytes, .rows = 1, .src_pitch = bytes, .dst_pitch = bytes};
}

template <class T>
void append(std::vector<std::byte> &out, const T &value) {
  auto bytes = std::as_bytes(std::span(&value, 1));
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace

std::optional<uint64_t> RemoteClient::stage(uint64_t n, const uint8_t *bytes, std::string &why) {
  if (n == 0 || n > INT64_MAX) {
    why = "a part of " + std::to_string(n) + " bytes";
    return std::nullopt;
  }
  auto count = static_cast<int64_t>(n);
  if (std::string refused = objects_.charge_entry(count, Held::arena_bytes); !refused.empty()) {
    why = "rigd cannot stage " + std::to_string(n) + " bytes for the client: " + refused;
    return std::nullopt;
  }
  rig_buffer_t *b = nullptr;
  rig_status_t status;
  if (bytes) {
    // A PUT's bytes stay where they arrived, in the message, which the
    // buffer keeps until rig lets go of it: its copy only reads them.
    using Kept = std::shared_ptr<const std::vector<uint8_t>>;
    auto *kept = new Kept(message_);
    status = rig_buffer_of_memory(const_cast<uint8_t *>(bytes), count,
                                  [](void *context) { delete static_cast<Kept *>(context); }, kept, &b);
    if (status != RIG_OK) delete kept;
  } else {
    b = reports_.take_spare(n);
    status = b ? RIG_OK : rig_buffer_create(rig_host(), count, RIG_MEMORY_DEVICE, &b);
  }
  if (status != RIG_OK) {
    objects_.refund_entry(count, Held::arena_bytes);
    why = "rigd has no host memory to stage " + std::to_string(n) + " bytes: " + rig_last_error();
    return std::nullopt;
  }
  return objects_.add(b, count, {}, Held::arena_bytes);
}

std::optional<std::string> RemoteClient::launch_of(const wire::Launch &l, size_t index,
                                                   std::vector<rig_proxy_part> &parts) {
  std::string at = "part " + std::to_string(index) + " (LAUNCH)";
  const Object *function = object(l.function, Kind::function);
  if (!object(l.image, Kind::image) || !function)
    return at + " names image " + std::to_string(l.image) + " and function " + std::to_string(l.function) +
           ", which the connection does not hold as such";
  rig_proxy_launch launch{};
  launch.kind = RIG_PROXY_PART_LAUNCH;
  launch.param_bytes = static_cast<uint32_t>(l.parameters.size());
  launch.function = function->id;
  for (int a = 0; a < 3; ++a) {
    launch.groups[a] = l.grid[a];
    launch.threads[a] = l.group[a];
  }
  launch.shared_bytes = l.shared_bytes;
  launch.ref_count = static_cast<uint32_t>(l.refs.size());
  size_t first = parts.size();
  size_t slots = 1 + l.refs.size() + (l.parameters.size() + sizeof(rig_proxy_part) - 1) / sizeof(rig_proxy_part);
  parts.resize(first + slots);
  std::memcpy(&parts[first], &launch, sizeof launch);
  for (size_t j = 0; j < l.refs.size(); ++j) {
    const wire::Ref &r = l.refs[j];
    const Object *memory = object(r.place.object, Kind::memory);
    if (!memory)
      return at + " ref " + std::to_string(j) + " names object " + std::to_string(r.place.object) +
             ", which is no memory of the connection's";
    // A ref reads and writes its memory from its place to the end: the
    // wire names no length, and a launch orders after all of it.
    rig_proxy_ref ref{};
    ref.kind = RIG_PROXY_PART_REF;
    ref.ref_kind = RIG_REF_READ_WRITE;
    ref.handle = memory->id;
    ref.offset = r.place.offset;
    ref.bytes = r.place.offset < memory->bytes ? memory->bytes - r.place.offset : 0;
    ref.at = r.parameter_offset;
    std::memcpy(&parts[first + 1 + j], &ref, sizeof ref);
  }
  if (!l.parameters.bytes.empty())
    std::memcpy(&parts[first + 1 + l.refs.size()], l.parameters.bytes.data(), l.parameters.size());
  return std::nullopt;
}

std::optional<std::string> RemoteClient::words_of(const wire::Words &w, size_t index,
                                                  std::vector<rig_proxy_part> &parts) {
  // A WORDS part, then a WORD part for each write (protocol.h); hold_parts
  // runs them on the machine's host alone, and refuses them elsewhere.
  rig_proxy_part words{};
  words.kind = RIG_PROXY_PART_WORDS;
  words.rows = w.writes.size();
  parts.push_back(words);
  for (size_t j = 0; j < w.writes.size(); ++j) {
    const wire::Word &write = w.writes[j];
    const Object *memory = object(write.place.object, Kind::memory);
    if (!memory)
      return "part " + std::to_string(index) + " (WORDS) write " + std::to_string(j) + " names object " +
             std::to_string(write.place.object) + ", which is no memory of the connection's";
    rig_proxy_part p{};
    p.kind = RIG_PROXY_PART_WORD;
    p.word = write.value;
    p.dst = memory->id;
    p.dst_offset = write.place.offset;
    parts.push_back(p);
  }
  return std::nullopt;
}

std::optional<std::string> RemoteClient::parts_of(const wire::Handover &h, uint32_t account,
                                                  std::vector<rig_proxy_part> &parts, std::vector<uint64_t> &staged) {
  for (size_t i = 0; i < h.parts.size(); ++i) {
    std::string at = "part " + std::to_string(i);
    auto memory = [&](const wire::Place &place) -> std::optional<uint64_t> {
      if (const Object *o = object(place.object, Kind::memory)) return o->id;
      return std::nullopt;
    };
    auto unheld = [&](const wire::Place &place, const char *kind) {
      return at + " (" + kind + ") names object " + std::to_string(place.object) +
             ", which is no memory of the connection's";
    };
    std::optional<std::string> breach = std::visit(
        [&](const auto &part) -> std::optional<std::string> {
          using Part = std::decay_t<decltype(part)>;
          std::string why;
          if constexpr (std::is_same_v<Part, wire::Copy>) {
            auto src = memory(part.source), dst = memory(part.target);
            if (!src || !dst) return unheld(src ? part.target : part.source, "COPY");
            parts.push_back(copy_part(*src, part.source.offset, *dst, part.target.offset, part.bytes));
          } else if constexpr (std::is_same_v<Part, wire::Put>) {
            auto dst = memory(part.target);
            if (!dst) return unheld(part.target, "PUT");
            auto staging = stage(part.data.size(), part.data.bytes.data(), why);
            if (!staging) return at + " (PUT): " + why;
            staged.push_back(*staging);
            parts.push_back(copy_part(*staging, 0, *dst, part.target.offset, part.data.size()));
          } else if constexpr (std::is_same_v<Part, wire::Get>) {
            auto src = memory(part.source);
            if (!src) return unheld(part.source, "GET");
            // Before rigd stages its bytes: hold_parts checks the rest.
            if (uint64_t held = object(part.source.object, Kind::memory)->bytes; part.bytes > held)
              return at + " (GET) of " + std::to_string(part.bytes) + " bytes reads past object " +
                     std::to_string(part.source.object) + "'s " + std::to_string(held);
            auto staging = stage(part.bytes, nullptr, why);
            if (!staging) return at + " (GET): " + why;
            reports_.expect_get(account, h.value, static_cast<uint32_t>(i), *staging);
            parts.push_back(copy_part(*src, part.source.offset, *staging, 0, part.bytes));
          } else if constexpr (std::is_same_v<Part, wire::Fill>) {
            auto dst = memory(part.target);
            if (!dst) return unheld(part.target, "FILL");
            parts.push_back({.kind = RIG_PROXY_PART_FILL, .value = part.byte, .src = 0, .src_offset = 0, .dst = *dst,
                             .dst_offset = part.target.offset, .width = part.bytes, .rows = 1, .src_pitch = 0,
                             .dst_pitch = part.bytes});
          } else if constexpr (std::is_same_v<Part, wire::Launch>) {
            return launch_of(part, i, parts);
          } else {
            return words_of(part, i, parts);
          }
          return std::nullopt;
        },
        h.parts[i]);
    if (breach) return breach;
  }
  return std::nullopt;
}

std::optional<std::string> RemoteClient::hand_over(const wire::Handover &h,
                                                   std::shared_ptr<const std::vector<uint8_t>> message) {
  message_ = std::move(message);
  std::optional<std::string> breach = hand_over_parts(h);
  message_.reset();
  return breach;
}

std::optional<std::string> RemoteClient::hand_over_parts(const wire::Handover &h) {
  std::optional<uint32_t> proxy = proxy_of(h.device);
  if (!proxy) return "a HANDOVER of value " + std::to_string(h.value) + " for device " + std::to_string(h.device) +
                     ", which is not open on this connection";
  std::vector<rig_proxy_wait> waits;
  for (const wire::Wait &w : h.waits) {
    std::optional<uint32_t> on = proxy_of(w.device);
    if (!on) return "value " + std::to_string(h.value) + " of device " + std::to_string(h.device) +
                    " waits for device " + std::to_string(w.device) + ", which is not open on this connection";
    waits.push_back({*on, 0, w.value});
  }
  std::vector<rig_proxy_part> parts;
  std::vector<uint64_t> staged;
  std::optional<std::string> breach = parts_of(h, h.device, parts, staged);
  if (!breach) {
    std::vector<std::byte> payload;
    append(payload, rig_proxy_handover{static_cast<uint32_t>(waits.size()), static_cast<uint32_t>(parts.size())});
    for (const rig_proxy_wait &w : waits) append(payload, w);
    for (const rig_proxy_part &p : parts) append(payload, p);
    // A hand-over rigd refuses loses the device's word: the job fails
    // with the why (CompletionHooks::lost).
    run(RIG_PROXY_OP_HANDOVER, *proxy, {h.value}, payload, false);
  }
  // The PUTs' staging goes once their copies are done; rig holds it till then.
  for (uint64_t s : staged) objects_.remove(s);
  return breach;
}

}  // namespace rigd
