#include "wire_check.hpp"

#include "wire_bounds.hpp"
#include "wire_words.hpp"

#include <rig/rig.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

namespace rig::net::wire {

using Refused = std::optional<Error>;

Refused check_count(std::string_view subject, uint64_t count, uint64_t min, uint64_t max, std::string_view noun) {
  if (count < min) return refusal(subject, " of ", count_of(count, noun), ", at least ", min);
  if (count > max) return refusal(subject, " of ", count_of(count, noun), ", at most ", max);
  return {};
}

namespace {

// Each check below is nothing, or why field of subject breaks its rule.

Refused check_length(std::string_view subject, std::string_view field, uint64_t bytes, uint64_t min, uint64_t max) {
  if (bytes >= min && bytes <= max) return {};
  return check_count(words(subject, ": ", field), bytes, min, max, "bytes");
}

// A device's name or arch: 1 to kNameMax bytes of printable ASCII.
Refused check_name(std::string_view subject, std::string_view field, std::string_view text) {
  if (auto refused = check_length(subject, field, text.size(), 1, kNameMax)) return refused;
  for (size_t i = 0; i < text.size(); i++) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte > 0x7e)
      return refusal(subject, ": ", field, "'s byte ", i, " is ", byte, ", not printable ASCII");
  }
  return {};
}

// A text of [min, max] bytes and no NUL.
Refused check_text(std::string_view subject, std::string_view field, std::string_view text, uint64_t min,
                   uint64_t max) {
  if (auto refused = check_length(subject, field, text.size(), min, max)) return refused;
  if (auto at = text.find('\0'); at != std::string_view::npos)
    return refusal(subject, ": ", field, " has a NUL at byte ", at);
  return {};
}

Refused check_positive(std::string_view subject, std::string_view field, uint64_t n) {
  if (n == 0) return refusal(subject, ": ", field, " 0, at least 1");
  return {};
}

// The ids of the job's objects and images are fresh from the client: 0 is
// none of them.
Refused check_id(std::string_view subject, std::string_view field, uint64_t id) {
  if (id == 0) return refusal(subject, ": ", field, " id 0, not an object's (they start at 1)");
  return {};
}

// bytes > 0 from offset, without passing 2^64.
Refused check_range(std::string_view subject, std::string_view field, uint64_t offset, uint64_t bytes) {
  if (auto refused = check_positive(subject, "bytes", bytes)) return refused;
  if (bytes > std::numeric_limits<uint64_t>::max() - offset)
    return refusal(subject, ": ", field, " ", offset, " plus ", count_of(bytes, "bytes"), " overflows 64 bits");
  return {};
}

// An object's bytes > 0 from a place in it (the side of a part named
// side): its id and the end of the bytes.
Refused check_place(std::string_view subject, std::string_view side, const Place &place, uint64_t bytes) {
  if (auto refused = check_id(subject, side, place.object)) return refused;
  return check_range(subject, words(side, " offset"), place.offset, bytes);
}

Refused check_account(const std::string &subject, const Account &account, const std::vector<uint32_t> &sorted_ids) {
  if (auto refused = check_name(subject, "name", account.name)) return refused;
  if (auto refused = check_name(subject, "arch", account.arch)) return refused;
  if (auto refused = check_count(subject, account.reach.size(), 0, kDevicesMax, "reach ids")) return refused;
  std::vector<uint32_t> reach = account.reach;
  std::ranges::sort(reach);
  for (size_t i = 0; i < reach.size(); i++) {
    if (i > 0 && reach[i] == reach[i - 1]) return refusal(subject, " reaches id ", reach[i], " twice");
    if (!std::ranges::binary_search(sorted_ids, reach[i]))
      return refusal(subject, " reaches id ", reach[i], ", which no device of the list has");
  }
  return {};
}

