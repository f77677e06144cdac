// The messages of a machine link's authentication, as bytes: CHALLENGE
// (agent to client), PROOF (the client's first message), ACCEPT or REFUSE
// (agent to client).  Each begins with the magic "RIGA", the version and
// the message's kind (a byte each); integers are big-endian.
//
//   CHALLENGE  header, the agent's nonce (32)
//   PROOF      header, key id length (1), key id (1-64), the client's
//              nonce (32), hello length (4), hello (0-65536), mac (32)
//   ACCEPT     header, mac (32)
//   REFUSE     header, reason length (1), reason (1-255 bytes, printable
//              ASCII)
//
// The parsers are strict: every length exact, no byte read past the end,
// no trailing bytes; what they refuse they name with its numbers.
#pragma once

#include "outcome.hpp"
#include "keys.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rig::net {

constexpr std::array<uint8_t, 4> kAuthMagic = {'R', 'I', 'G', 'A'};
constexpr uint8_t kAuthVersion = 1;
constexpr size_t kAuthHeaderBytes = 6;
constexpr size_t kHelloMax = 64 * 1024;
constexpr size_t kReasonMax = 255;

enum class AuthKind : uint8_t { challenge = 1, proof = 2, accept = 3, refuse = 4 };

using Nonce = std::array<uint8_t, 32>;
using Mac = std::array<uint8_t, 32>;

struct ChallengeMessage {
  Nonce agent_nonce{};
};

struct ProofMessage {
  std::string key_id;
  Nonce client_nonce{};
  std::vector<uint8_t> hello;
  Mac mac{};
};

struct AcceptMessage {
  Mac mac{};
};

struct RefuseMessage {
  std::string reason;
};

// The most bytes a PROOF holds: the longest key id and hello.
constexpr size_t kProofMax = kAuthHeaderBytes + 1 + kKeyIdMax + 32 + 4 + kHelloMax + 32;

std::vector<uint8_t> encode_challenge(const ChallengeMessage &message);
// The PROOF's bytes up to its mac, which the mac covers; key_id and hello
// within their bounds.
std::vector<uint8_t> encode_proof_signed(const std::string &key_id, const Nonce &client_nonce,
                                         std::span<const uint8_t> hello);
// The whole PROOF: its signed bytes, then its mac.
std::vector<uint8_t> encode_proof(const ProofMessage &message);
std::vector<uint8_t> encode_accept(const AcceptMessage &message);
// reason of 1 to kReasonMax printable ASCII bytes.
std::vector<uint8_t> encode_refuse(const RefuseMessage &message);

Outcome<ChallengeMessage> parse_challenge(std::span<const uint8_t> bytes);
// A PROOF's key id is a key id (keys.hpp's key_id_problem).  Its mac
// covers every byte but its last 32 (the mac).
Outcome<ProofMessage> parse_proof(std::span<const uint8_t> bytes);
Outcome<AcceptMessage> parse_accept(std::span<const uint8_t> bytes);
Outcome<RefuseMessage> parse_refuse(std::span<const uint8_t> bytes);
// The kind of the agent's answer: ACCEPT or REFUSE, after a header with
// the magic and the version.
Outcome<AuthKind> parse_answer_kind(std::span<const uint8_t> bytes);

}  // namespace rig::net
