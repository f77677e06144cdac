#include "auth_mac.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <initializer_list>
#include <memory>
#include <string_view>

namespace rig::net {
namespace {

constexpr std::string_view kClientLabel = "rig-machine-client-1";
constexpr std::string_view kAgentLabel = "rig-machine-agent-1";

Failure openssl_failure(const char *step) {
  char text[256] = "no reason queued";
  if (unsigned long error = ERR_get_error(); error != 0) ERR_error_string_n(error, text, sizeof text);
  ERR_clear_error();
  return Failure{std::string(step) + " failed: " + text};
}

std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}

// HMAC-SHA256(key, the parts one after the other).
Outcome<Mac> hmac_sha256(std::span<const uint8_t> key, std::initializer_list<std::span<const uint8_t>> parts) {
  std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr), EVP_MAC_free);
  if (!mac) return openssl_failure("EVP_MAC_fetch(HMAC)");
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> context(EVP_MAC_CTX_new(mac.get()), EVP_MAC_CTX_free);
  if (!context) return openssl_failure("EVP_MAC_CTX_new");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (EVP_MAC_init(context.get(), key.data(), key.size(), params) != 1) return openssl_failure("EVP_MAC_init");
  for (std::span<const uint8_t> part : parts)
    if (EVP_MAC_update(context.get(), part.data(), part.size()) != 1) return openssl_failure("EVP_MAC_update");
  Mac out{};
  size_t size = 0;
  if (EVP_MAC_final(context.get(), out.data(), &size, out.size()) != 1) return openssl_failure("EVP_MAC_final");
  if (size != out.size()) return Failure{"HMAC-SHA256 gave " + std::to_string(size) + " bytes, not 32"};
  return out;
}

}  // namespace

Outcome<Nonce> random_nonce() {
  Nonce nonce{};
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1) return openssl_failure("RAND_bytes");
  return nonce;
}

Outcome<Mac> client_mac(std::span<const uint8_t> key, const Nonce &agent_nonce, std::span<const uint8_t> proof_signed) {
  return hmac_sha256(key, {bytes_of(kClientLabel), agent_nonce, proof_signed});
}

Outcome<Mac> agent_mac(std::span<const uint8_t> key, const Nonce &client_nonce, const Nonce &agent_nonce,
                       const Mac &proof_mac) {
  return hmac_sha256(key, {bytes_of(kAgentLabel), client_nonce, agent_nonce, proof_mac});
}

bool same_mac(const Mac &a, const Mac &b) { return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

}  // namespace rig::net