Refused check_devices(const Devices &devices) {
  const char *subject = "a DEVICES";
  if (auto refused = check_count(subject, devices.accounts.size(), 0, kDevicesMax, "devices")) return refused;
  std::vector<std::pair<uint32_t, size_t>> ids;  // id, index
  for (size_t i = 0; i < devices.accounts.size(); i++) ids.emplace_back(devices.accounts[i].id, i);
  std::ranges::sort(ids);
  for (size_t i = 1; i < ids.size(); i++)
    if (ids[i].first == ids[i - 1].first)
      return refusal(subject, ": devices ", ids[i - 1].second, " and ", ids[i].second, " both have id ", ids[i].first);
  if (ids.empty() || ids[0].first != 0)
    return refusal(subject, " of ", count_of(ids.size(), "devices"), " has no host (id 0)");
  std::vector<uint32_t> sorted_ids;
  for (auto [id, index] : ids) sorted_ids.push_back(id);
  for (size_t i = 0; i < devices.accounts.size(); i++) {
    const Account &account = devices.accounts[i];
    if (auto refused = check_account(words("a DEVICES' device ", i, " (id ", account.id, ")"), account, sorted_ids))
      return refused;
  }
  return {};
}

Refused check_operation(const std::string &subject, const Operation &op) {
  if (auto *open = std::get_if<Open>(&op))
    return check_text(subject, "configuration", open->configuration, 0, kConfigurationMax);
  if (auto *alloc = std::get_if<Alloc>(&op)) {
    if (auto refused = check_positive(subject, "bytes", alloc->bytes)) return refused;
    if (alloc->bytes % kAllocUnit != 0)
      return refusal(subject, ": bytes ", alloc->bytes, ", not a multiple of ", kAllocUnit);
    return {};
  }
  if (auto *map = std::get_if<MapPeer>(&op)) return check_id(subject, "source", map->source);
  if (auto *image = std::get_if<Image>(&op)) return check_length(subject, "image", image->image.size(), 1, kImageMax);
  const FunctionOfImage &function = std::holds_alternative<Prepare>(op)
                                        ? static_cast<const FunctionOfImage &>(std::get<Prepare>(op))
                                        : static_cast<const FunctionOfImage &>(std::get<Entry>(op));
  if (auto refused = check_id(subject, "image", function.image)) return refused;
  return check_text(subject, "function name", function.function, 1, kFunctionNameMax);
}

Refused check_request(const Request &request) {
  std::string subject = words("a REQUEST ", request.number, " (", an_op(request.op.index() + 1), ")");
  if (auto refused = check_id(subject, "object", request.object)) return refused;
  return check_operation(subject, request.op);
}

Refused check_answer(const Answer &answer) {
  std::string subject = words("an ANSWER ", answer.number);
  constexpr int32_t lowest = RIG_EIMAGE, highest = RIG_OK;  // rig_status_t's codes
  if (answer.status < lowest || answer.status > highest)
    return refusal(subject, ": status ", answer.status, ", not a rig status code (", lowest, " to ", highest, ")");
  return check_length(subject, "why", answer.why.size(), 0, kWhyMax);
}

Refused check_release(const Release &release) {
  auto what = static_cast<uint16_t>(release.what);
  if (release.what != Released::Object && release.what != Released::Image)
    return refusal("a RELEASE of what ", what, ", not 1 (an object) or 2 (an image)");
  return check_id("a RELEASE", release.what == Released::Object ? "object" : "image", release.id);
}

Refused check_launch(const std::string &subject, const Launch &launch) {
  if (auto refused = check_id(subject, "image", launch.image)) return refused;
  if (auto refused = check_id(subject, "function", launch.function)) return refused;
  static constexpr const char *axes[] = {" x", " y", " z"};
  for (size_t axis = 0; axis < 3; axis++) {
    if (auto refused = check_positive(subject, words("grid", axes[axis]), launch.grid[axis])) return refused;
    if (auto refused = check_positive(subject, words("group", axes[axis]), launch.group[axis])) return refused;
  }
  if (auto refused = check_length(subject, "parameters", launch.parameters.size(), 0, kParametersMax)) return refused;
  if (auto refused = check_count(subject, launch.refs.size(), 0, kRefsMax, "refs")) return refused;
  std::vector<std::pair<uint32_t, size_t>> slots;  // parameter offset, ref
  for (size_t i = 0; i < launch.refs.size(); i++) {
    const Ref &ref = launch.refs[i];
    std::string ref_subject = words(subject, "'s ref ", i);
    if (auto refused = check_id(ref_subject, "object", ref.place.object)) return refused;
    uint64_t at = ref.parameter_offset;
    if (at % kRefBytes != 0) return refusal(ref_subject, ": parameter offset ", at, ", not a multiple of ", kRefBytes);
    if (at + kRefBytes > launch.parameters.size())
      return refusal(ref_subject, ": parameter offset ", at, " ends at byte ", at + kRefBytes,
                     ", past the parameters' ", launch.parameters.size());
    slots.emplace_back(ref.parameter_offset, i);
  }
  // Aligned, two refs overlap where they start at one offset.
  std::ranges::sort(slots);
  for (size_t i = 1; i < slots.size(); i++)
    if (slots[i].first == slots[i - 1].first)
      return refusal(subject, ": refs ", slots[i - 1].second, " and ", slots[i].second, " overlap at parameter offset ",
                     slots[i].first);
  return {};
}

