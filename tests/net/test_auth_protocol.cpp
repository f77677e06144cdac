/* Both sides of a machine link's authentication (net/auth_agent,
 * net/auth_client, net/auth_messages): CHALLENGE, PROOF, ACCEPT or REFUSE.
 *
 * Asserts issue #23's protocol (no rule ID in RULES.md: the spec leaves the
 * link's authentication to the implementation): the right key is accepted
 * on both sides with the hello payload intact; the macs are
 * HMAC-SHA256(key, "rig-machine-client-1" || agent's nonce || the PROOF
 * before its mac) and HMAC-SHA256(key, "rig-machine-agent-1" || client's
 * nonce || agent's nonce || the PROOF's mac); a wrong key, an unknown key
 * id, a replayed or changed PROOF and a forged ACCEPT are refused, and the
 * client's reason does not tell an unknown key id from a bad mac while the
 * agent's cause does; the parsers refuse truncated, oversized,
 * trailing-byte, wrong-magic, wrong-version and wrong-kind messages naming
 * their numbers.
 */
#include "auth_agent.hpp"
#include "auth_client.hpp"
#include "auth_messages.hpp"

#include <criterion/criterion.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <functional>
#include <string>
#include <vector>

using namespace rig::net;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes bytes_of(const std::string &text) { return Bytes(text.begin(), text.end()); }

Secret secret_of(const std::string &text) { return std::move(Secret::of(bytes_of(text)).value()); }

const std::string kAlphaSecret = "the alpha key's secret, 40 bytes long...";
const std::string kBetaSecret = "the beta key's secret, another 40 bytes.";

KeyRing ring() {
  KeyRing keys;
  cr_assert(keys.add("alpha", secret_of(kAlphaSecret)).ok());
  cr_assert(keys.add("beta", secret_of(kBetaSecret)).ok());
  return keys;
}

ClientKey client_key(const std::string &id, const std::string &secret) { return {id, secret_of(secret)}; }

