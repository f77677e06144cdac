#include "auth_agent.hpp"

#include "auth_mac.hpp"

#include <utility>

namespace rig::net {

AgentChallenge::AgentChallenge(const Nonce &nonce) : nonce_(nonce), bytes_(encode_challenge({nonce})) {}

AgentChallenge::AgentChallenge(AgentChallenge &&other) noexcept
    : nonce_(other.nonce_), bytes_(std::move(other.bytes_)), answered_(std::exchange(other.answered_, true)) {}

AgentChallenge &AgentChallenge::operator=(AgentChallenge &&other) noexcept {
  if (this != &other) {
    nonce_ = other.nonce_;
    bytes_ = std::move(other.bytes_);
    answered_ = std::exchange(other.answered_, true);
  }
  return *this;
}

Outcome<AgentChallenge> AgentChallenge::make() {
  Outcome<Nonce> nonce = random_nonce();
  if (!nonce) return nonce.error();
  return AgentChallenge(nonce.value());
}

AgentChallenge AgentChallenge::with_nonce(const Nonce &nonce) { return AgentChallenge(nonce); }

Outcome<AgentAccepted, AgentRefused> check_proof(AgentChallenge &challenge, const KeyRing &ring,
                                                 std::span<const uint8_t> bytes) {
  if (challenge.answered_)
    return AgentRefused{"the challenge was answered already: it answers one PROOF", kAuthenticationFailed};
  challenge.answered_ = true;
  Outcome<ProofMessage> proof = parse_proof(bytes);
  // What the parser says depends on the client's bytes alone.
  if (!proof) return AgentRefused{proof.error().message, proof.error().message};
  // An unknown key id costs the mac that a known one does, so that the
  // time of the answer does not tell whether the id exists.
  static constexpr uint8_t kStandIn[kSecretMin] = {};
  const Secret *secret = ring.find(proof.value().key_id);
  std::span<const uint8_t> key = secret != nullptr ? secret->bytes() : std::span<const uint8_t>(kStandIn);
  Outcome<Mac> expected = client_mac(key, challenge.nonce_, bytes.first(bytes.size() - Mac{}.size()));
  if (!expected) return AgentRefused{expected.error().message, kAuthenticationFailed};
  bool matches = same_mac(expected.value(), proof.value().mac);
  if (secret == nullptr) return AgentRefused{"unknown key id " + proof.value().key_id, kAuthenticationFailed};
  if (!matches) return AgentRefused{"bad mac for key id " + proof.value().key_id, kAuthenticationFailed};
  Outcome<Mac> accept = agent_mac(key, proof.value().client_nonce, challenge.nonce_, proof.value().mac);
  if (!accept) return AgentRefused{accept.error().message, kAuthenticationFailed};
  return AgentAccepted{std::move(proof.value().key_id), std::move(proof.value().hello), accept.value()};
}

std::vector<uint8_t> make_accept(const AgentAccepted &accepted) { return encode_accept({accepted.accept_mac}); }

std::vector<uint8_t> make_refuse(const AgentRefused &refused) {
  std::string reason = refused.reason.substr(0, kReasonMax);
  if (reason.empty()) reason = kAuthenticationFailed;
  // Printable ASCII alone, as REFUSE carries.
  for (char &c : reason)
    if (c < 0x20 || c >= 0x7f) c = '?';
  return encode_refuse({reason});
}

}  // namespace rig::net
