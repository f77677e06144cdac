#include "wire_encode.hpp"

#include "wire_bounds.hpp"
#include "wire_check.hpp"
#include "wire_words.hpp"

#include <array>
#include <concepts>
#include <cstring>
#include <new>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace rig::net::wire {
namespace {

// Where the bytes go: counted, or copied into memory sized for them.  A
// data field's bytes come by data(), so that a sink may tell them apart.
struct Counter {
  uint64_t size = 0;
  // The data field written last, if nothing followed it: its bytes.
  std::span<const uint8_t> last_data;
  void put(const uint8_t *, size_t n) {
    size += n;
    last_data = {};
  }
  void data(const uint8_t *bytes, size_t n) {
    size += n;
    last_data = {bytes, n};
  }
};
struct Filler {
  uint8_t *at;
  const uint8_t *end;  // the bytes past it are the caller's tail
  void put(const uint8_t *bytes, size_t n) {
    if (n == 0 || at == end) return;  // an empty span's data may be null
    std::memcpy(at, bytes, n);
    at += n;
  }
  void data(const uint8_t *bytes, size_t n) { put(bytes, n); }
};

// Each field by its type: numbers little-endian and fixed-width, texts
// with their u32 lengths, data with their u64 ones, lists with their
// counts, a part with its kind first; a message's fields in their order.
template <class Sink>
struct Writer {
  Sink &sink;

  template <std::integral N>
  void put(N value) {
    uint8_t bytes[sizeof(N)];
    auto bits = static_cast<std::make_unsigned_t<N>>(value);
    for (size_t i = 0; i < sizeof(N); i++) bytes[i] = static_cast<uint8_t>(bits >> (8 * i));
    sink.put(bytes, sizeof(N));
  }
  template <class E>
  requires std::is_enum_v<E>
  void put(E value) { put(static_cast<std::underlying_type_t<E>>(value)); }
  // Lengths and counts of what the check bounds: they fit.
  void put(std::string_view t) {
    put(static_cast<uint32_t>(t.size()));
    sink.put(reinterpret_cast<const uint8_t *>(t.data()), t.size());
  }
  void put(const Data &d) {
    put(d.size());
    sink.data(d.bytes.data(), d.bytes.size());
  }
  template <class T>
  void put(const std::vector<T> &list) {
    put(static_cast<uint32_t>(list.size()));
    for (const T &item : list) put(item);
  }
  template <class T, size_t n>
  void put(const std::array<T, n> &items) {
    for (const T &item : items) put(item);
  }
  void put(const Part &part) {
    put(static_cast<uint16_t>(part.index() + 1));
    std::visit([this](const auto &p) { this->put(p); }, part);
  }
  template <class... Fields>
  void all(const Fields &...fields) {
    (put(fields), ...);
  }

  void put(const Account &a) { all(a.id, a.name, a.arch, a.budget, a.cache_bytes, a.reach); }
  void put(const Devices &m) { put(m.accounts); }
  void put(const Open &op) { put(op.configuration); }
  void put(const Alloc &op) { all(op.memory, op.bytes); }
  void put(const MapPeer &op) { put(op.source); }
  void put(const Image &op) { put(op.image); }
  void put(const FunctionOfImage &op) { all(op.image, op.function); }
  void put(const Request &m) {
    all(m.number, static_cast<uint16_t>(m.op.index() + 1), m.device, m.object);
    std::visit([this](const auto &op) { this->put(op); }, m.op);
  }
  void put(const Answer &m) { all(m.number, m.status, m.value, m.detail, m.why); }
  void put(const Release &m) { all(m.what, m.id); }
  void put(const Place &place) { all(place.object, place.offset); }
  void put(const Copy &p) { all(p.source, p.target, p.bytes); }
  void put(const Put &p) { all(p.target, p.data); }
  void put(const Get &p) { all(p.source, p.bytes); }
  void put(const Fill &p) { all(p.target, p.bytes, p.byte); }
  void put(const Ref &ref) { all(ref.place, ref.parameter_offset); }
  void put(const Launch &p) { all(p.image, p.function, p.grid, p.group, p.shared_bytes, p.parameters, p.refs); }
  void put(const Word &w) { all(w.place, w.value); }
  void put(const Words &p) { put(p.writes); }
  void put(const Wait &w) { all(w.device, w.value); }
  void put(const Handover &m) { all(m.device, m.value, m.waits, m.parts); }
  void put(const Report &m) { all(m.device, m.value); }
  void put(const Bytes &m) { all(m.device, m.value, m.part, m.offset, m.data); }
  void put(const Failure &m) { put(m.root_cause); }
  void put(const Close &) {}

  void message(const Message &m) {
    all(kind_of(m), kWireVersion);
    std::visit([this](const auto &v) { this->put(v); }, m);
  }
};

}  // namespace

uint64_t encoded_size(const Message &message) {
  Counter counter;
  Writer<Counter>{counter}.message(message);
  return counter.size;
}

Result<SplitEncoding> encode_split(const Message &message, size_t least_tail) {
  try {
    if (auto refused = check(message)) return *refused;
    Counter counter;
    Writer<Counter>{counter}.message(message);
    const uint64_t size = counter.size;
    if (size > kMessageMax) return refusal(a_kind(kind_of(message)), " of ", size, " bytes, at most ", kMessageMax);
    SplitEncoding split;
    if (counter.last_data.size() >= least_tail && !counter.last_data.empty()) split.tail = counter.last_data;
    // The tail is the last write: the filler stops where it begins.
    split.head.resize(size - split.tail.size());
    Filler filler{split.head.data(), split.head.data() + split.head.size()};
    Writer<Filler>{filler}.message(message);
    return split;
  } catch (const std::bad_alloc &) {
    return Error{"out of memory"};
  }
}

Result<std::vector<uint8_t>> encode(const Message &message) {
  auto split = encode_split(message, SIZE_MAX);
  if (!split) return split.error();
  return std::move(split.value().head);
}

}  // namespace rig::net::wire