// A hello payload with every byte value.
Bytes hello() {
  Bytes payload(1000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  return payload;
}

Nonce nonce_of(uint8_t fill) {
  Nonce nonce;
  nonce.fill(fill);
  return nonce;
}

ClientProof proof_for(const AgentChallenge &challenge, const ClientKey &key, const Bytes &payload = hello()) {
  Outcome<ClientProof> proof = make_proof(challenge.bytes(), key, payload);
  cr_assert(proof.ok(), "%s", proof.ok() ? "" : proof.error().message.c_str());
  return std::move(proof.value());
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

void assert_names(const std::string &message, const std::vector<std::string> &parts) {
  for (const std::string &part : parts)
    cr_assert(contains(message, part), "\"%s\" does not name \"%s\"", message.c_str(), part.c_str());
}

// The agent's refusal of proof, which must be refused.
AgentRefused refusal(AgentChallenge &challenge, const KeyRing &keys, const Bytes &proof) {
  Outcome<AgentAccepted, AgentRefused> checked = check_proof(challenge, keys, proof);
  cr_assert_not(checked.ok(), "the agent accepted the PROOF");
  return checked.error();
}

Mac hmac(const std::string &key, const Bytes &data) {
  Mac mac{};
  unsigned size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data.data(), data.size(), mac.data(), &size);
  cr_assert_eq(size, 32u);
  return mac;
}

Bytes cat(std::initializer_list<std::span<const uint8_t>> parts) {
  Bytes out;
  for (auto part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// The failure of a parser's outcome, which must be one.
template <class T>
std::string failure_of(const Outcome<T> &parsed) {
  cr_assert_not(parsed.ok(), "a malformed message was parsed");
  return parsed.error().message;
}

// One message of each kind, well formed, with the failure its parser
// answers for other bytes.
using Parser = std::function<std::string(const Bytes &)>;
std::vector<std::pair<Bytes, Parser>> one_of_each(const AgentChallenge &challenge, const ClientProof &proof) {
  return {
      {challenge.bytes(), [](const Bytes &b) { return failure_of(parse_challenge(b)); }},
      {proof.bytes(), [](const Bytes &b) { return failure_of(parse_proof(b)); }},
      {encode_accept({}), [](const Bytes &b) { return failure_of(parse_accept(b)); }},
      {encode_refuse({"no"}), [](const Bytes &b) { return failure_of(parse_refuse(b)); }},
  };
}

}  // namespace

// The right key: the agent names it and hands over the hello payload
// intact; the client accepts the agent's ACCEPT.
Test(auth, right_key_accepted_on_both_sides_with_the_hello_intact) {
  KeyRing keys = ring();
  AgentChallenge challenge = std::move(AgentChallenge::make().value());
  ClientKey key = client_key("beta", kBetaSecret);
  ClientProof proof = proof_for(challenge, key);
  Outcome<AgentAccepted, AgentRefused> accepted = check_proof(challenge, keys, proof.bytes());
  cr_assert(accepted.ok(), "%s", accepted.ok() ? "" : accepted.error().cause.c_str());
  cr_assert_eq(accepted.value().key_id, "beta");
  cr_assert(accepted.value().hello == hello());
  Outcome<Done> answer = check_answer(proof, make_accept(accepted.value()));
  cr_assert(answer.ok(), "%s", answer.ok() ? "" : answer.error().message.c_str());
}

// An empty hello and the largest PROOF (a 64-byte key id, a 64 KiB hello).
Test(auth, empty_hello_and_largest_proof_accepted) {
  KeyRing keys = ring();
  std::string long_id(64, 'L');
  cr_assert(keys.add(long_id, secret_of(kAlphaSecret)).ok());
  for (const auto &[id, payload] :
       {std::pair{std::string("alpha"), Bytes{}}, std::pair{long_id, Bytes(kHelloMax, 9)}}) {
    AgentChallenge challenge = std::move(AgentChallenge::make().value());
    ClientProof proof = proof_for(challenge, client_key(id, kAlphaSecret), payload);
    if (id == long_id) cr_assert_eq(proof.bytes().size(), kProofMax);
    Outcome<AgentAccepted, AgentRefused> accepted = check_proof(challenge, keys, proof.bytes());
    cr_assert(accepted.ok(), "%s", accepted.ok() ? "" : accepted.error().cause.c_str());
    cr_assert(accepted.value().hello == payload);
  }
}

// Both macs are the brief's formulas, computed here with OpenSSL's HMAC.
Test(auth, macs_are_hmac_sha256_of_the_labelled_nonces_and_bytes) {
  KeyRing keys = ring();
  AgentChallenge challenge = AgentChallenge::with_nonce(nonce_of(0x5A));
  ClientProof proof = proof_for(challenge, client_key("alpha", kAlphaSecret));
  Outcome<ProofMessage> parsed = parse_proof(proof.bytes());
  cr_assert(parsed.ok());
  Bytes signed_part(proof.bytes().begin(), proof.bytes().end() - 32);
  Mac client = hmac(kAlphaSecret, cat({bytes_of("rig-machine-client-1"), challenge.nonce(), signed_part}));
  cr_assert(client == parsed.value().mac, "the PROOF's mac is not HMAC-SHA256 of the client's label");
  Outcome<AgentAccepted, AgentRefused> accepted = check_proof(challenge, keys, proof.bytes());
  cr_assert(accepted.ok());
  Mac agent =
      hmac(kAlphaSecret,
           cat({bytes_of("rig-machine-agent-1"), parsed.value().client_nonce, challenge.nonce(), parsed.value().mac}));
  cr_assert(agent == accepted.value().accept_mac, "the ACCEPT's mac is not HMAC-SHA256 of the agent's label");
}

Test(auth, wrong_key_refused_as_bad_mac) {
  KeyRing keys = ring();
  AgentChallenge challenge = std::move(AgentChallenge::make().value());
  ClientProof proof = proof_for(challenge, client_key("alpha", kBetaSecret));
  AgentRefused refused = refusal(challenge, keys, proof.bytes());
  assert_names(refused.cause, {"bad mac", "alpha"});
  cr_assert_eq(refused.reason, kAuthenticationFailed);
  Outcome<Done> answer = check_answer(proof, make_refuse(refused));
  cr_assert_not(answer.ok());
  assert_names(answer.error().message, {"refused", "authentication failed"});
}

// The client reads the same REFUSE, byte for byte, for an unknown key id
// as for a bad mac; only the agent's cause tells them apart.
Test(auth, unknown_key_id_refused_with_the_bad_mac_reason) {
  KeyRing keys = ring();
  AgentChallenge unknown_challenge = std::move(AgentChallenge::make().value());
  ClientProof unknown = proof_for(unknown_challenge, client_key("gamma", kAlphaSecret));
  AgentRefused unknown_refused = refusal(unknown_challenge, keys, unknown.bytes());
  assert_names(unknown_refused.cause, {"unknown key id gamma"});
  AgentChallenge bad_challenge = std::move(AgentChallenge::make().value());
  ClientProof bad = proof_for(bad_challenge, client_key("alpha", kBetaSecret));
  AgentRefused bad_refused = refusal(bad_challenge, keys, bad.bytes());
  cr_assert(make_refuse(unknown_refused) == make_refuse(bad_refused));
  Outcome<Done> answer = check_answer(unknown, make_refuse(unknown_refused));
  cr_assert_not(answer.ok());
  cr_assert_not(contains(answer.error().message, "unknown"), "%s", answer.error().message.c_str());
}

// A PROOF accepted once is refused against the next connection's
// challenge, and a challenge answers one PROOF.
Test(auth, replayed_proof_refused) {
  KeyRing keys = ring();
  AgentChallenge first = std::move(AgentChallenge::make().value());
  ClientProof proof = proof_for(first, client_key("alpha", kAlphaSecret));
  cr_assert(check_proof(first, keys, proof.bytes()).ok());
  AgentChallenge second = std::move(AgentChallenge::make().value());
  cr_assert(first.nonce() != second.nonce());
  assert_names(refusal(second, keys, proof.bytes()).cause, {"bad mac"});
  assert_names(refusal(first, keys, proof.bytes()).cause, {"answered already"});
  // A challenge moved before its PROOF: the one it moved to answers it,
  // the one it left answers none.
  AgentChallenge left = AgentChallenge::with_nonce(nonce_of(0x44));
  ClientProof later = proof_for(left, client_key("alpha", kAlphaSecret));
  AgentChallenge moved = std::move(left);
  assert_names(refusal(left, keys, later.bytes()).cause, {"answered already"});
  cr_assert(check_proof(moved, keys, later.bytes()).ok());
}

// Every byte of a PROOF, changed alone (two ways each), makes it refused.
Test(auth, proof_changed_in_any_one_byte_refused) {
  KeyRing keys = ring();
  const Nonce nonce = nonce_of(0x33);
  AgentChallenge challenge = AgentChallenge::with_nonce(nonce);
  ClientProof proof = proof_for(challenge, client_key("alpha", kAlphaSecret), bytes_of("a small hello"));
  for (size_t i = 0; i < proof.bytes().size(); ++i) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}}) {
      Bytes changed = proof.bytes();
      changed[i] ^= flip;
      AgentChallenge fresh = AgentChallenge::with_nonce(nonce);
      Outcome<AgentAccepted, AgentRefused> checked = check_proof(fresh, keys, changed);
      cr_assert_not(checked.ok(), "the PROOF with byte %zu changed by 0x%02X was accepted", i, flip);
    }
  }
  AgentChallenge fresh = AgentChallenge::with_nonce(nonce);
  cr_assert(check_proof(fresh, keys, proof.bytes()).ok(), "the PROOF itself is refused");
}

