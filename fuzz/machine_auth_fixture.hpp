// fuzz_machine_auth's fixed key ring and challenge, for which the seeds in
// fuzz/corpus-machine-auth are made (fuzz/make_machine_auth_corpus.py
// makes them; tests/net's net_test_auth_corpus checks that they still
// are what their names say).
#pragma once

#include "auth_agent.hpp"
#include "auth_client.hpp"
#include "keys.hpp"

#include <algorithm>
#include <span>
#include <string_view>
#include <utility>

namespace rig::net::machine_auth_fixture {

inline constexpr std::string_view kKeyId = "fuzz-key";
inline constexpr std::string_view kSecret = "the fuzz target's key, 32 bytes+";
inline constexpr std::string_view kAgentNonce = "the agent nonce of fuzz targets!";

inline std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}

inline Nonce agent_nonce() {
  Nonce nonce{};
  std::copy_n(kAgentNonce.begin(), nonce.size(), nonce.begin());
  return nonce;
}

inline AgentChallenge challenge() { return AgentChallenge::with_nonce(agent_nonce()); }

inline Secret secret() { return std::move(Secret::of(bytes_of(kSecret)).value()); }

// The ring of the one key kKeyId.
inline KeyRing ring() {
  KeyRing keys;
  (void)keys.add(std::string(kKeyId), secret());
  return keys;
}

inline ClientKey client_key() { return {std::string(kKeyId), secret()}; }

}  // namespace rig::net::machine_auth_fixture
