// The agent's side of a machine link's authentication: it sends a
// CHALLENGE, checks the client's PROOF against its key ring and answers
// ACCEPT, which shows the client that the agent holds the key too, or
// REFUSE.
#pragma once

#include "auth_messages.hpp"
#include "outcome.hpp"
#include "keys.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rig::net {

// A PROOF the key ring's key key_id signed for this challenge: its hello
// payload, and the ACCEPT's mac.
struct AgentAccepted {
  std::string key_id;
  std::vector<uint8_t> hello;
  Mac accept_mac{};
};

// A PROOF refused: cause is what was wrong, for the agent's log (unknown
// key id NAME, bad mac for key id NAME, the parser's reason); reason is
// what REFUSE tells the client, which never says whether a key id exists.
struct AgentRefused {
  std::string cause;
  std::string reason;
};

// One connection's challenge: its nonce and the CHALLENGE that carries it.
// It answers one PROOF: a second one is refused.
class AgentChallenge {
 public:
  // A fresh nonce from RAND_bytes.
  static Outcome<AgentChallenge> make();
  // A given nonce, for tests and fuzzing: a connection's challenge is
  // made by make().
  static AgentChallenge with_nonce(const Nonce &nonce);

  // Moved, never copied: a copy would answer a second PROOF.  The
  // challenge moved from answers none.
  AgentChallenge(AgentChallenge &&other) noexcept;
  AgentChallenge &operator=(AgentChallenge &&other) noexcept;
  AgentChallenge(const AgentChallenge &) = delete;
  AgentChallenge &operator=(const AgentChallenge &) = delete;

  const std::vector<uint8_t> &bytes() const { return bytes_; }
  const Nonce &nonce() const { return nonce_; }

 private:
  friend Outcome<AgentAccepted, AgentRefused> check_proof(AgentChallenge &challenge, const KeyRing &ring,
                                                          std::span<const uint8_t> proof);
  explicit AgentChallenge(const Nonce &nonce);

  Nonce nonce_;
  std::vector<uint8_t> bytes_;
  bool answered_ = false;
};

// The reason a client reads for an unknown key id and for a bad mac alike.
constexpr const char *kAuthenticationFailed = "authentication failed";

// Checks proof, the client's first message, against challenge and ring.
Outcome<AgentAccepted, AgentRefused> check_proof(AgentChallenge &challenge, const KeyRing &ring,
                                                 std::span<const uint8_t> proof);

std::vector<uint8_t> make_accept(const AgentAccepted &accepted);
// REFUSE with refused's reason, cut to kReasonMax bytes.
std::vector<uint8_t> make_refuse(const AgentRefused &refused);

}  // namespace rig::net
