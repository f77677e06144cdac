#include "auth_messages.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace rig::net {
namespace {

const char *kind_name(uint8_t kind) {
  switch (static_cast<AuthKind>(kind)) {
    case AuthKind::challenge:
      return "CHALLENGE";
    case AuthKind::proof:
      return "PROOF";
    case AuthKind::accept:
      return "ACCEPT";
    case AuthKind::refuse:
      return "REFUSE";
  }
  return "no kind";
}

std::string kind_text(uint8_t kind) { return std::to_string(kind) + " (" + kind_name(kind) + ")"; }

std::string hex32(uint32_t word) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08X", word);
  return text;
}

bool printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// A message's header, with room for body_bytes more.
std::vector<uint8_t> start(AuthKind kind, size_t body_bytes) {
  std::vector<uint8_t> out{kAuthMagic[0], kAuthMagic[1], kAuthMagic[2],
                           kAuthMagic[3], kAuthVersion,  static_cast<uint8_t>(kind)};
  out.reserve(kAuthHeaderBytes + body_bytes);
  return out;
}

template <size_t N>
void put(std::vector<uint8_t> &out, const std::array<uint8_t, N> &bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// Reads one message's fields in turn, each only after checking that its
// bytes are there; failures name the message, the field and the numbers.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const char *message) : bytes_(bytes), message_(message) {}

  // The next n bytes, which field names, or nullopt with failure() set.
  std::optional<std::span<const uint8_t>> take(size_t n, const char *field) {
    if (bytes_.size() - at_ < n) {
      fail("is truncated: its " + std::string(field) + " needs " + std::to_string(n) + " bytes at byte " +
           std::to_string(at_) + ", " + std::to_string(bytes_.size() - at_) + " are left");
      return std::nullopt;
    }
    std::span<const uint8_t> field_bytes = bytes_.subspan(at_, n);
    at_ += n;
    return field_bytes;
  }

  std::optional<uint32_t> take_number(size_t n, const char *field) {
    auto bytes = take(n, field);
    if (!bytes) return std::nullopt;
    uint32_t number = 0;
    for (uint8_t b : *bytes) number = number << 8 | b;
    return number;
  }

  template <size_t N>
  bool take_into(std::array<uint8_t, N> &out, const char *field) {
    auto bytes = take(N, field);
    if (bytes) std::copy(bytes->begin(), bytes->end(), out.begin());
    return bytes.has_value();
  }

  // The magic, the version and a kind that accepted allows.
  std::optional<AuthKind> header(bool (*accepted)(AuthKind), const char *expected) {
    auto magic = take_number(kAuthMagic.size(), "magic");
    if (!magic) return std::nullopt;
    uint32_t want = uint32_t{kAuthMagic[0]} << 24 | kAuthMagic[1] << 16 | kAuthMagic[2] << 8 | kAuthMagic[3];
    if (*magic != want) return fail("has magic " + hex32(*magic) + ", expected " + hex32(want) + " (\"RIGA\")");
    auto version = take_number(1, "version");
    if (!version) return std::nullopt;
    if (*version != kAuthVersion)
      return fail("has version " + std::to_string(*version) + ", expected " + std::to_string(kAuthVersion));
    auto kind = take_number(1, "kind");
    if (!kind) return std::nullopt;
    if (!accepted(static_cast<AuthKind>(*kind)))
      return fail("has kind " + kind_text(static_cast<uint8_t>(*kind)) + ", expected " + expected);
    return static_cast<AuthKind>(*kind);
  }

  // Whether every byte was read; failure() set when not.
  bool finish(const char *last_field) {
    if (at_ == bytes_.size()) return true;
    size_t left = bytes_.size() - at_;
    fail("has " + std::to_string(left) + (left == 1 ? " trailing byte" : " trailing bytes") + " after its " +
         last_field + " (at byte " + std::to_string(at_) + ")");
    return false;
  }

  std::nullopt_t fail(const std::string &what) {
    failure_ = Failure{std::string(message_) + " of " + std::to_string(bytes_.size()) + " bytes " + what};
    return std::nullopt;
  }

  const Failure &failure() const { return failure_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
  const char *message_;
  Failure failure_;
};

template <AuthKind K>
bool is(AuthKind kind) {
  return kind == K;
}

bool is_answer(AuthKind kind) { return kind == AuthKind::accept || kind == AuthKind::refuse; }

}  // namespace

std::vector<uint8_t> encode_challenge(const ChallengeMessage &message) {
  std::vector<uint8_t> out = start(AuthKind::challenge, message.agent_nonce.size());
  put(out, message.agent_nonce);
  return out;
}

