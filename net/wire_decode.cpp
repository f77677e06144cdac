#include "wire_decode.hpp"

#include "wire_bounds.hpp"
#include "wire_check.hpp"
#include "wire_words.hpp"

#include <concepts>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace rig::net::wire {
namespace {

// Reads a message's fields in order, each only where the bytes hold it.
// The first field that ends past them fails the reader: later reads give
// zeros and empty views, and a loop over a list stops at ok().  What the
// reader is in, for its error, is kept as names and numbers and made into
// words only on failure.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, Kind kind) : bytes_(bytes), kind_(kind) {}

  bool ok() const { return !failed_; }
  std::optional<Error> &failure() { return failed_; }
  size_t at() const { return at_; }

  // The subject's words: the request's or answer's number, op, and the
  // count of the list last read outside every item ("a HANDOVER of 3
  // parts").
  void number_is(uint64_t number) { number_ = number; }
  void op_is(uint16_t op) { op_ = op; }
  // The item of a list that the next fields are of, and within it an item
  // of its own list; nullptr for none.
  void in(const char *item, size_t index, uint16_t part = 0) {
    item_ = item;
    item_index_ = index;
    item_part_ = part;
    sub_ = nullptr;
  }
  void in_sub(const char *sub, size_t index) {
    sub_ = sub;
    sub_index_ = index;
  }

  template <class N>
  N number(const char *field) {
    if (!holds(sizeof(N), field)) return 0;
    std::make_unsigned_t<N> bits = 0;
    for (size_t i = 0; i < sizeof(N); i++) bits |= static_cast<std::make_unsigned_t<N>>(bytes_[at_ + i]) << (8 * i);
    at_ += sizeof(N);
    return static_cast<N>(bits);
  }
  uint16_t u16(const char *field) { return number<uint16_t>(field); }
  uint32_t u32(const char *field) { return number<uint32_t>(field); }
  uint64_t u64(const char *field) { return number<uint64_t>(field); }

  // Fields by their types, each after its name:
  // read("device", m.device, "value", m.value).
  template <class... Rest>
  void read(const char *field, auto &value, Rest &&...rest) {
    get(field, value);
    if constexpr (sizeof...(rest) > 0) read(rest...);
  }

  std::span<const uint8_t> take(uint64_t n, const char *field) {
    if (!holds(n, field)) return {};
    auto taken = bytes_.subspan(at_, n);
    at_ += n;
    return taken;
  }
  std::string_view text(const char *field) {
    uint32_t n = u32(field);
    auto taken = take(n, field);
    return {reinterpret_cast<const char *>(taken.data()), taken.size()};
  }
  Data data(const char *field) { return Data{take(u64(field), field)}; }

  void get(const char *field, std::integral auto &value) {
    value = number<std::remove_reference_t<decltype(value)>>(field);
  }
  template <class E>
  requires std::is_enum_v<E>
  void get(const char *field, E &value) { value = static_cast<E>(number<std::underlying_type_t<E>>(field)); }
  void get(const char *field, std::string_view &value) { value = text(field); }
  void get(const char *field, Data &value) { value = data(field); }

  // The count of a list whose items take at least item_min bytes each,
  // read and checked before any item is: at most max (and at least min),
  // and not more than the bytes left hold.  0 where it fails.
  uint32_t list(const char *noun, uint64_t min, uint64_t max, uint64_t item_min) {
    if (!item_) count_noun_ = nullptr;
    uint32_t count = u32(noun);
    if (!ok()) return 0;
    if (count < min || count > max) {
      failed_ = check_count(item_ ? words(subject(), ": ", where()) : subject(), count, min, max, noun);
      return 0;
    }
    if (!item_) {
      count_ = count;
      count_noun_ = noun;
    }
    if (!holds(count * item_min, noun)) return 0;
    return count;
  }

  void fail(Error error) {
    if (!failed_) failed_ = std::move(error);
  }

  std::string subject() const {
    std::string s = a_kind(kind_);
    if (number_) s += words(" ", *number_);
    if (op_) s += words(" (", an_op(op_), ")");
    if (count_noun_) s += words(" of ", count_of(count_, count_noun_));
    return s;
  }
  // "part 2 (a LAUNCH)'s ref 1", or "" outside every list.
  std::string where() const {
    std::string w;
    if (item_) w += words(item_, " ", item_index_, item_part_ ? words(" (", a_part(item_part_), ")") : "");
    if (sub_) w += words("'s ", sub_, " ", sub_index_);
    return w;
  }

