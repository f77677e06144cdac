// libFuzzer target of the safetensors header parser (io/safetensors_header):
// whatever JSON text a file's header holds, and whatever data size follows
// it, the parser answers tensors that lie end to end from the data's byte 0
// to its end, each spanning its shape's bytes, or throws saying why; it
// never crashes, hangs or trips a sanitizer (rig/safetensors.h).
#include "safetensors_header.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider input(data, size);
  auto data_bytes = input.ConsumeIntegralInRange<int64_t>(0, 1 << 20);
  std::string json = input.ConsumeRemainingBytesAsString();
  try {
    int64_t next = 0;
    for (const rig::io::TensorHeader &t : rig::io::parse_safetensors_header(json, data_bytes)) {
      int64_t elements = 1;
      for (int64_t n : t.shape) elements *= n;
      if (t.begin != next || t.end < t.begin || t.end - t.begin != elements * rig::io::safetensors_dtype_bytes(t.dtype))
        std::abort();
      next = t.end;
    }
    if (next != data_bytes) std::abort();
  } catch (const std::runtime_error &) {
    // A header the format refuses, with the reason.
  }
  return 0;
}
