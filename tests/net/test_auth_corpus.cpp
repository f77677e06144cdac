/* fuzz_machine_auth's seeds (fuzz/corpus-machine-auth, made by
 * fuzz/make_machine_auth_corpus.py from the protocol's text, apart from
 * net/'s code) are what their names say for the fuzz target's fixed key
 * ring and challenge: so the seeds keep reaching the code past each
 * parser, and a second writing of the protocol agrees with net/'s.
 *
 * Asserts issue #23's protocol (no rule ID in RULES.md): the macs of
 * "proof-accepted-*" as the agent checks them and of "accept-*" as the
 * client would; every seed parses and encodes back to its bytes.
 */
#include "auth_agent.hpp"
#include "auth_mac.hpp"
#include "auth_messages.hpp"
#include "machine_auth_fixture.hpp"

#include <criterion/criterion.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace rig::net;
namespace fixture = rig::net::machine_auth_fixture;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes seed(const std::string &name) {
  std::ifstream file(std::string(RIG_MACHINE_AUTH_CORPUS) + "/" + name, std::ios::binary);
  cr_assert(file.good(), "no seed %s in %s", name.c_str(), RIG_MACHINE_AUTH_CORPUS);
  return Bytes(std::istreambuf_iterator<char>(file), {});
}

}  // namespace

Test(corpus, accepted_proofs_accepted_with_their_hello) {
  KeyRing ring = fixture::ring();
  static const char request[] = "\x00\x01 the link's first request \xff";
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"proof-accepted-empty-hello", ""},
      {"proof-accepted-with-a-request", std::string(request, sizeof request - 1)},
  };
  for (const auto &[name, hello] : seeds) {
    AgentChallenge challenge = fixture::challenge();
    Bytes proof = seed(name);
    Outcome<AgentAccepted, AgentRefused> checked = check_proof(challenge, ring, proof);
    cr_assert(checked.ok(), "%s: %s", name.c_str(), checked.ok() ? "" : checked.error().cause.c_str());
    cr_assert_eq(checked.value().key_id, fixture::kKeyId);
    cr_assert(checked.value().hello == Bytes(hello.begin(), hello.end()), "%s: another hello", name.c_str());
    cr_assert(encode_proof(parse_proof(proof).value()) == proof);
  }
}

Test(corpus, unknown_key_ids_proof_refused_as_unknown) {
  KeyRing ring = fixture::ring();
  AgentChallenge challenge = fixture::challenge();
  Outcome<AgentAccepted, AgentRefused> checked = check_proof(challenge, ring, seed("proof-of-an-unknown-key-id"));
  cr_assert_not(checked.ok());
  cr_assert_eq(checked.error().cause, "unknown key id unknown.key_1");
}

// The ACCEPT the agent makes for the request's PROOF, byte for byte.
Test(corpus, accept_is_the_agents_for_the_request) {
  KeyRing ring = fixture::ring();
  AgentChallenge challenge = fixture::challenge();
  Outcome<AgentAccepted, AgentRefused> checked = check_proof(challenge, ring, seed("proof-accepted-with-a-request"));
  cr_assert(checked.ok());
  cr_assert(make_accept(checked.value()) == seed("accept-of-the-request"));
}

Test(corpus, challenge_and_refuse_parse_and_encode_back) {
  Bytes challenge = seed("challenge");
  cr_assert(challenge == fixture::challenge().bytes());
  Bytes refuse = seed("refuse-authentication-failed");
  Outcome<RefuseMessage> parsed = parse_refuse(refuse);
  cr_assert(parsed.ok());
  cr_assert_eq(parsed.value().reason, kAuthenticationFailed);
  cr_assert(encode_refuse(parsed.value()) == refuse);
}