 private:
  // Whether n more bytes lie past at_; the reader fails where not.
  bool holds(uint64_t n, const char *field) {
    if (failed_) return false;
    if (n <= bytes_.size() - at_) return true;
    std::string end =
        n <= std::numeric_limits<uint64_t>::max() - at_ ? words("at byte ", at_ + n) : std::string("past byte 2^64");
    std::string in = item_ ? words(where(), "'s ", field) : std::string(field);
    failed_ = refusal(subject(), " ends ", end, " of ", bytes_.size(), ", in ", in);
    return false;
  }

  std::span<const uint8_t> bytes_;
  size_t at_ = layout::kHeader;
  Kind kind_;
  std::optional<uint64_t> number_;
  uint16_t op_ = 0;
  uint64_t count_ = 0;
  const char *count_noun_ = nullptr;
  const char *item_ = nullptr;
  size_t item_index_ = 0;
  uint16_t item_part_ = 0;
  const char *sub_ = nullptr;
  size_t sub_index_ = 0;
  std::optional<Error> failed_;
};

Devices read_devices(Reader &r) {
  Devices m;
  uint32_t count = r.list("devices", 0, kDevicesMax, layout::kAccountMin);
  m.accounts.reserve(count);
  for (uint32_t i = 0; i < count && r.ok(); i++) {
    r.in("device", i);
    Account &a = m.accounts.emplace_back();
    r.read("id", a.id, "name", a.name, "arch", a.arch, "budget", a.budget, "cache_bytes", a.cache_bytes);
    uint32_t reach = r.list("reach ids", 0, kDevicesMax, 4);
    a.reach.reserve(reach);
    for (uint32_t j = 0; j < reach && r.ok(); j++) a.reach.push_back(r.u32("reach id"));
  }
  return m;
}

FunctionOfImage read_function(Reader &r) {
  FunctionOfImage f;
  r.read("image", f.image, "function name", f.function);
  return f;
}

Operation read_operation(Reader &r, Op op) {
  switch (op) {
    case Op::Open:
      return Open{r.text("configuration")};
    case Op::Alloc: {
      Alloc alloc;
      r.read("memory", alloc.memory, "bytes", alloc.bytes);
      return alloc;
    }
    case Op::MapPeer:
      return MapPeer{r.u64("source")};
    case Op::Image:
      return Image{r.data("image")};
    case Op::Prepare:
      return Prepare{read_function(r)};
    case Op::Entry:
      return Entry{read_function(r)};
  }
  return {};
}

Request read_request(Reader &r) {
  Request m;
  m.number = r.u64("number");
  r.number_is(m.number);
  uint16_t op = r.u16("op");
  if (!r.ok()) return m;
  if (!op_name(op)) {
    r.fail(refusal(r.subject(), " of op ", op, ", not 1 to 6 (OPEN to ENTRY)"));
    return m;
  }
  r.op_is(op);
  r.read("device", m.device, "object", m.object);
  m.op = read_operation(r, static_cast<Op>(op));
  return m;
}

Answer read_answer(Reader &r) {
  Answer m;
  m.number = r.u64("number");
  r.number_is(m.number);
  r.read("status", m.status, "value", m.value, "detail", m.detail, "why", m.why);
  return m;
}

// A part's own list (a LAUNCH's refs, a WORDS' writes): its count of
// noun, checked before any item is read, then each item by read_item.
template <class T, class ReadItem>
void read_sub_list(Reader &r, const char *noun, const char *item, uint64_t min, uint64_t max, uint64_t item_min,
                   std::vector<T> &into, ReadItem read_item) {
  uint32_t count = r.list(noun, min, max, item_min);
  into.reserve(count);
  for (uint32_t i = 0; i < count && r.ok(); i++) {
    r.in_sub(item, i);
    read_item(into.emplace_back());
  }
}

Launch read_launch(Reader &r) {
  Launch p;
  r.read("image", p.image, "function", p.function, "grid x", p.grid[0], "grid y", p.grid[1], "grid z", p.grid[2],
         "group x", p.group[0], "group y", p.group[1], "group z", p.group[2], "shared bytes", p.shared_bytes,
         "parameters", p.parameters);
  read_sub_list(r, "refs", "ref", 0, kRefsMax, layout::kRef, p.refs, [&r](Ref &ref) {
    r.read("object", ref.place.object, "offset", ref.place.offset, "parameter offset", ref.parameter_offset);
  });
  return p;
}

Words read_words(Reader &r) {
  Words p;
  read_sub_list(r, "writes", "write", 1, kWordsMax, layout::kWord, p.writes, [&r](Word &w) {
    r.read("object", w.place.object, "offset", w.place.offset, "value", w.value);
  });
  return p;
}

