#include "auth_client.hpp"

#include "auth_mac.hpp"

namespace rig::net {

Outcome<ClientProof> make_proof(std::span<const uint8_t> challenge, const ClientKey &key,
                                std::span<const uint8_t> hello) {
  Outcome<ChallengeMessage> message = parse_challenge(challenge);
  if (!message) return message.error();
  if (std::string problem = key_id_problem(key.id); !problem.empty()) return Failure{problem};
  if (hello.size() > kHelloMax)
    return Failure{"a hello payload of " + std::to_string(hello.size()) + " bytes, more than " +
                   std::to_string(kHelloMax)};
  Outcome<Nonce> nonce = random_nonce();
  if (!nonce) return nonce.error();
  ClientProof proof;
  proof.bytes_ = encode_proof_signed(key.id, nonce.value(), hello);
  const Nonce &agent_nonce = message.value().agent_nonce;
  Outcome<Mac> mac = client_mac(key.secret.bytes(), agent_nonce, proof.bytes_);
  if (!mac) return mac.error();
  Outcome<Mac> accept = agent_mac(key.secret.bytes(), nonce.value(), agent_nonce, mac.value());
  if (!accept) return accept.error();
  proof.bytes_.insert(proof.bytes_.end(), mac.value().begin(), mac.value().end());
  proof.key_id_ = key.id;
  proof.accept_mac_ = accept.value();
  return proof;
}

Outcome<Done> check_answer(const ClientProof &proof, std::span<const uint8_t> answer) {
  Outcome<AuthKind> kind = parse_answer_kind(answer);
  if (!kind) return kind.error();
  if (kind.value() == AuthKind::refuse) {
    Outcome<RefuseMessage> refuse = parse_refuse(answer);
    if (!refuse) return refuse.error();
    return Failure{"the agent refused the PROOF of key id " + proof.key_id_ + ": " + refuse.value().reason};
  }
  Outcome<AcceptMessage> accept = parse_accept(answer);
  if (!accept) return accept.error();
  if (!same_mac(accept.value().mac, proof.accept_mac_))
    return Failure{"the ACCEPT's mac is not key id " + proof.key_id_ +
                   "'s: the agent does not show that it holds the key"};
  return Done{};
}

}  // namespace rig::net
