// The macs of a machine link's authentication, HMAC-SHA256 under the key
// both ends hold, and the nonces that make each one fresh.
#pragma once

#include "auth_messages.hpp"
#include "outcome.hpp"
#include "keys.hpp"

#include <cstdint>
#include <span>

namespace rig::net {

// 32 bytes from OpenSSL's RAND_bytes.
Outcome<Nonce> random_nonce();

// The PROOF's mac: HMAC-SHA256(key, "rig-machine-client-1" || agent_nonce
// || proof_signed), proof_signed being the PROOF's bytes before its mac.
Outcome<Mac> client_mac(std::span<const uint8_t> key, const Nonce &agent_nonce, std::span<const uint8_t> proof_signed);

// The ACCEPT's mac: HMAC-SHA256(key, "rig-machine-agent-1" || client_nonce
// || agent_nonce || proof_mac).
Outcome<Mac> agent_mac(std::span<const uint8_t> key, const Nonce &client_nonce, const Nonce &agent_nonce,
                       const Mac &proof_mac);

// Whether a and b are equal, in a time that does not depend on where
// they differ (CRYPTO_memcmp).
bool same_mac(const Mac &a, const Mac &b);

}  // namespace rig::net