// Without the key no ACCEPT passes: not one with a mac of another key, not
// one of another connection with the same key, not a copy of the PROOF's
// mac.
Test(auth, accept_forged_without_the_key_refused_by_the_client) {
  KeyRing keys = ring();
  AgentChallenge challenge = std::move(AgentChallenge::make().value());
  ClientProof proof = proof_for(challenge, client_key("alpha", kAlphaSecret));
  Outcome<ProofMessage> parsed = parse_proof(proof.bytes());
  cr_assert(parsed.ok());
  Mac other_key =
      hmac(kBetaSecret,
           cat({bytes_of("rig-machine-agent-1"), parsed.value().client_nonce, challenge.nonce(), parsed.value().mac}));
  AgentChallenge other = std::move(AgentChallenge::make().value());
  ClientProof other_proof = proof_for(other, client_key("alpha", kAlphaSecret));
  Outcome<AgentAccepted, AgentRefused> other_accepted = check_proof(other, keys, other_proof.bytes());
  cr_assert(other_accepted.ok());
  for (const Mac &forged : {other_key, other_accepted.value().accept_mac, parsed.value().mac, Mac{}}) {
    Outcome<Done> answer = check_answer(proof, encode_accept({forged}));
    cr_assert_not(answer.ok(), "a forged ACCEPT was accepted");
    assert_names(answer.error().message, {"ACCEPT", "alpha", "does not show"});
  }
}

