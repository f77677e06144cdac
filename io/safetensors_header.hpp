// The header of a safetensors file (rig/safetensors.h): its JSON parsed and
// checked against the format, apart from any file, so that a fuzz target
// reaches it alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rig::io {

// The most bytes a header may have: the format's own bound (100 MiB).
constexpr int64_t kSafetensorsHeaderMax = int64_t{100} << 20;

struct TensorHeader {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  int64_t begin = 0;  // data_offsets, from the data's byte 0
  int64_t end = 0;
};

// The tensors the header's JSON text names, in the order of their bytes,
// for data of data_bytes bytes after the header.  Throws
// std::runtime_error saying what is wrong (rig/safetensors.h lists it).
std::vector<TensorHeader> parse_safetensors_header(std::string_view json, int64_t data_bytes);

// The bytes of one element of dtype, or 0 for a dtype the format does not
// name.
int64_t safetensors_dtype_bytes(std::string_view dtype);

}  // namespace rig::io