std::vector<uint8_t> encode_proof_signed(const std::string &key_id, const Nonce &client_nonce,
                                         std::span<const uint8_t> hello) {
  std::vector<uint8_t> out =
      start(AuthKind::proof, 1 + key_id.size() + client_nonce.size() + 4 + hello.size() + Mac{}.size());
  out.push_back(static_cast<uint8_t>(key_id.size()));
  out.insert(out.end(), key_id.begin(), key_id.end());
  put(out, client_nonce);
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(hello.size() >> shift));
  out.insert(out.end(), hello.begin(), hello.end());
  return out;
}

std::vector<uint8_t> encode_proof(const ProofMessage &message) {
  std::vector<uint8_t> out = encode_proof_signed(message.key_id, message.client_nonce, message.hello);
  put(out, message.mac);
  return out;
}

std::vector<uint8_t> encode_accept(const AcceptMessage &message) {
  std::vector<uint8_t> out = start(AuthKind::accept, message.mac.size());
  put(out, message.mac);
  return out;
}

std::vector<uint8_t> encode_refuse(const RefuseMessage &message) {
  std::vector<uint8_t> out = start(AuthKind::refuse, 1 + message.reason.size());
  out.push_back(static_cast<uint8_t>(message.reason.size()));
  out.insert(out.end(), message.reason.begin(), message.reason.end());
  return out;
}

Outcome<ChallengeMessage> parse_challenge(std::span<const uint8_t> bytes) {
  Reader in(bytes, "CHALLENGE");
  ChallengeMessage message;
  if (!in.header(is<AuthKind::challenge>, kind_text(1).c_str()) || !in.take_into(message.agent_nonce, "nonce") ||
      !in.finish("nonce"))
    return in.failure();
  return message;
}

Outcome<ProofMessage> parse_proof(std::span<const uint8_t> bytes) {
  Reader in(bytes, "PROOF");
  if (bytes.size() > kProofMax) {
    in.fail("is more than a PROOF holds (" + std::to_string(kProofMax) + " bytes)");
    return in.failure();
  }
  ProofMessage message;
  if (!in.header(is<AuthKind::proof>, kind_text(2).c_str())) return in.failure();
  auto id_size = in.take_number(1, "key id length");
  if (!id_size) return in.failure();
  auto id = in.take(*id_size, "key id");
  if (!id) return in.failure();
  message.key_id.assign(id->begin(), id->end());
  if (std::string problem = key_id_problem(message.key_id); !problem.empty()) {
    in.fail("names no key id: " + problem);
    return in.failure();
  }
  if (!in.take_into(message.client_nonce, "nonce")) return in.failure();
  auto hello_size = in.take_number(4, "hello length");
  if (!hello_size) return in.failure();
  if (*hello_size > kHelloMax) {
    in.fail("has a hello payload of " + std::to_string(*hello_size) + " bytes, more than " + std::to_string(kHelloMax));
    return in.failure();
  }
  auto hello = in.take(*hello_size, "hello payload");
  if (!hello || !in.take_into(message.mac, "mac") || !in.finish("mac")) return in.failure();
  message.hello.assign(hello->begin(), hello->end());
  return message;
}

Outcome<AcceptMessage> parse_accept(std::span<const uint8_t> bytes) {
  Reader in(bytes, "ACCEPT");
  AcceptMessage message;
  if (!in.header(is<AuthKind::accept>, kind_text(3).c_str()) || !in.take_into(message.mac, "mac") || !in.finish("mac"))
    return in.failure();
  return message;
}

Outcome<RefuseMessage> parse_refuse(std::span<const uint8_t> bytes) {
  Reader in(bytes, "REFUSE");
  if (!in.header(is<AuthKind::refuse>, kind_text(4).c_str())) return in.failure();
  auto size = in.take_number(1, "reason length");
  if (!size) return in.failure();
  if (*size == 0) {
    in.fail("has an empty reason");
    return in.failure();
  }
  auto reason = in.take(*size, "reason");
  if (!reason || !in.finish("reason")) return in.failure();
  RefuseMessage message{std::string(reason->begin(), reason->end())};
  if (!printable(message.reason)) {
    in.fail("has a reason with bytes outside printable ASCII");
    return in.failure();
  }
  return message;
}

Outcome<AuthKind> parse_answer_kind(std::span<const uint8_t> bytes) {
  Reader in(bytes, "answer");
  std::string expected = kind_text(3) + " or " + kind_text(4);
  auto kind = in.header(is_answer, expected.c_str());
  if (!kind) return in.failure();
  return *kind;
}

}  // namespace rig::net