// Every message cut short, at each length, is refused as truncated with
// its size.
Test(auth, truncated_messages_refused_with_their_sizes) {
  AgentChallenge challenge = AgentChallenge::with_nonce(nonce_of(1));
  ClientProof proof = proof_for(challenge, client_key("alpha", kAlphaSecret), bytes_of("hello"));
  for (const auto &[whole, failure] : one_of_each(challenge, proof)) {
    for (size_t size = 0; size < whole.size(); ++size) {
      Bytes cut(whole.begin(), whole.begin() + static_cast<ptrdiff_t>(size));
      assert_names(failure(cut), {"of " + std::to_string(size) + " bytes is truncated"});
    }
  }
  assert_names(parse_proof(Bytes(proof.bytes().begin(), proof.bytes().end() - 1)).error().message,
               {"mac needs 32 bytes", "31 are left"});
}

// One byte more than its fields, in each message, is refused with the
// count of trailing bytes.
Test(auth, trailing_bytes_refused_with_their_count) {
  AgentChallenge challenge = AgentChallenge::with_nonce(nonce_of(1));
  ClientProof proof = proof_for(challenge, client_key("alpha", kAlphaSecret), bytes_of("hello"));
  auto longer = [](Bytes bytes, size_t more) {
    bytes.resize(bytes.size() + more, 0);
    return bytes;
  };
  assert_names(parse_challenge(longer(challenge.bytes(), 1)).error().message,
               {"CHALLENGE of 39 bytes", "1 trailing byte after its nonce (at byte 38)"});
  assert_names(parse_proof(longer(proof.bytes(), 2)).error().message, {"2 trailing bytes after its mac"});
  assert_names(parse_accept(longer(encode_accept({}), 1)).error().message, {"1 trailing byte after its mac"});
  assert_names(parse_refuse(longer(encode_refuse({"no"}), 3)).error().message, {"3 trailing bytes after its reason"});
  AgentChallenge fresh = AgentChallenge::with_nonce(nonce_of(1));
  assert_names(refusal(fresh, ring(), longer(proof.bytes(), 1)).reason, {"1 trailing byte"});
}

