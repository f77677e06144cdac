// libFuzzer target of a machine link's authentication (net/auth_*.cpp):
// whatever bytes arrive, each parser answers a message or the reason it
// refuses one, never crashing, hanging or tripping a sanitizer.  The
// input goes to every reader: the agent's PROOF check, with a fixed key
// ring and challenge (machine_auth_fixture.hpp), and the client's
// CHALLENGE, ACCEPT and REFUSE readers, with a PROOF made for that
// challenge.  A message a parser accepts encodes back to the same bytes;
// an accepted PROOF names the ring's key and answers the ACCEPT its
// fields call for; a refused one tells the client "authentication
// failed" unless its bytes were malformed.
#include "auth_agent.hpp"
#include "auth_client.hpp"
#include "auth_mac.hpp"
#include "auth_messages.hpp"
#include "machine_auth_fixture.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

using namespace rig::net;
namespace fixture = rig::net::machine_auth_fixture;

namespace {

void require(bool holds) {
  if (!holds) std::abort();
}

bool same_bytes(const std::vector<uint8_t> &a, std::span<const uint8_t> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// The agent's side: the PROOF check agrees with the parser, and what it
// answers the client parses.
void check_agent(std::span<const uint8_t> input) {
  static const KeyRing ring = fixture::ring();
  Outcome<ProofMessage> parsed = parse_proof(input);
  if (parsed) require(same_bytes(encode_proof(parsed.value()), input));
  AgentChallenge challenge = fixture::challenge();
  Outcome<AgentAccepted, AgentRefused> checked = check_proof(challenge, ring, input);
  if (!checked) {
    const AgentRefused &refused = checked.error();
    require(parsed ? refused.reason == kAuthenticationFailed : refused.cause == parsed.error().message);
    require(parse_refuse(make_refuse(refused)).ok());
    return;
  }
  require(parsed.ok());
  const AgentAccepted &accepted = checked.value();
  require(accepted.key_id == fixture::kKeyId && accepted.key_id == parsed.value().key_id);
  require(accepted.hello == parsed.value().hello);
  Outcome<Mac> expected =
      agent_mac(fixture::secret().bytes(), parsed.value().client_nonce, challenge.nonce(), parsed.value().mac);
  require(expected.ok() && same_mac(expected.value(), accepted.accept_mac));
  Outcome<AcceptMessage> accept = parse_accept(make_accept(accepted));
  require(accept.ok() && same_mac(accept.value().mac, accepted.accept_mac));
}

// The client's side: its readers of the agent's messages.
void check_client(std::span<const uint8_t> input) {
  static const ClientKey key = fixture::client_key();
  static const ClientProof proof = std::move(make_proof(fixture::challenge().bytes(), key, {}).value());
  Outcome<ChallengeMessage> challenge = parse_challenge(input);
  if (challenge) {
    require(same_bytes(encode_challenge(challenge.value()), input));
    require(make_proof(input, key, input).ok());
  }
  Outcome<AcceptMessage> accept = parse_accept(input);
  if (accept) require(same_bytes(encode_accept(accept.value()), input));
  Outcome<RefuseMessage> refuse = parse_refuse(input);
  if (refuse) require(same_bytes(encode_refuse(refuse.value()), input));
  Outcome<AuthKind> kind = parse_answer_kind(input);
  if (check_answer(proof, input)) require(accept.ok() && kind.ok() && kind.value() == AuthKind::accept);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::span<const uint8_t> input(data, size);
  check_agent(input);
  check_client(input);
  return 0;
}
