// The client's side of a machine link's authentication: from the agent's
// CHALLENGE it makes the PROOF, its first message, which carries the link
// protocol's first request as its hello payload; then it checks that the
// agent's ACCEPT shows the same key, or reads the agent's REFUSE.
#pragma once

#include "auth_messages.hpp"
#include "outcome.hpp"
#include "keys.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rig::net {

// A PROOF made for one CHALLENGE, and what the agent's ACCEPT must show.
class ClientProof {
 public:
  // The PROOF to send.
  const std::vector<uint8_t> &bytes() const { return bytes_; }

 private:
  friend Outcome<ClientProof> make_proof(std::span<const uint8_t> challenge, const ClientKey &key,
                                         std::span<const uint8_t> hello);
  friend Outcome<Done> check_answer(const ClientProof &proof, std::span<const uint8_t> answer);
  ClientProof() = default;

  std::vector<uint8_t> bytes_;
  std::string key_id_;
  Mac accept_mac_{};
};

// The PROOF, under key, of the CHALLENGE challenge, with hello (at most
// kHelloMax bytes) as its payload and a fresh nonce of RAND_bytes.
Outcome<ClientProof> make_proof(std::span<const uint8_t> challenge, const ClientKey &key,
                                std::span<const uint8_t> hello);

// Done when answer is the ACCEPT of proof's key; otherwise why not: the
// REFUSE's reason, or an ACCEPT that shows no key of proof's, or the
// parser's reason.
Outcome<Done> check_answer(const ClientProof &proof, std::span<const uint8_t> answer);

}  // namespace rig::net
