#include "wire_encode.hpp"

#include "wire_bounds.hpp"
#include "wire_check.hpp"
#include "wire_words.hpp"

#include <cstring>
#include <new>
#include <string_view>
#include <type_traits>
#include <variant>

namespace rig::net::wire {
namespace {

// Where the bytes go: counted, or copied into memory sized for them.
struct Counter {
  uint64_t size = 0;
  void put(const uint8_t *, size_t n) { size += n; }
};
struct Filler {
  uint8_t *at;
  void put(const uint8_t *bytes, size_t n) {
    if (n == 0) return;  // an empty span's data may be null
    std::memcpy(at, bytes, n);
    at += n;
  }
};

// Fields in their encoding: little-endian, fixed-width.
template <class Sink>
struct Writer {
  Sink &sink;

  template <class N>
  void number(N value) {
    uint8_t bytes[sizeof(N)];
    auto bits = static_cast<std::make_unsigned_t<N>>(value);
    for (size_t i = 0; i < sizeof(N); i++) bytes[i] = static_cast<uint8_t>(bits >> (8 * i));
    sink.put(bytes, sizeof(N));
  }
  void u8(uint8_t v) { number(v); }
  void u16(uint16_t v) { number(v); }
  void u32(uint32_t v) { number(v); }
  void u64(uint64_t v) { number(v); }
  void i32(int32_t v) { number(v); }
  // Lengths and counts of what the check bounds: they fit.
  void count(size_t n) { u32(static_cast<uint32_t>(n)); }
  void text(std::string_view t) {
    count(t.size());
    sink.put(reinterpret_cast<const uint8_t *>(t.data()), t.size());
  }
  void data(const Data &d) {
    u64(d.size());
    sink.put(d.bytes.data(), d.bytes.size());
  }

  void fields(const Devices &m) {
    count(m.accounts.size());
    for (const Account &a : m.accounts) {
      u32(a.id);
      text(a.name);
      text(a.arch);
      u64(a.budget);
      u64(a.cache_bytes);
      count(a.reach.size());
      for (uint32_t id : a.reach) u32(id);
    }
  }
  void fields(const Open &op) { text(op.configuration); }
  void fields(const Alloc &op) {
    u32(op.memory);
    u64(op.bytes);
  }
  void fields(const MapPeer &op) { u64(op.source); }
  void fields(const Image &op) { data(op.image); }
  void fields(const FunctionOfImage &op) {
    u64(op.image);
    text(op.function);
  }
  void fields(const Request &m) {
    u64(m.number);
    u16(static_cast<uint16_t>(m.op.index() + 1));
    u32(m.device);
    u64(m.object);
    std::visit([this](const auto &op) { this->fields(op); }, m.op);
  }
  void fields(const Answer &m) {
    u64(m.number);
    i32(m.status);
    u64(m.value);
    u64(m.detail);
    text(m.why);
  }
  void fields(const Release &m) {
    u16(static_cast<uint16_t>(m.what));
    u64(m.id);
  }
  void fields(const Place &place) {
    u64(place.object);
    u64(place.offset);
  }
  void fields(const Copy &p) {
    fields(p.source);
    fields(p.target);
    u64(p.bytes);
  }
  void fields(const Put &p) {
    fields(p.target);
    data(p.data);
  }
  void fields(const Get &p) {
    fields(p.source);
    u64(p.bytes);
  }
  void fields(const Fill &p) {
    fields(p.target);
    u64(p.bytes);
    u8(p.byte);
  }
  void fields(const Launch &p) {
    u64(p.image);
    u64(p.function);
    for (uint32_t n : p.grid) u32(n);
    for (uint32_t n : p.group) u32(n);
    u32(p.shared_bytes);
    count(p.parameters.size());
    sink.put(p.parameters.bytes.data(), p.parameters.bytes.size());
    count(p.refs.size());
    for (const Ref &ref : p.refs) {
      fields(ref.place);
      u32(ref.parameter_offset);
    }
  }
  void fields(const Handover &m) {
    u32(m.device);
    u64(m.value);
    count(m.waits.size());
    for (const Wait &w : m.waits) {
      u32(w.device);
      u64(w.value);
    }
    count(m.parts.size());
    for (const Part &part : m.parts) {
      u16(static_cast<uint16_t>(part.index() + 1));
      std::visit([this](const auto &p) { this->fields(p); }, part);
    }
  }
  void fields(const Report &m) {
    u32(m.device);
    u64(m.value);
  }
  void fields(const Bytes &m) {
    u32(m.device);
    u64(m.value);
    u32(m.part);
    u64(m.offset);
    data(m.data);
  }
  void fields(const Failure &m) { text(m.root_cause); }
  void fields(const Close &) {}

  void message(const Message &m) {
    u16(static_cast<uint16_t>(kind_of(m)));
    u16(kWireVersion);
    std::visit([this](const auto &v) { this->fields(v); }, m);
  }
};

}  // namespace

uint64_t encoded_size(const Message &message) {
  Counter counter;
  Writer<Counter>{counter}.message(message);
  return counter.size;
}

Result<std::vector<uint8_t>> encode(const Message &message) {
  try {
    if (auto refused = check(message)) return *refused;
    uint64_t size = encoded_size(message);
    if (size > kMessageMax) return refusal(a_kind(kind_of(message)), " of ", size, " bytes, at most ", kMessageMax);
    std::vector<uint8_t> bytes(size);
    Filler filler{bytes.data()};
    Writer<Filler>{filler}.message(message);
    return bytes;
  } catch (const std::bad_alloc &) {
    return Error{"out of memory"};
  }
}

}  // namespace rig::net::wire