Part read_part(Reader &r, PartKind kind) {
  switch (kind) {
    case PartKind::Copy: {
      Copy p;
      r.read("source", p.source.object, "source offset", p.source.offset, "target", p.target.object, "target offset",
             p.target.offset, "bytes", p.bytes);
      return p;
    }
    case PartKind::Put: {
      Put p;
      r.read("target", p.target.object, "target offset", p.target.offset, "bytes", p.data);
      return p;
    }
    case PartKind::Get: {
      Get p;
      r.read("source", p.source.object, "source offset", p.source.offset, "bytes", p.bytes);
      return p;
    }
    case PartKind::Fill: {
      Fill p;
      r.read("target", p.target.object, "target offset", p.target.offset, "bytes", p.bytes, "byte", p.byte);
      return p;
    }
    case PartKind::Launch:
      return read_launch(r);
    case PartKind::Words:
      return read_words(r);
  }
  return {};
}

Handover read_handover(Reader &r) {
  Handover m;
  r.read("device", m.device, "value", m.value);
  uint32_t waits = r.list("waits", 0, kWaitsMax, layout::kWait);
  m.waits.reserve(waits);
  for (uint32_t i = 0; i < waits && r.ok(); i++) {
    r.in("wait", i);
    Wait &w = m.waits.emplace_back();
    r.read("device", w.device, "value", w.value);
  }
  r.in(nullptr, 0);
  uint32_t parts = r.list("parts", 0, kPartsMax, layout::kPartKind + layout::kGet);
  m.parts.reserve(parts);
  for (uint32_t i = 0; i < parts && r.ok(); i++) {
    r.in("part", i);
    uint16_t kind = r.u16("kind");
    if (!r.ok()) break;
    if (!part_name(kind)) {
      r.fail(refusal(r.subject(), ": part ", i, " of kind ", kind, ", not 1 to 6 (COPY to WORDS)"));
      break;
    }
    r.in("part", i, kind);
    m.parts.push_back(read_part(r, static_cast<PartKind>(kind)));
  }
  return m;
}

Report read_report(Reader &r) {
  Report m;
  r.read("device", m.device, "value", m.value);
  return m;
}

Bytes read_bytes(Reader &r) {
  Bytes m;
  r.read("device", m.device, "value", m.value, "part", m.part, "offset", m.offset, "bytes", m.data);
  return m;
}

Release read_release(Reader &r) {
  Release m;
  r.read("what", m.what, "id", m.id);
  return m;
}

Message read_fields(Reader &r, Kind kind) {
  switch (kind) {
    case Kind::Devices:
      return read_devices(r);
    case Kind::Request:
      return read_request(r);
    case Kind::Answer:
      return read_answer(r);
    case Kind::Release:
      return read_release(r);
    case Kind::Handover:
      return read_handover(r);
    case Kind::Report:
      return read_report(r);
    case Kind::Bytes:
      return read_bytes(r);
    case Kind::Failure:
      return Failure{r.text("root cause")};
    case Kind::Close:
      return Close{};
  }
  return Close{};
}

Result<Message> decode_checked(std::span<const uint8_t> bytes) {
  if (bytes.size() < layout::kHeader)
    return refusal("a message of ", count_of(bytes.size(), "bytes"), " ends before its kind and version (",
                   layout::kHeader, " bytes)");
  uint16_t kind_number = static_cast<uint16_t>(bytes[0] | bytes[1] << 8);
  uint16_t version = static_cast<uint16_t>(bytes[2] | bytes[3] << 8);
  if (!kind_name(kind_number))
    return refusal("a message of kind ", kind_number, ", not one of the wire's (1 to 9, DEVICES to CLOSE)");
  auto kind = static_cast<Kind>(kind_number);
  if (version != kWireVersion) return refusal(a_kind(kind), " of wire version ", version, ", not ", kWireVersion);
  if (bytes.size() > max_message_size(kind))
    return refusal(a_kind(kind), " of ", bytes.size(), " bytes, at most ", max_message_size(kind));
  Reader r(bytes, kind);
  Message message = read_fields(r, kind);
  if (!r.ok()) return std::move(*r.failure());
  if (r.at() != bytes.size())
    return refusal(r.subject(), " ends at byte ", r.at(), ", ", count_of(bytes.size() - r.at(), "bytes"),
                   " before the end of its ", bytes.size());
  if (auto refused = check(message)) return std::move(*refused);
  return message;
}

}  // namespace

Result<Message> decode(std::span<const uint8_t> bytes) {
  try {
    return decode_checked(bytes);
  } catch (const std::bad_alloc &) {
    return Error{"out of memory"};
  }
}

}  // namespace rig::net::wire