Refused check_words(const std::string &subject, const Words &words_part) {
  if (auto refused = check_count(subject, words_part.writes.size(), 1, kWordsMax, "writes")) return refused;
  for (size_t i = 0; i < words_part.writes.size(); i++) {
    const Place &place = words_part.writes[i].place;
    std::string write_subject = words(subject, "'s write ", i);
    if (auto refused = check_place(write_subject, "target", place, kWordBytes)) return refused;
    if (place.offset % kWordBytes != 0)
      return refusal(write_subject, ": target offset ", place.offset, ", not a multiple of ", kWordBytes);
  }
  return {};
}

Refused check_part(const std::string &subject, const Part &part) {
  if (auto *copy = std::get_if<Copy>(&part)) {
    if (auto refused = check_place(subject, "source", copy->source, copy->bytes)) return refused;
    return check_place(subject, "target", copy->target, copy->bytes);
  }
  if (auto *put = std::get_if<Put>(&part)) return check_place(subject, "target", put->target, put->data.size());
  if (auto *get = std::get_if<Get>(&part)) return check_place(subject, "source", get->source, get->bytes);
  if (auto *fill = std::get_if<Fill>(&part)) return check_place(subject, "target", fill->target, fill->bytes);
  if (auto *words_part = std::get_if<Words>(&part)) return check_words(subject, *words_part);
  return check_launch(subject, std::get<Launch>(part));
}

Refused check_handover(const Handover &handover) {
  const char *subject = "a HANDOVER";
  if (auto refused = check_positive(subject, "value", handover.value)) return refused;
  if (auto refused = check_count(subject, handover.waits.size(), 0, kWaitsMax, "waits")) return refused;
  // A value may have no parts (rig gives an image load a value, and a
  // submission only waits): its hand-over still numbers it.
  if (auto refused = check_count(subject, handover.parts.size(), 0, kPartsMax, "parts")) return refused;
  for (size_t i = 0; i < handover.parts.size(); i++) {
    const Part &part = handover.parts[i];
    if (auto refused = check_part(words(subject, "'s part ", i, " (", a_part(part.index() + 1), ")"), part))
      return refused;
  }
  return {};
}

}  // namespace

std::optional<Error> check_bytes_head(const Bytes &head, uint64_t length) {
  const char *subject = "a BYTES";
  if (auto refused = check_positive(subject, "value", head.value)) return refused;
  if (head.part >= kPartsMax) return refusal(subject, ": part ", head.part, ", at most ", kPartsMax - 1);
  return check_range(subject, "offset", head.offset, length);
}

std::optional<Error> check(const Message &message) {
  struct {
    Refused operator()(const Devices &m) { return check_devices(m); }
    Refused operator()(const Request &m) { return check_request(m); }
    Refused operator()(const Answer &m) { return check_answer(m); }
    Refused operator()(const Release &m) { return check_release(m); }
    Refused operator()(const Handover &m) { return check_handover(m); }
    Refused operator()(const Report &) { return {}; }
    Refused operator()(const Bytes &m) { return check_bytes_head(m, m.data.size()); }
    Refused operator()(const Failure &m) {
      return check_length("a FAILURE", "root cause", m.root_cause.size(), 1, kRootCauseMax);
    }
    Refused operator()(const Close &) { return {}; }
  } checker;
  return std::visit(checker, message);
}

}  // namespace rig::net::wire