// A PROOF over its most bytes, and a hello length over 64 KiB, refused
// with the numbers; the client will not make a PROOF of a longer hello.
Test(auth, oversized_messages_refused_with_their_sizes) {
  assert_names(parse_proof(Bytes(kProofMax + 1, 0)).error().message,
               {"PROOF of " + std::to_string(kProofMax + 1) + " bytes", std::to_string(kProofMax)});
  Bytes header = encode_proof_signed("alpha", nonce_of(2), {});
  Bytes claims(header.begin(), header.end() - 4);
  for (uint8_t b : {0x00, 0x01, 0x00, 0x01}) claims.push_back(b);  // 65537
  claims.resize(claims.size() + 100, 0);
  assert_names(parse_proof(claims).error().message, {"hello payload of 65537 bytes, more than 65536"});
  AgentChallenge challenge = AgentChallenge::with_nonce(nonce_of(1));
  Outcome<ClientProof> too_long =
      make_proof(challenge.bytes(), client_key("alpha", kAlphaSecret), Bytes(kHelloMax + 1, 0));
  cr_assert_not(too_long.ok());
  assert_names(too_long.error().message, {"65537 bytes", "65536"});
  Bytes long_reason = encode_refuse({std::string(255, 'r')});
  cr_assert(parse_refuse(long_reason).ok());
  cr_assert(make_refuse({"", std::string(300, 'r')}) == long_reason, "REFUSE's reason is not cut to 255 bytes");
}

// The magic and the version of each message, with both numbers.
Test(auth, wrong_magic_and_version_refused_with_both_numbers) {
  AgentChallenge challenge = AgentChallenge::with_nonce(nonce_of(1));
  ClientProof proof = proof_for(challenge, client_key("alpha", kAlphaSecret), bytes_of("hello"));
  for (const auto &[whole, failure] : one_of_each(challenge, proof)) {
    Bytes magic = whole;
    magic[3] = 'B';
    assert_names(failure(magic), {"magic 0x52494742", "expected 0x52494741"});
    Bytes version = whole;
    version[4] = 2;
    assert_names(failure(version), {"version 2, expected 1"});
  }
  AgentChallenge fresh = AgentChallenge::with_nonce(nonce_of(1));
  Bytes version = proof.bytes();
  version[4] = 2;
  AgentRefused refused = refusal(fresh, ring(), version);
  assert_names(refused.cause, {"version 2, expected 1"});
  assert_names(check_answer(proof, make_refuse(refused)).error().message, {"version 2, expected 1"});
}

// A message of another kind where one is expected, named by number.
Test(auth, wrong_kind_refused_naming_both_kinds) {
  AgentChallenge challenge = AgentChallenge::with_nonce(nonce_of(1));
  ClientProof proof = proof_for(challenge, client_key("alpha", kAlphaSecret), bytes_of("hello"));
  assert_names(parse_proof(challenge.bytes()).error().message, {"kind 1 (CHALLENGE), expected 2 (PROOF)"});
  assert_names(parse_challenge(encode_accept({})).error().message, {"kind 3 (ACCEPT), expected 1 (CHALLENGE)"});
  assert_names(check_answer(proof, challenge.bytes()).error().message,
               {"kind 1 (CHALLENGE), expected 3 (ACCEPT) or 4 (REFUSE)"});
  Bytes unknown = encode_accept({});
  unknown[5] = 9;
  assert_names(parse_accept(unknown).error().message, {"kind 9"});
  Outcome<ClientProof> from_accept = make_proof(encode_accept({}), client_key("alpha", kAlphaSecret), {});
  cr_assert_not(from_accept.ok());
}

// A PROOF's key id is a key id; a REFUSE's reason is 1 to 255 printable
// bytes.
Test(auth, malformed_fields_refused) {
  Bytes bad_id = encode_proof({"al/pha", nonce_of(3), {}, Mac{}});
  assert_names(parse_proof(bad_id).error().message, {"byte 0x2F at 2"});
  Bytes empty_id = encode_proof({"", nonce_of(3), {}, Mac{}});
  assert_names(parse_proof(empty_id).error().message, {"key id is empty"});
  assert_names(parse_refuse(encode_refuse({""})).error().message, {"empty reason"});
  assert_names(parse_refuse(encode_refuse({"tab\there"})).error().message, {"printable"});
}
