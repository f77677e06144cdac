// libFuzzer target of the wire messages of the link to other machines
// (net/wire_decode, net/wire_encode): whatever bytes arrive, the decoder
// answers a message or a refusal that says why, reading only within the
// bytes; and a message it answers is in canonical form: it encodes back to
// exactly the input bytes.
#include "wire_decode.hpp"
#include "wire_encode.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  namespace wire = rig::net::wire;
  auto message = wire::decode({data, size});
  if (!message.ok()) {
    if (message.error().message.empty()) std::abort();
    return 0;
  }
  if (wire::encoded_size(message.value()) != size) std::abort();
  auto bytes = wire::encode(message.value());
  if (!bytes.ok() || !std::ranges::equal(bytes.value(), std::span<const uint8_t>(data, size))) std::abort();
  return 0;
}
