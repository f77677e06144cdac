// The messages of the link to other machines (rig-remote-proxy.txt): what
// a client and an agent send each other, as C++ values.  wire_encode and
// wire_decode turn them into bytes and back; wire_bounds holds each
// field's limits, wire_check the rules the values must keep.
//
// On the wire everything is little-endian and fixed-width, with no padding
// between fields, so that each message has one encoding.  A message starts
// with its kind (u16, which the transport also uses as its active
// message's id) and the wire version (u16, kWireVersion).  A text or a run
// of bytes is its length, then its bytes: text lengths are u32, lengths
// of data (an image, a PUT's bytes, a launch's parameters, BYTES') u64.
// A list is its count (u32), then its items.  Each struct below states
// the fields that follow its kind and version, in order.
//
// Texts and data are views, never owned: a decoded message's point into
// the decoder's input, an encoded one's into the caller's memory.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

namespace rig::net::wire {

enum class Kind : uint16_t {
  Devices = 1,
  Request = 2,
  Answer = 3,
  Release = 4,
  Handover = 5,
  Report = 6,
  Bytes = 7,
  Failure = 8,
  Close = 9,
};

// Bytes a message carries, such as a copy's or an image's.
struct Data {
  std::span<const uint8_t> bytes;

  uint64_t size() const { return bytes.size(); }
  // The same bytes, wherever they lie.
  friend bool operator==(const Data &a, const Data &b);
};

// ---- DEVICES (agent to client, once): the devices the agent serves.

// One device's account: id u32, name, arch, budget u64, cache_bytes u64,
// reach (list of u32).  Id 0 is the machine's host; reach lists the ids
// whose own memory this device's work reaches (PROXY-65).
struct Account {
  uint32_t id = 0;
  std::string_view name;
  std::string_view arch;
  uint64_t budget = 0;
  uint64_t cache_bytes = 0;
  std::vector<uint32_t> reach;
  bool operator==(const Account &) const = default;
};

// A list of accounts.
struct Devices {
  std::vector<Account> accounts;
  bool operator==(const Devices &) const = default;
};

// ---- REQUEST (client to agent): number u64, op u16, device u32, object
// u64, then the op's fields.  The agent answers with an ANSWER of the same
// number; object is the id the client names for what the request makes.

enum class Op : uint16_t {
  Open = 1,
  Alloc = 2,
  MapPeer = 3,
  Image = 4,
  Prepare = 5,
  Entry = 6,
};

// OPEN: configuration (text).
struct Open {
  std::string_view configuration;
  bool operator==(const Open &) const = default;
};

// ALLOC: memory kind u32, bytes u64.
struct Alloc {
  uint32_t memory = 0;
  uint64_t bytes = 0;
  bool operator==(const Alloc &) const = default;
};

// MAP_PEER: source object u64, which the new object maps.
struct MapPeer {
  uint64_t source = 0;
  bool operator==(const MapPeer &) const = default;
};

// IMAGE: the image's bytes (data).
struct Image {
  Data image;
  bool operator==(const Image &) const = default;
};

// PREPARE and ENTRY: image object u64, function name (text).
struct FunctionOfImage {
  uint64_t image = 0;
  std::string_view function;
  bool operator==(const FunctionOfImage &) const = default;
};
struct Prepare : FunctionOfImage {};
struct Entry : FunctionOfImage {};

// In the order of Op.
using Operation = std::variant<Open, Alloc, MapPeer, Image, Prepare, Entry>;

struct Request {
  uint64_t number = 0;
  uint32_t device = 0;
  uint64_t object = 0;
  Operation op;
  bool operator==(const Request &) const = default;
};

// ---- ANSWER (agent to client): number u64, status i32 (a rig status
// code), value u64, detail u64, why (text).
struct Answer {
  uint64_t number = 0;
  int32_t status = 0;
  uint64_t value = 0;
  uint64_t detail = 0;
  std::string_view why;
  bool operator==(const Answer &) const = default;
};

// ---- RELEASE (client to agent): what u16, id u64 (PROXY-61, PROXY-79).
enum class Released : uint16_t {
  Object = 1,
  Image = 2,
};
struct Release {
  Released what = Released::Object;
  uint64_t id = 0;
  bool operator==(const Release &) const = default;
};

// ---- HANDOVER (client to agent): the work of one value of a proxy's
// timeline (PROXY-45): device u32, value u64, waits (list of Wait), parts
// (list of Part).  Each part is its kind u16, then its fields.

// A wait: device u32 (the agent's id of the word's device), value u64.
struct Wait {
  uint32_t device = 0;
  uint64_t value = 0;
  bool operator==(const Wait &) const = default;
};

enum class PartKind : uint16_t {
  Copy = 1,
  Put = 2,
  Get = 3,
  Fill = 4,
  Launch = 5,
  Words = 6,
};

// A place in an object: its id u64, the offset u64 of a byte in it.
struct Place {
  uint64_t object = 0;
  uint64_t offset = 0;
  bool operator==(const Place &) const = default;
};

// COPY, object to object: source (place), target (place), bytes u64.
struct Copy {
  Place source;
  Place target;
  uint64_t bytes = 0;
  bool operator==(const Copy &) const = default;
};

// PUT the client's bytes into an object: target (place), the bytes
// (data).
struct Put {
  Place target;
  Data data;
  bool operator==(const Put &) const = default;
};

// GET an object's bytes to the client, which the agent sends in BYTES
// messages (PROXY-37): source (place), bytes u64.
struct Get {
  Place source;
  uint64_t bytes = 0;
  bool operator==(const Get &) const = default;
};

// FILL: target (place), bytes u64, byte u8.
struct Fill {
  Place target;
  uint64_t bytes = 0;
  uint8_t byte = 0;
  bool operator==(const Fill &) const = default;
};

// A launch's reference to an object: the place, then parameter offset
// u32, where the agent writes the address of the place's byte into the
// parameters (8 bytes).
struct Ref {
  Place place;
  uint32_t parameter_offset = 0;
  bool operator==(const Ref &) const = default;
};

// LAUNCH: image u64, function u64 (the object an ENTRY made), grid x y z
// (u32 each), group x y z (u32 each), shared bytes u32, parameters
// (data), refs (list of Ref).
struct Launch {
  uint64_t image = 0;
  uint64_t function = 0;
  std::array<uint32_t, 3> grid{};
  std::array<uint32_t, 3> group{};
  uint32_t shared_bytes = 0;
  Data parameters;
  std::vector<Ref> refs;
  bool operator==(const Launch &) const = default;
};

// A word a WORDS part writes: value u64 into the 8 bytes at place (its
// offset a multiple of 8).
struct Word {
  Place place;
  uint64_t value = 0;
  bool operator==(const Word &) const = default;
};

// WORDS, run by the machine's host alone (PROXY-32, PROXY-36, PROXY-41):
// writes (list of Word), each in order, after every earlier part of the
// hand-over and before every later one (rig's RIG_WORDS).
struct Words {
  std::vector<Word> writes;
  bool operator==(const Words &) const = default;
};

// In the order of PartKind.
using Part = std::variant<Copy, Put, Get, Fill, Launch, Words>;

struct Handover {
  uint32_t device = 0;
  uint64_t value = 0;
  std::vector<Wait> waits;
  std::vector<Part> parts;
  bool operator==(const Handover &) const = default;
};

// ---- REPORT (agent to client): device u32, value u64, every value up to
// it done (PROXY-03).
struct Report {
  uint32_t device = 0;
  uint64_t value = 0;
  bool operator==(const Report &) const = default;
};

// ---- BYTES (agent to client), bytes of a GET: device u32, value u64,
// part u32 (the GET's index in its hand-over), offset u64 within the
// part's bytes, the bytes (data).
struct Bytes {
  uint32_t device = 0;
  uint64_t value = 0;
  uint32_t part = 0;
  uint64_t offset = 0;
  Data data;
  bool operator==(const Bytes &) const = default;
};

// ---- FAILURE (either way): the job's root cause (text); the job fails.
struct Failure {
  std::string_view root_cause;
  bool operator==(const Failure &) const = default;
};

// ---- CLOSE (client to agent): nothing more.
struct Close {
  bool operator==(const Close &) const = default;
};

// In the order of Kind.
using Message = std::variant<Devices, Request, Answer, Release, Handover, Report, Bytes, Failure, Close>;

Kind kind_of(const Message &message);
// "DEVICES", "REQUEST", ..., or nullptr for a kind the wire lacks.
const char *kind_name(uint16_t kind);
// "OPEN", "ALLOC", ..., or nullptr.
const char *op_name(uint16_t op);
// "COPY", "PUT", ..., or nullptr.
const char *part_name(uint16_t part);

}  // namespace rig::net::wire
